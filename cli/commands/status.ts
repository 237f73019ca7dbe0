import type { Command } from 'commander';
import { formatReport } from '../format.js';
import { UsageError } from '../errors.js';
import { DEFAULT_STATE_DIR } from '../state.js';
import { deployed, out, printJson, program, stateDir } from '../program.js';
import { withClient } from '../target.js';

/** `savepoint status <runId>`: a run's report, from the ledger. */
export function registerStatusCommand(program: Command): void {
  program
    .command('status <runId>')
    .description("a run's status and figures, from the ledger")
    .option('--agent <name|path>', "the run's agent, for its own summary (default: the agent named in the run)")
    .option('--json', 'print JSON', false)
    .action((runId: string, options: { json: boolean; agent?: string }) =>
      withClient('status', options.agent, runId, async ({ client, engine, parts }) => {
        const view = await client.status(runId);
        if (!view) throw new UsageError(`no run ${runId} in ${stateDir()}`);
        // A local run recorded as running that no engine of its agent drives: its process died (a
        // SIGKILL, a crash). The ledger cannot tell; the state directory can, and says what to type.
        const local = view.report.status === 'running' && !deployed().stack;
        const engines = parts ? parts.flatMap((part) => (part.engine ? [part.engine] : [])) : engine ? [engine] : [];
        const driven = local ? engines.some((running) => running.agent?.name === view.report.agent) : undefined;
        if (options.json) printJson({ ...view.report, lifecycle: view.lifecycle, ...(driven !== undefined && { driven }) });
        else {
          out(formatReport(view.report));
          if (driven === false) out(undrivenHint(runId, view.report.agent, engine?.agent?.name));
        }
      }),
    );
}

/** What `status` says of a running run no engine drives, with the command that resumes it. */
export function undrivenHint(runId: string, agent: string, engineAgent: string | undefined): string {
  const dir = program.opts<{ stateDir: string }>().stateDir;
  const resume = `savepoint${dir === DEFAULT_STATE_DIR ? '' : ` --state-dir ${dir}`} resume ${runId}`;
  return engineAgent === undefined
    ? `nothing drives this run: no engine runs in ${stateDir()} (the process that ran it stopped). Resume it: ${resume}`
    : `nothing drives this run: the engine running in ${stateDir()} runs agent ${engineAgent}, not ${agent}. Once it ends, resume it: ${resume}`;
}
