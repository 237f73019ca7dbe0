import { join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import type { PrunePlan } from '../../lambdas/ledger/pruning.js';
import { CalendarDate } from '../../lambdas/shared/dates.js';
import { parseOrThrow } from '../../lambdas/shared/validation.js';
import { UsageError } from '../errors.js';
import { deployed, out, printJson, stateDir } from '../program.js';
import { where, withClient } from '../target.js';
import { counted } from '../../lambdas/shared/text.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { dropExecutionsFromLog } from '../../local/engine/history-log.js';

/**
 * `savepoint prune --finished-before <date>`: removes the records of the runs that finished before
 * `date` (and that protocol.ts `pruneVerdict` lets go: no approval pending, no live fork reading
 * them), leaving a sealed record of what was pruned (run ids, record count, digest) that `savepoint
 * verify --all` checks. On the embedded ledger of a state directory (the engine must not be
 * running: it owns the ledger while it runs), and on the DynamoDB one — a state directory's on
 * dynalite, with or without its engine, or a deployed stack's (`--stack`): there, conditional
 * deletes make a prune safe beside live runs (lambdas/ledger/dynamodb-ledger.ts `prune`). This is
 * what bounds a ledger's size, and the time and memory of the commands that open it whole.
 */
export function registerPruneCommand(program: Command): void {
  program
    .command('prune')
    .description('remove the records of runs that finished (succeeded, stopped, killed) before a date, leaving a sealed summary that verify checks; business-key effects and their recorded results are kept')
    .requiredOption('--finished-before <date>', 'a day (YYYY-MM-DD, midnight UTC) or an ISO date-time: runs that finished before it are pruned')
    .option('--dry-run', 'remove nothing: print the runs it would prune, and those that finished before the date that it keeps, with why', false)
    .option('--json', 'print JSON', false)
    .action(async (options: { finishedBefore: string; dryRun: boolean; json: boolean }) => {
      const finishedBefore = parseOrThrow(FinishedBefore, options.finishedBefore, '--finished-before');
      await withClient('prune', undefined, undefined, async ({ ledger, engine, parts }) => {
        // Each agent's ledger (serve with several agents keeps one per agent), else the one.
        const { pruneRecordsOf, pruningOf } = await import('../../lambdas/ledger/storage-ledger.js');
        const ledgers = (parts ?? [{ ledger }]).map((part) => part.ledger);
        // A plan prunes nothing: it is made while an engine runs too, through the engine's ledger.
        if (options.dryRun) {
          const readers = ledgers.map(pruneRecordsOf);
          if (readers.some((reader) => !reader)) throw new UsageError(`prune: the ledger of ${where()} keeps no prune records`);
          return printPlan(finishedBefore, await Promise.all(readers.map((reader) => reader!.planPrune(finishedBefore))), options.json);
        }
        const prunables = ledgers.map(pruningOf);
        if (prunables.some((prunable) => !prunable)) {
          throw new UsageError(
            engine ? `prune: an engine is running on ${where()} (pid ${engine.pid}); stop it first, the engine owns the ledger while it runs` : `prune: the ledger of ${where()} keeps no prune records`,
          );
        }
        // Each state directory's history.jsonl (the local engine's log of its executions; a deployed
        // stack keeps none here): the lines of the executions of the runs each ledger is about to
        // prune (their run records name them) go once the runs are gone.
        const histories = deployed().stack ? undefined : (parts ?? [{ dir: stateDir(), ledger, engine }]);
        const executions = histories && (await Promise.all(prunables.map(async (prunable, index) => executionsOfRuns(ledgers[index]!, (await prunable!.planPrune(finishedBefore)).prune))));
        const now = new Date();
        const pruned = [];
        let historyLines = 0;
        const historyKept: string[] = [];
        for (const [index, prunable] of prunables.entries()) {
          const records = await prunable!.prune(finishedBefore, now);
          pruned.push(...records);
          const part = histories?.[index];
          if (!part) continue;
          const gone = new Set(records.flatMap((record) => record.runIds).flatMap((runId) => executions![index]!.get(runId) ?? []));
          // An engine that runs (beside a DynamoDB ledger) appends to the file: it is not rewritten under it.
          if (gone.size > 0 && part.engine) historyKept.push(part.dir);
          else historyLines += dropExecutionsFromLog(join(part.dir, 'history.jsonl'), gone);
        }
        if (options.json) return printJson({ pruned, ...(histories && { historyLinesRemoved: historyLines }), ...(historyKept.length > 0 && { historyKept }) });
        out(
          pruned.length > 0
            ? pruned.map((record) => `pruned ${counted(record.runIds.length, 'run')} (${counted(record.records, 'record')}, ${record.digest}) that finished before ${record.finishedBefore}`).join('\n')
            : `no run finished before ${finishedBefore.toISOString()} that may be pruned: nothing pruned`,
        );
        if (historyLines > 0) out(`and ${counted(historyLines, 'line')} of their executions from history.jsonl`);
        for (const dir of historyKept) out(`kept their executions' lines in ${join(dir, 'history.jsonl')}: an engine is running there and appends to it`);
      });
    });
}

/** The names of the executions of each of `runIds` (the last part of their ARNs), as their run records list them. */
async function executionsOfRuns(ledger: Ledger, runIds: readonly string[]): Promise<Map<string, string[]>> {
  const runs = await Promise.all(runIds.map((runId) => ledger.getRun(runId)));
  return new Map(runs.flatMap((run) => (run ? [[run.runId, run.executions.map((arn) => arn.split(':').pop()!)]] : [])));
}

/** `prune --dry-run`: each ledger's plan (serve with several agents keeps one per agent), as one. */
function printPlan(finishedBefore: Date, plans: readonly PrunePlan[], json: boolean): void {
  const prune = plans.flatMap((plan) => plan.prune);
  const kept = plans.flatMap((plan) => plan.kept);
  if (json) return printJson({ dryRun: true, finishedBefore: finishedBefore.toISOString(), prune, kept });
  out(
    prune.length > 0
      ? `would prune ${counted(prune.length, 'run')} that finished before ${finishedBefore.toISOString()}: ${prune.join(', ')} (--dry-run: nothing removed)`
      : `no run finished before ${finishedBefore.toISOString()} that may be pruned: nothing would be pruned (--dry-run)`,
  );
  for (const { runId, reason } of kept) out(`  kept ${runId}: ${reason}`);
}

const FinishedBefore = z.union([CalendarDate.transform((day) => new Date(`${day}T00:00:00.000Z`)), z.iso.datetime({ offset: true }).transform((text) => new Date(text))], {
  error: 'expected a day YYYY-MM-DD or an ISO date-time',
});
