import * as z from 'zod';
import { newestFirst, type RunPlace } from '../records/run-order.js';
import { InvalidInputError } from '../shared/errors.js';
import { RunId } from './run-request.js';

/**
 * The order of `GET /v1/runs` and its cursor, one place for both: runs newest first by creation
 * time, then by run id (`newestFirst`, lambdas/records/run-order.ts: the ledgers list runs in it
 * too; a total order, so a cursor names one place in it). A cursor is that place (the last run a
 * page showed), opaque to the caller: every list of runs in this order — one agent's, or several
 * agents' merged — pages from it alike, and a run created after it never moves a page behind it.
 */
export { newestFirst, type RunPlace };

const Cursor = z.tuple([z.string().min(1).max(64), RunId()]);

/** Where a page ended, as the caller passes it back. */
export function encodeCursor(run: RunPlace): string {
  return Buffer.from(JSON.stringify([run.createdAt, run.runId])).toString('base64url');
}

/** The place a cursor names; an InvalidInputError (400) naming `cursor` when it is not one this API gave. */
export function decodeCursor(cursor: string): RunPlace {
  try {
    const [createdAt, runId] = Cursor.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return { createdAt, runId };
  } catch {
    throw new InvalidInputError('cursor: not a cursor this API gave (pass the nextCursor of the page before, unchanged)');
  }
}

/**
 * One page of several lists of runs (one per agent), each a page asked from the same cursor with
 * the same limit: newest first, no run twice across the pages that follow, none skipped.
 *
 * A list's `nextCursor` says it holds more runs, all of them after that place. So the merged page
 * shows only the runs up to the newest such place (the runs after it may have siblings not read
 * yet), at most `limit` of them, and continues after its last run — or, when it was cut by no
 * limit, after that place.
 */
export function mergeRunPages<T extends RunPlace>(pages: readonly { runs: readonly T[]; nextCursor?: string }[], limit: number): { runs: T[]; nextCursor?: string } {
  const places = pages.flatMap((page) => (page.nextCursor === undefined ? [] : [decodeCursor(page.nextCursor)]));
  const boundary = places.sort(newestFirst)[0];
  const shown = pages
    .flatMap((page) => page.runs)
    .filter((run) => boundary === undefined || newestFirst(run, boundary) <= 0)
    .sort(newestFirst);
  const runs = shown.slice(0, limit);
  const next = shown.length > limit ? runs.at(-1) : boundary;
  return { runs, ...(next && { nextCursor: encodeCursor(next) }) };
}
