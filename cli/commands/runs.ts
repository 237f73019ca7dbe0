import type { Command } from 'commander';
import { z } from 'zod';
import { CalendarDate } from '../../lambdas/shared/dates.js';
import { parseOrThrow } from '../../lambdas/shared/validation.js';
import { err, out, printJson } from '../program.js';
import { withClient } from '../target.js';

/** `savepoint runs`: the runs, newest first. */
export function registerRunsCommand(program: Command): void {
  program
    .command('runs')
    .description('the runs, newest first, with status, steps, dollars and the execution that drives each')
    .option('--status <status>', 'only runs with this status (running, succeeded, stopped, killed, failed)')
    .option('--since <YYYY-MM-DD>', 'only runs created on or after this day')
    .option('--limit <n>', 'at most this many runs', '50')
    .option('--json', 'print JSON', false)
    .action((options: { status?: string; since?: string; limit: string; json: boolean }) =>
      withClient('runs', undefined, undefined, async ({ ledger, link }) => {
        const filter = parseOrThrow(RunsFilter, options, 'options');
        // A run whose record fails verification is named, not listed (nothing in it can be trusted).
        const damaged: { runId: string; error: string }[] = [];
        const runs = (await ledger.listRuns(filter.limit, { onDamaged: (runId, error) => damaged.push({ runId, error: error.message }) }))
          .filter((run) => (!filter.status || run.status === filter.status) && (!filter.since || run.createdAt >= filter.since))
          .map((run) => ({ runId: run.runId, agent: run.agent, status: run.status, steps: run.steps, dollars: run.costMicros / 1_000_000, createdAt: run.createdAt, execution: link(run.executionArn) }));
        for (const { runId, error } of damaged) err(`savepoint: run ${runId} is not listed: ${error} (savepoint verify ${runId})`);
        if (options.json) return printJson({ runs, ...(damaged.length > 0 && { damaged }) });
        out(runs.length === 0 ? 'no runs' : runs.map((run) => `${run.runId.padEnd(32)} ${run.status.padEnd(9)} ${String(run.steps).padStart(5)} steps  $${run.dollars.toFixed(4).padStart(9)}  ${run.createdAt}  ${run.execution}`).join('\n'));
      }),
    );
}

const RunsFilter = z.object({
  status: z.enum(['running', 'succeeded', 'stopped', 'killed', 'failed']).optional(),
  since: CalendarDate.optional(),
  limit: z.coerce.number().int().positive().max(1000),
});
