import type { Command } from 'commander';
import type { RunVerification } from '../../lambdas/ledger/seal.js';
import { UsageError } from '../errors.js';
import { out, printJson } from '../program.js';
import { where, withClient } from '../target.js';

/** `savepoint verify [runId] | --all`: checks sealed ledger records. */
export function registerVerifyCommand(program: Command): void {
  program
    .command('verify [runId]')
    .description("checks a run's sealed ledger records (or, with --all, every run's): exit 0 when all verify, 1 when any fails")
    .option('--all', 'every run in the ledger', false)
    .option('--json', 'print JSON', false)
    .action(async (runId: string | undefined, options: { all: boolean; json: boolean }) => {
      if (Boolean(runId) === options.all) throw new UsageError('verify takes a run id, or --all');
      await withClient('verify', undefined, undefined, async ({ client }) => {
        const reports = await client.verify(runId ?? 'all');
        if (!reports) throw new UsageError(`no run ${runId} in ${where()}`);
        const failed = reports.filter((report) => report.problems.length > 0);
        if (options.json) printJson({ runs: reports, ok: failed.length === 0 });
        else {
          out(reports.length === 0 ? 'no runs' : reports.map(formatVerification).join('\n'));
          if (reports.length > 1) out(`${reports.length - failed.length} of ${reports.length} runs verify`);
        }
        if (failed.length > 0) process.exitCode = 1;
      });
    });
}

/** One run's verification, as a line (and one more per failing record). */
function formatVerification(report: RunVerification): string {
  const checked = `${report.records} records (${report.turns} turns, ${report.calls} calls, ${report.approvals} approvals)`;
  if (report.problems.length === 0) return `${report.runId}: OK, ${checked} verify`;
  return [`${report.runId}: FAILED, ${checked} checked`, ...report.problems.map((problem) => `  ${problem}`)].join('\n');
}
