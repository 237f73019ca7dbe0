import { describe, expect, it } from 'vitest';
import { formatReport } from '../../cli/format.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { runRecord } from '../support/records.js';

/** The first line of `savepoint run` / `status`'s report names the run's input: whole when short, cut when long. */
async function firstLine(input: unknown): Promise<string> {
  const ledger = EmbeddedLedger.open();
  try {
    await ledger.createRun(runRecord({ runId: 'r1', model: 'sim:savepoint-sim-1', input }));
    return formatReport((await loadReport(ledger, 'r1', new Date()))!).split('\n')[1]!;
  } finally {
    ledger.close();
  }
}

describe("a report's first line", () => {
  it('shows a short input whole', async () => {
    expect(await firstLine({ date: '2026-11-28' })).toBe('run r1 (agent {"date":"2026-11-28"}): running');
  });

  it('cuts a long input after 200 characters, saying its size', async () => {
    const line = await firstLine({ inbox: 'x'.repeat(100_000) });
    expect(line).toBe(`run r1 (agent {"inbox":"${'x'.repeat(190)}… (100012 bytes)): running`);
  });
});
