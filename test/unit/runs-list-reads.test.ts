import { describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { createRunsRoutes } from '../../lambdas/runs/runs-api.js';
import { systemClock } from '../../lambdas/shared/ports.js';
import { at, run } from '../contract/fixtures.js';

/**
 * How many run records a page of `GET /v1/runs` reads (each one a record checked, a GetItem on
 * DynamoDB): a first page that nothing filters reads one run past the page, which tells whether
 * more follow; a filtered page, or one after a cursor, reads up to the read limit, as the filter
 * may leave most of them out. The pages are the same either way.
 */
async function readerOf(count: number) {
  const ledger = EmbeddedLedger.open();
  for (let i = 0; i < count; i++) await ledger.createRun(run(`r${String(i).padStart(2, '0')}`, { createdAt: at(i).toISOString() }));
  await ledger.finishRun('r00', { status: 'succeeded' }, at(100));
  const limits: number[] = [];
  // The ledger as the API reaches it, each listing's limit noted.
  const counted = new Proxy(ledger, {
    get: (target, name, receiver) =>
      name === 'listRuns'
        ? (limit: number, options: unknown) => {
            limits.push(limit);
            return target.listRuns(limit, options as never);
          }
        : Reflect.get(target, name, receiver),
  }) as Ledger;
  const routes = createRunsRoutes({ ledger: counted, clock: systemClock, agentOf: async () => undefined, engineHint: 'none' });
  return { routes, limits };
}

describe('a page of runs', () => {
  it('reads one run past the page when nothing filters it, and pages on from there as before', async () => {
    const { routes, limits } = await readerOf(12);
    const first = await routes.list({ limit: '5' });
    expect(first.runs.map((listed) => listed.runId)).toEqual(['r11', 'r10', 'r09', 'r08', 'r07']);
    expect(limits).toEqual([6]);
    const seen = first.runs.map((listed) => listed.runId);
    for (let cursor = first.nextCursor; cursor; ) {
      const page = await routes.list({ limit: '5', cursor });
      seen.push(...page.runs.map((listed) => listed.runId));
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => `r${String(11 - i).padStart(2, '0')}`));
  });

  it('ends at a first page that holds every run, with no cursor', async () => {
    const { routes, limits } = await readerOf(5);
    const page = await routes.list({ limit: '5' });
    expect(page.runs).toHaveLength(5);
    expect(page.nextCursor).toBeUndefined();
    expect(limits).toEqual([6]);
  });

  it('reads up to the read limit when a status or an agent filters the page', async () => {
    const { routes, limits } = await readerOf(12);
    expect((await routes.list({ limit: '5', status: 'succeeded' })).runs.map((listed) => listed.runId)).toEqual(['r00']);
    expect((await routes.list({ limit: '5', agent: 'refund-reconciler' })).runs).toHaveLength(5);
    expect(limits).toEqual([1_000, 1_000]);
  });
});
