import { byCodeUnits } from '../shared/text.js';
import type { RunRecord } from './ledger-records.js';

/** A place in the order of runs: the creation time and id of a run. */
export type RunPlace = Pick<RunRecord, 'createdAt' | 'runId'>;

/**
 * The one order of runs, newest first: by creation time, then by run id, descending. Every list of
 * runs keeps it — the ledgers' (`listRuns`, `listRunsOf`, `listRunningRuns`: `savepoint runs`, the
 * console, the watchdog) and the runs API's pages and cursors (lambdas/runs/run-pages.ts) — so two
 * runs of one millisecond show in the same order everywhere, and the newest `limit` a ledger
 * answers are the ones a page of the API shows.
 *
 * The times compare by their characters (their instants' order, without ICU's collator); run ids,
 * compared only between runs of one millisecond, by localeCompare, as the API has always compared
 * them, so that a cursor it gave before still names the same place.
 */
export function newestFirst(a: RunPlace, b: RunPlace): number {
  return byCodeUnits(b.createdAt, a.createdAt) || b.runId.localeCompare(a.runId);
}
