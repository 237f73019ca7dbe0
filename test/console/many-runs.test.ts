import { describe, expect, it } from 'vitest';
import { MAX_RUN_ROWS, runRows } from '../../console/views.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { runRecord } from '../support/records.js';

/**
 * The console's run list over a ledger holding more runs than the list shows: a filter looks at
 * every run (not only the newest ones), and the list says when it holds only the newest.
 */
describe('the console run list of a ledger with many runs', () => {
  it('finds an old run by its filter, and says that older runs are not listed', async () => {
    const ledger = EmbeddedLedger.open();
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 1, 0, minute)).toISOString();
    // One run of another agent, then more runs of the first than the list holds, all newer.
    await ledger.createRun(runRecord({ runId: 'old', agent: 'other', createdAt: at(0), updatedAt: at(0) }));
    for (let index = 1; index <= MAX_RUN_ROWS; index++) await ledger.createRun(runRecord({ runId: `r${index}`, createdAt: at(index), updatedAt: at(index) }));
    const now = new Date(at(MAX_RUN_ROWS + 1));

    const everything = await runRows(ledger, {}, now);
    expect(everything.runs).toHaveLength(MAX_RUN_ROWS);
    expect(everything.runs[0]!.runId).toBe(`r${MAX_RUN_ROWS}`);
    expect(everything.more).toBe(true);

    const other = await runRows(ledger, { agent: 'other' }, now);
    expect(other.runs.map((row) => row.runId)).toEqual(['old']);
    expect(other.more).toBeUndefined();
  });
});
