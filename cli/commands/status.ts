import type { Command } from 'commander';
import { formatReport } from '../format.js';
import { UsageError } from '../errors.js';
import { out, printJson, stateDir } from '../program.js';
import { withClient } from '../target.js';

/** `savepoint status <runId>`: a run's report, from the ledger. */
export function registerStatusCommand(program: Command): void {
  program
    .command('status <runId>')
    .description("a run's status and figures, from the ledger")
    .option('--agent <name|path>', "the run's agent, for its own summary (default: the agent named in the run)")
    .option('--json', 'print JSON', false)
    .action((runId: string, options: { json: boolean; agent?: string }) =>
      withClient('status', options.agent, runId, async ({ client }) => {
        const view = await client.status(runId);
        if (!view) throw new UsageError(`no run ${runId} in ${stateDir()}`);
        if (options.json) printJson({ ...view.report, lifecycle: view.lifecycle });
        else out(formatReport(view.report));
      }),
    );
}
