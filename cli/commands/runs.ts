import type { Command } from 'commander';
import { z } from 'zod';
import type { RunSummary } from '../../client/index.js';
import { CalendarDate } from '../../lambdas/shared/dates.js';
import { STATUS_FILTERS } from '../../lambdas/runs/lifecycle.js';
import { err, out, printJson } from '../program.js';
import { withRuns } from '../target.js';
import { parseOptions, wholeNumberOption } from '../errors.js';

/** `savepoint runs`: the runs, newest first. */
export function registerRunsCommand(program: Command): void {
  program
    .command('runs')
    .description('the runs, newest first, with status, steps, dollars and the execution that drives each')
    .option('--status <status>', `only runs with this status (${STATUS_FILTERS.join(', ')}: a run's status, or its lifecycle as the client has it)`)
    .option('--since <YYYY-MM-DD>', 'only runs created on or after this day')
    .option('--limit <n>', 'at most this many runs', '50')
    .option('--json', 'print JSON', false)
    .action((options: { status?: string; since?: string; limit: string; json: boolean }) =>
      withRuns('runs', undefined, async ({ client, link }) => {
        const filter = parseOptions(RunsFilter, options);
        // Page by page, newest first, until one run past the limit (it says more are left out) or a run
        // older than --since (the pages are in creation order).
        const listed: RunSummary[] = [];
        const damaged: { runId: string; error: string }[] = [];
        for (let cursor: string | undefined, older = false; listed.length <= filter.limit && !older; ) {
          const page = await client.list({ ...(filter.status && { status: filter.status }), limit: Math.min(PAGE, filter.limit + 1 - listed.length), ...(cursor && { cursor }) });
          damaged.push(...(page.damaged ?? []).filter((run) => !damaged.some((seen) => seen.runId === run.runId)));
          for (const run of page.runs) {
            if (filter.since && run.createdAt < filter.since) older = true;
            else listed.push(run);
          }
          if (!page.nextCursor) break;
          cursor = page.nextCursor;
        }
        const more = listed.length > filter.limit;
        if (more) listed.length = filter.limit;
        const runs = listed.map((run) => ({ runId: run.runId, agent: run.agent, status: run.status, steps: run.steps, dollars: run.dollars, createdAt: run.createdAt, execution: link(run.executionArn) }));
        // A run whose record fails verification is named, not listed (nothing in it can be trusted).
        for (const { runId, error } of damaged) err(`savepoint: run ${runId} is not listed: ${error} (savepoint verify ${runId})`);
        // More runs than --limit shows: said in the JSON (`more`), else on stderr, not among the lines a script reads.
        if (options.json) return printJson({ runs, ...(more && { more: true }), ...(damaged.length > 0 && { damaged }) });
        if (more) err(`savepoint: the newest ${filter.limit} runs shown, and there are more: ${filter.limit < MAX_LIMIT ? `--limit <n> shows more (at most ${MAX_LIMIT})` : '--status or --since narrows them'}`);
        // A running run whose next step waits on a decision says so, last (`savepoint status <runId>` says which).
        const waiting = new Set(listed.filter((run) => run.lifecycle === 'input_required').map((run) => run.runId));
        out(runs.length === 0 ? 'no runs' : runs.map((run) => `${run.runId.padEnd(32)} ${run.status.padEnd(9)} ${String(run.steps).padStart(5)} steps  $${run.dollars.toFixed(4).padStart(9)}  ${run.createdAt}  ${run.execution}${waiting.has(run.runId) ? '  waiting for a person' : ''}`).join('\n'));
      }),
    );
}

/** The runs API's largest page (lambdas/runs/runs-api.ts ListQuery). */
const PAGE = 100;

/** The most runs --limit shows. */
const MAX_LIMIT = 1000;

const RunsFilter = z.object({
  status: z.enum(STATUS_FILTERS).optional(),
  since: CalendarDate.optional(),
  limit: wholeNumberOption(z.number().positive().max(MAX_LIMIT)),
});
