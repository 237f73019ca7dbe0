import type { Command } from 'commander';
import { z } from 'zod';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { PruneRecord } from '../../lambdas/ledger/protocol.js';
import { CalendarDate } from '../../lambdas/shared/dates.js';
import { parseOrThrow } from '../../lambdas/shared/validation.js';
import { UsageError } from '../errors.js';
import { out, printJson } from '../program.js';
import { where, withClient } from '../target.js';

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
    .option('--json', 'print JSON', false)
    .action(async (options: { finishedBefore: string; json: boolean }) => {
      const finishedBefore = parseOrThrow(FinishedBefore, options.finishedBefore, '--finished-before');
      await withClient('prune', undefined, undefined, async ({ ledger, engine }) => {
        const prunable = retentionOf(ledger);
        if (!prunable) {
          throw new UsageError(
            engine ? `prune: an engine is running on ${where()} (pid ${engine.pid}); stop it first, the engine owns the ledger while it runs` : `prune: the ledger of ${where()} keeps no prune records`,
          );
        }
        const pruned = await prunable.prune(finishedBefore, new Date());
        if (options.json) return printJson({ pruned });
        out(
          pruned.length > 0
            ? pruned.map((record) => `pruned ${record.runIds.length} runs (${record.records} records, ${record.digest}) that finished before ${record.finishedBefore}`).join('\n')
            : `no run finished before ${finishedBefore.toISOString()} that may be pruned: nothing pruned`,
        );
      });
    });
}

/** What `prune` and `verify` use of a ledger that keeps prune records, the same for both engines. */
export interface Retention {
  /** Prunes; the records written (none when no run qualified). */
  prune(finishedBefore: Date, now: Date): Promise<PruneRecord[]>;
  /** The prune records that verify, oldest first (one that does not is named by `verifyPrunes`). */
  prunes(): Promise<PruneRecord[]>;
  /** Problems with the prune records (protocol.ts `pruneRecordProblems`; a record that does not verify, named). */
  verifyPrunes(): Promise<string[]>;
}

/**
 * The ledger's retention, when it keeps prune records: the embedded ledger opened here and the
 * DynamoDB one do; the running engine's embedded ledger, reached over loopback, does not (the
 * engine owns it). Found by shape, so that this module loads no DynamoDB SDK for a local command.
 */
export function retentionOf(ledger: Ledger): Retention | undefined {
  const kept = ledger as Partial<Record<'prune' | 'prunes' | 'verifyPrunes', (...args: never[]) => unknown>>;
  if (typeof kept.prune !== 'function' || typeof kept.prunes !== 'function' || typeof kept.verifyPrunes !== 'function') return undefined;
  const engine = ledger as unknown as {
    prune(finishedBefore: Date, now: Date): PruneRecord | undefined | PruneRecord[] | Promise<PruneRecord[]>;
    prunes(onDamaged?: () => void): PruneRecord[] | Promise<PruneRecord[]>;
    verifyPrunes(): string[] | Promise<string[]>;
  };
  return {
    // The embedded ledger writes one record (or none), the DynamoDB one a record per RUNS_PER_PRUNE_RECORD runs.
    prune: async (finishedBefore, now) => [await engine.prune(finishedBefore, now)].flat().filter((record) => record !== undefined),
    prunes: async () => engine.prunes(() => undefined),
    verifyPrunes: async () => engine.verifyPrunes(),
  };
}

const FinishedBefore = z.union([CalendarDate.transform((day) => new Date(`${day}T00:00:00.000Z`)), z.iso.datetime({ offset: true }).transform((text) => new Date(text))], {
  error: 'expected a day YYYY-MM-DD or an ISO date-time',
});
