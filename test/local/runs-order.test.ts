import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { runsApiHandler } from '../../lambdas/adapters/runs-http.js';
import { startApprovalApi } from '../../local/services/approval-api.js';
import { run } from '../contract/fixtures.js';
import { manualClock } from '../support/manual-clock.js';

/**
 * Runs created in one millisecond list in one order wherever they are listed: the ledger's
 * (`listRuns`: `savepoint runs`, the console, the watchdog) and `GET /v1/runs`' pages, by run id
 * descending (records/run-order.ts `newestFirst`) — and a page cut inside that millisecond skips
 * none of them, as the API reads the ledger's newest runs to make it.
 */
const closing: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

describe('runs created in one millisecond', () => {
  it('list in the same order through the ledger and GET /v1/runs, page by page, none skipped', async () => {
    const clock = manualClock(Date.parse('2026-12-07T10:00:00.000Z'));
    const ledger = EmbeddedLedger.open();
    closing.push(() => ledger.close());
    const older = clock.now().toISOString();
    await ledger.createRun(run('older', { createdAt: older }));
    clock.advance(1_000);
    // Ids whose order by code units (`run-B` < `run-a`) is not the order by run id the API pages in.
    for (const runId of ['run-B', 'run-a', 'run-D', 'run-c']) await ledger.createRun(run(runId, { createdAt: clock.now().toISOString() }));
    const api = await startApprovalApi(async () => ({ statusCode: 404, body: '{}' }), { runs: runsApiHandler({ ledger, clock, agentOf: async () => undefined, engineHint: 'none' }) });
    closing.push(api.close);

    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const answer = await fetch(`${api.runsUrl}?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(answer.status).toBe(200);
      const page = (await answer.json()) as { runs: { runId: string }[]; nextCursor?: string };
      paged.push(...page.runs.map((listed) => listed.runId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(paged).toEqual(['run-D', 'run-c', 'run-B', 'run-a', 'older']);
    expect((await ledger.listRuns()).map((listed) => listed.runId)).toEqual(paged);
  });
});
