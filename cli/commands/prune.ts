import type { Command } from 'commander';
import { z } from 'zod';
import type { PrunePlan } from '../../lambdas/ledger/pruning.js';
import { CalendarDate } from '../../lambdas/shared/dates.js';
import { parseOrThrow } from '../../lambdas/shared/validation.js';
import { UsageError } from '../errors.js';
import { out, printJson } from '../program.js';
import { where, withClient } from '../target.js';
import { counted } from '../../lambdas/shared/text.js';

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
    .description('remove the records of runs that finished (succeeded, stopped, killed) before a date, leaving a sealed summary that verify checks')
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
        const now = new Date();
        const pruned = [];
        for (const prunable of prunables) pruned.push(...(await prunable!.prune(finishedBefore, now)));
        if (options.json) return printJson({ pruned });
        out(
          pruned.length > 0
            ? pruned.map((record) => `pruned ${counted(record.runIds.length, 'run')} (${counted(record.records, 'record')}, ${record.digest}) that finished before ${record.finishedBefore}`).join('\n')
            : `no run finished before ${finishedBefore.toISOString()} that may be pruned: nothing pruned`,
        );
      });
    });
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
