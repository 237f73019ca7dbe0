import type { Command } from 'commander';
import { Option } from 'commander';
import { engineOptions } from '../options.js';
import { AGENT_HELP, defaultAgent, err, out, stateDir } from '../program.js';
import { UsageError } from '../errors.js';

/** `--agent`, repeated: each occurrence adds one. */
const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** `savepoint serve`: the long-running local engine (cli/serve.ts); `run` stays the one-shot command. */
export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('serve the local engine until stopped: the runs API, the approval API and the console on one loopback port; drives every run it is given to its end and resumes unfinished ones on start')
    .addOption(new Option('--agent <name|path>', `${AGENT_HELP}; repeat it to serve several agents, each with an engine and a ledger of its own (the first in the state directory, the others in agents/<name>/ beneath it)`).argParser(collect))
    .option('--port <port>', 'the loopback port (default: any free port; the address and its credential are written to engine.json in the state directory)')
    .addOption(engineOptions.ledger())
    .addOption(engineOptions.durability())
    .addOption(engineOptions.worldData())
    .addOption(engineOptions.template())
    .addOption(engineOptions.prices())
    .addOption(engineOptions.fleetBudget())
    .addOption(engineOptions.failRate())
    .addOption(engineOptions.seed())
    .addHelpText(
      'after',
      `
The runs API (the same routes as a deployed stack's, IAM-signed there):
  POST /v1/runs {"input", "runId"?, "agent"?, "config"?}   start a run: 202, Location; the same runId answers the same run (agent: required with several)
  GET  /v1/runs/{runId}[?wait=20]                          the run: report, lifecycle, approvals; ?wait long-polls (at most 20 s)
  GET  /v1/runs[?agent=&status=&cursor=&limit=]            newest first; pass nextCursor for the next page (agent: required with several)
  POST /v1/runs/{runId}/cancel {"reason"?}                 a kill recorded with who asked
  POST /v1/batches {"items" | "manifest", "concurrency"?, "batchId"?, "key"?}   one run per item, at most concurrency at once (savepoint batch);
                   a manifest {"bucket": "savepoint-local", "key"} is read from <state dir>/s3/savepoint-local/<key>
  GET  /v1/batches/{batchId}                               the batch's progress: each run's status
Every path starts with the credential: http://127.0.0.1:<port>/<credential>/v1/runs, as engine.json names it.
From an application: import { connect } from 'savepoint/client'; const client = await connect({ stateDir: '.savepoint' }).
SIGTERM (or Ctrl-C) drains and saves; a second serve on the same state directory is refused.`,
    )
    .action(async (options: Record<string, unknown>) => {
      const agents = (options['agent'] as string[] | undefined) ?? (defaultAgent ? [defaultAgent] : []);
      if (agents.length === 0) throw new UsageError('name the agent to serve: --agent <name|path> (or $SAVEPOINT_AGENT)');
      const { serveCommand } = await import('../serve.js');
      await serveCommand({ ...options, agent: agents, stateDir: stateDir() }, { out, err });
      process.exitCode = 0;
    });
}
