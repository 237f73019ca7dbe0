import type { Command } from 'commander';
import { deployed, nextCommand, out, printJson, printReport, stateDir } from '../program.js';
import { noRunError, withRuns } from '../target.js';
import type { Approval } from '../../client/connect.js';

/** `savepoint status <runId>`: a run's report, as the runs API answers it. */
export function registerStatusCommand(program: Command): void {
  program
    .command('status <runId>')
    .description("a run's status and figures, from the ledger")
    .option('--agent <name|path>', "the run's agent, for its own summary (default: the agent named in the run)")
    .option('--json', 'print JSON', false)
    .action((runId: string, options: { json: boolean; agent?: string }) =>
      withRuns('status', options.agent, async ({ client, engines }) => {
        const run = await client.get(runId);
        if (!run) throw await noRunError(runId);
        // A local run recorded as running that no engine of its agent drives: its process died (a
        // SIGKILL, a crash). The ledger cannot tell; the state directory can, and says what to type.
        const local = run.report.status === 'running' && !deployed().stack;
        const driven = local ? engines.some(({ engine }) => engine.agent?.name === run.report.agent) : undefined;
        if (options.json) printJson({ ...run.report, lifecycle: run.lifecycle, ...(driven !== undefined && { driven }) });
        else {
          printReport(run.report);
          // What a running run waits for, and the command that decides it.
          for (const approval of run.report.status === 'running' ? run.approvals : []) out(waitingHint(approval));
          if (driven === false) out(undrivenHint(runId, run.report.agent, engines.find(({ dir }) => dir === stateDir())?.engine.agent?.name));
        }
      }),
    );
}

/** What `status` says of an approval its run waits for: what, until when, and how to decide it. */
export function waitingHint(approval: Pick<Approval, 'approvalId' | 'summary' | 'decideBy'>): string {
  return `waiting for a person: ${approval.summary} — decide by ${approval.decideBy}: ${nextCommand(`approve ${approval.approvalId}`)} (or reject)`;
}

/** What `status` says of a running run no engine drives, with the command that resumes it. */
export function undrivenHint(runId: string, agent: string, engineAgent: string | undefined): string {
  const resume = nextCommand(`resume ${runId}`);
  return engineAgent === undefined
    ? `nothing drives this run: no engine runs in ${stateDir()} (the process that ran it stopped). Resume it: ${resume}`
    : `nothing drives this run: the engine running in ${stateDir()} runs agent ${engineAgent}, not ${agent}. Once it ends, resume it: ${resume}`;
}
