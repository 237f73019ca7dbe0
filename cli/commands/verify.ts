import type { Command } from 'commander';
import type { RunVerification } from '../../lambdas/ledger/seal.js';
import type { PruneRecord, PruneRecords } from '../../lambdas/ledger/pruning.js';
import { UsageError } from '../errors.js';
import { out, printJson } from '../program.js';
import { formatPrune, pruneRecordsIn, where, withClient } from '../target.js';
import { counted } from '../../lambdas/shared/text.js';

/** `savepoint verify [runId] | --all`: checks sealed ledger records. */
export function registerVerifyCommand(program: Command): void {
  program
    .command('verify [runId]')
    .description("checks a run's sealed ledger records (or, with --all, every run's): exit 0 when all verify, 1 when any fails")
    .option('--all', 'every run in the ledger', false)
    .option('--json', 'print JSON', false)
    .action(async (runId: string | undefined, options: { all: boolean; json: boolean }) => {
      if (Boolean(runId) === options.all) throw new UsageError('verify takes a run id, or --all');
      await withClient('verify', undefined, undefined, async ({ client, ledger, parts }) => {
        const { pruneRecordsOf } = await import('../../lambdas/ledger/storage-ledger.js');
        const reports = await client.verify(runId ?? 'all');
        if (!reports) {
          const prune = (await pruneRecordsIn({ ledger, parts })).find((record) => record.runIds.includes(runId!));
          if (!prune) throw new UsageError(`no run ${runId} in ${where()}`);
          return out(`${runId}: pruned, its records removed by ${formatPrune(prune)}`);
        }
        const failed = reports.filter((report) => report.problems.length > 0);
        // What `savepoint prune` removed, from its sealed records: with --all, every run is accounted for,
        // in each agent's ledger (serve with several agents keeps one per agent), also through a running engine's.
        const retentions = options.all ? (parts ?? [{ ledger }]).map((part) => pruneRecordsOf(part.ledger)) : [];
        const pruned = retentions.length > 0 && retentions.every((retention) => retention !== undefined) ? await prunesChecked(retentions) : undefined;
        const ok = failed.length === 0 && (pruned?.problems.length ?? 0) === 0;
        if (options.json) printJson({ runs: reports, ...(pruned && { pruned }), ok });
        else {
          out(reports.length === 0 ? 'no runs' : reports.map(formatVerification).join('\n'));
          if (reports.length > 1) out(`${reports.length - failed.length} of ${reports.length} runs verify`);
          for (const prune of pruned?.records ?? []) out(formatPrune(prune));
          for (const problem of pruned?.problems ?? []) out(`  FAILED: ${problem}`);
        }
        if (!ok) process.exitCode = 1;
      });
    });
}

/** The prune records of the ledgers, and what fails in them. */
async function prunesChecked(retentions: readonly PruneRecords[]): Promise<{ records: PruneRecord[]; problems: string[] }> {
  const each = await Promise.all(retentions.map(async (retention) => ({ records: await retention.prunes(() => undefined), problems: await retention.verifyPrunes() })));
  return { records: each.flatMap((one) => one.records), problems: each.flatMap((one) => one.problems) };
}

/** One run's verification, as a line (and one more per failing record). */
function formatVerification(report: RunVerification): string {
  const checked = `${counted(report.records, 'record')} (${counted(report.turns, 'turn')}, ${counted(report.calls, 'call')}, ${counted(report.approvals, 'approval')})`;
  if (report.problems.length === 0) return `${report.runId}: OK, ${checked} verify`;
  return [`${report.runId}: FAILED, ${checked} checked`, ...report.problems.map((problem) => `  ${problem}`)].join('\n');
}
