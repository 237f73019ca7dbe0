import { describe, expect, it } from 'vitest';
import { pendingWaitMs, uncoveredWaitMs } from '../../lambdas/approvals/waits.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';

/** An approval of run r, turn 1, asked `from` s and decided `to` s after midnight (pending without `to`). */
const approval = (call: number, from: number, to?: number): ApprovalRecord =>
  ({
    kind: 'approval',
    runId: 'r',
    turn: 1,
    call,
    approvalId: `a${call}`,
    toolName: 'pay',
    summary: `pay ${call}`,
    status: to === undefined ? 'pending' : 'approved',
    createdAt: new Date(from * 1000).toISOString(),
    ...(to !== undefined && { decidedAt: new Date(to * 1000).toISOString() }),
  }) as ApprovalRecord;

/** What each approval adds, counted in `order`, and their total: the union of the waits. */
function counted(approvals: ApprovalRecord[], order: number[]): { each: number[]; total: number } {
  const each = order.map((index) => uncoveredWaitMs(approvals[index]!, approvals) / 1000);
  return { each, total: each.reduce((a, b) => a + b, 0) };
}

describe('the time a run waits for people', () => {
  it.each([
    // [waits (from, to), union in seconds]
    ['two side by side, decided 40 s and 100 s after they were asked', [[0, 40], [0, 100]], 100],
    ['one inside another', [[10, 20], [0, 100]], 100],
    ['overlapping in part', [[0, 60], [30, 90]], 90],
    ['one after the other, apart', [[0, 10], [20, 30]], 20],
    ['three, one bridging the others', [[0, 10], [20, 30], [5, 25]], 30],
    ['the same wait twice', [[0, 50], [0, 50]], 50],
  ] as const)('is the union of the waits, not their sum: %s', (_name, waits, union) => {
    const approvals = waits.map(([from, to], index) => approval(index + 1, from, to));
    const orders = waits.length === 2 ? [[0, 1], [1, 0]] : [[0, 1, 2], [2, 1, 0], [1, 2, 0]];
    // Whatever order the decisions are counted in (recovery may count them late), the total is the union.
    for (const order of orders) expect(counted(approvals, order).total).toBe(union);
  });

  it('counts nothing for a pending approval, and ignores pending ones around a decided one', () => {
    const approvals = [approval(1, 0), approval(2, 10, 30)];
    expect(uncoveredWaitMs(approvals[0]!, approvals)).toBe(0);
    expect(uncoveredWaitMs(approvals[1]!, approvals)).toBe(20_000);
  });
});

describe('the time pending approvals have waited so far (what a report shows while a run waits)', () => {
  const at = (seconds: number) => new Date(seconds * 1000);

  it('is the union of the pending waits up to now, less what decided approvals of the run covered', () => {
    expect(pendingWaitMs([approval(1, 10)], at(70))).toBe(60_000);
    // Two pending side by side: their union, not their sum.
    expect(pendingWaitMs([approval(1, 0), approval(2, 30)], at(100))).toBe(100_000);
    // A decided approval counted 0–40 already: the pending one asked at 20 adds 40–100.
    expect(pendingWaitMs([approval(1, 0, 40), approval(2, 20)], at(100))).toBe(60_000);
    expect(pendingWaitMs([approval(1, 0, 40)], at(100))).toBe(0);
  });
});
