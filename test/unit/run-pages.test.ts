import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, mergeRunPages, newestFirst, type RunPlace } from '../../lambdas/runs/run-pages.js';

/**
 * `GET /v1/runs` without an agent on a serve of several agents: each engine's page from the same
 * cursor, merged (cli/serve-front.ts). Each agent's list here pages as the runs API's does
 * (lambdas/runs/runs-api.ts `list`): a full page continues after its last run, and a page whose
 * read stopped at its read limit continues after the last run read, even when a filter left it out.
 */
type Run = RunPlace & { agent: string; shown: boolean };

function agentPage(runs: readonly Run[], cursor: string | undefined, limit: number, readLimit: number) {
  const after = cursor === undefined ? undefined : decodeCursor(cursor);
  const read = runs.filter((run) => after === undefined || newestFirst(run, after) > 0).sort(newestFirst).slice(0, readLimit);
  const matching = read.filter((run) => run.shown);
  const page = matching.slice(0, limit);
  const last = matching.length > limit ? page.at(-1) : read.length >= readLimit ? read.at(-1) : undefined;
  return { runs: page, ...(last && { nextCursor: encodeCursor(last) }) };
}

/** A small deterministic generator: the same table on every run. */
function random(seed: number) {
  let state = seed;
  return () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
}

describe('mergeRunPages', () => {
  it('pages through every agent’s runs newest first, each run once, whatever the limit, the read limit or the filter', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const next = random(seed);
      const agents = ['a', 'b', 'c'].slice(0, 1 + Math.floor(next() * 3));
      // Creation times collide on purpose (the run id orders them then).
      const runs: Run[] = Array.from({ length: Math.floor(next() * 40) }, (_, index) => ({
        agent: agents[Math.floor(next() * agents.length)]!,
        runId: `run-${String(index).padStart(2, '0')}`,
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, Math.floor(next() * 10))).toISOString(),
        shown: next() < 0.6,
      }));
      const limit = 1 + Math.floor(next() * 5);
      const readLimit = 1 + Math.floor(next() * 8);
      const paged: Run[] = [];
      let cursor: string | undefined;
      for (let pages = 0; ; pages++) {
        expect(pages, `seed ${seed}: pages end`).toBeLessThan(runs.length + 2);
        const merged = mergeRunPages(agents.map((agent) => agentPage(runs.filter((run) => run.agent === agent), cursor, limit, readLimit)), limit);
        expect(merged.runs.length).toBeLessThanOrEqual(limit);
        paged.push(...merged.runs);
        if (!merged.nextCursor) break;
        expect(merged.nextCursor, `seed ${seed}: the cursor moves on`).not.toBe(cursor);
        cursor = merged.nextCursor;
      }
      expect(paged.map((run) => run.runId), `seed ${seed}`).toEqual(runs.filter((run) => run.shown).sort(newestFirst).map((run) => run.runId));
    }
  });

  it('shows no run past the newest place where an agent has more to read', () => {
    const place = (minute: number, runId: string) => ({ createdAt: new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString(), runId });
    const merged = mergeRunPages([{ runs: [place(9, 'a9')], nextCursor: encodeCursor(place(8, 'a8')) }, { runs: [place(7, 'b7'), place(5, 'b5')] }], 5);
    expect(merged.runs.map((run) => run.runId)).toEqual(['a9']);
    expect(decodeCursor(merged.nextCursor!)).toEqual(place(8, 'a8'));
  });

  it('refuses a cursor it did not give, naming the field', () => {
    for (const cursor of ['not-a-cursor', Buffer.from('[1,2]').toString('base64url'), Buffer.from('["2026-01-01T00:00:00.000Z"]').toString('base64url')]) {
      expect(() => decodeCursor(cursor)).toThrow(/^cursor: not a cursor this API gave/);
    }
  });
});
