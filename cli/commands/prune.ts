import type { Command } from 'commander';
import { z } from 'zod';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { CalendarDate } from '../../lambdas/shared/dates.js';
import { parseOrThrow } from '../../lambdas/shared/validation.js';
import { UsageError } from '../errors.js';
import { out, printJson, stateDir } from '../program.js';
import { openLedger } from '../state.js';

/**
 * `savepoint prune --finished-before <date>`: removes the records of the runs that finished before
 * `date` from the state directory's embedded ledger, leaving a sealed record of what was pruned
 * (run ids, record count, digest) that `savepoint verify --all` checks. A state directory keeps
 * every run otherwise: this is what bounds its size, and the time and memory of the commands that
 * open it whole. The engine must not be running: it owns the ledger while it runs.
 */
export function registerPruneCommand(program: Command): void {
  program
    .command('prune')
    .description('remove the records of runs that finished (succeeded, stopped, killed) before a date, leaving a sealed summary that verify checks')
    .requiredOption('--finished-before <date>', 'a day (YYYY-MM-DD, midnight UTC) or an ISO date-time: runs that finished before it are pruned')
    .option('--json', 'print JSON', false)
    .action(async (options: { finishedBefore: string; json: boolean }) => {
      const finishedBefore = parseOrThrow(FinishedBefore, options.finishedBefore, '--finished-before');
      const opened = await openLedger(stateDir(), 'prune');
      try {
        if (opened.engine) throw new UsageError(`prune: an engine is running on ${stateDir()} (pid ${opened.engine.pid}); stop it first, the engine owns the ledger while it runs`);
        if (!(opened.ledger instanceof EmbeddedLedger)) throw new UsageError('prune: only the embedded ledger can be pruned (this state directory keeps a DynamoDB ledger)');
        const pruned = opened.ledger.prune(finishedBefore, new Date());
        if (options.json) return printJson({ pruned: pruned ?? null });
        out(
          pruned
            ? `pruned ${pruned.runIds.length} runs (${pruned.records} records, ${pruned.digest}) that finished before ${pruned.finishedBefore}`
            : `no run finished before ${finishedBefore.toISOString()}: nothing pruned`,
        );
      } finally {
        await opened.close();
      }
    });
}

const FinishedBefore = z.union([CalendarDate.transform((day) => new Date(`${day}T00:00:00.000Z`)), z.iso.datetime({ offset: true }).transform((text) => new Date(text))], {
  error: 'expected a day YYYY-MM-DD or an ISO date-time',
});
