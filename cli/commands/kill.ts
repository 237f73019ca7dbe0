import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import { deployed, out, stateDir } from '../program.js';
import { noRunError, servingEngine, withClient } from '../target.js';
import { counted } from '../../lambdas/shared/text.js';

/** `savepoint kill [runId] | --all [--lift]`: a run, or every run, stops before its next step. */
export function registerKillCommand(program: Command): void {
  program
    .command('kill [runId]')
    .description('stop a run (or, with --all, every run) before its next step; nothing the model says undoes it')
    .option('--all', 'the global kill switch: every run stops before its next step', false)
    .option('--lift', 'with --all: lift the global kill switch', false)
    .option('--reason <text>', 'why, recorded with the kill', '')
    .action(async (runId: string | undefined, options: { all: boolean; lift: boolean; reason: string }) => {
      if (Boolean(runId) === options.all) throw new UsageError('kill takes a run id, or --all');
      // Without --all, --lift would be dropped and `kill --lift <runId>` kill the run it meant to spare.
      if (options.lift && !options.all) throw new UsageError('--lift: only with --all (`kill --all --lift` lifts the global kill switch); a killed run stays killed');
      const [{ KillReason }, { localUser }] = await Promise.all([import('../../lambdas/runs/run-request.js'), import('../../local/services/approval-api.js')]);
      if (!KillReason().safeParse(options.reason).success) throw new UsageError(`--reason: at most 500 characters (got ${options.reason.length})`);
      // A run serve drives is cancelled through its runs API, which records who asked (and stops a run waiting for a person at once).
      const serving = runId && !deployed().stack ? await servingEngine(stateDir()) : undefined;
      if (serving) {
        const run = await serving.client.get(runId!);
        if (!run) throw await noRunError(runId!);
        await serving.client.cancel(runId!, { reason: options.reason });
        return out(`run ${runId}: killed; it stops before its next step`);
      }
      await withClient('kill', undefined, runId, async ({ client, ledger, parts }) => {
        if (options.all) {
          if (options.lift) {
            await ledger.setGlobalKill(undefined);
            return out('global kill switch lifted');
          }
          const { killEveryRun } = await import('../../client/kill-all.js');
          const waiting = await killEveryRun(ledger, client, { by: localUser(), at: new Date().toISOString(), reason: options.reason });
          return out(`global kill switch on: every run stops before its next step${waiting.length > 0 ? `; ${counted(waiting.length, 'run')} waiting for a person stopped now (${waiting.join(', ')})` : ''}`);
        }
        if (!(await ledger.getRun(runId!))) throw await noRunError(runId!, { ledger, parts });
        await client.cancel(runId!, { by: localUser(), reason: options.reason });
        out(`run ${runId}: killed; it stops before its next step`);
      });
    });
}
