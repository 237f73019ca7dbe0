import { describe, expect, it } from 'vitest';
import { formatReport } from '../../cli/format.js';
import { counted } from '../../lambdas/shared/text.js';
import { formatReplay } from '../../cli/commands/replay.js';
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

describe('counts in reports', () => {
  it('name one of a thing in the singular', () => {
    expect([0, 1, 2].map((count) => counted(count, 'tool call'))).toEqual(['0 tool calls', '1 tool call', '2 tool calls']);
    const replay = formatReplay({ runId: 'r1', identical: true, answered: { turns: 3, toolCalls: 1, approvals: 1 }, live: { model: 0, tools: 0 }, wallMs: 20, setupMs: 2, recordedWallMs: 120 } as Parameters<typeof formatReplay>[0]);
    expect(replay).toBe('r1: identical (3 model turns, 1 tool call and 1 approval answered from the ledger; 0 live calls; replay 20 ms (2 ms of it setting up), the run 120 ms)');
  });
});
