import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as protocol from '../../lambdas/ledger/protocol.js';
import type { ToolCallRecord, TurnRecord } from '../../lambdas/ledger/records.js';
import { copiedSteps, forkPrefix, forkRunRecord, writeVerdict } from '../../lambdas/runs/fork.js';
import { requestShape, shapeChanges } from '../../lambdas/runs/request-shape.js';
import { call, run, turn } from '../contract/fixtures.js';

// Forks and replay as pure rules: the lineage transition on the parent (ledger protocol), the
// prefix a fork copies, what a fork's write is against the parent's, and the request shape replay names changes by.

const usesTurn = (number: number, uses: number): TurnRecord => ({
  ...turn(number),
  stopReason: 'tool_use',
  content: Array.from({ length: uses }, (_, index) => ({ type: 'tool_use' as const, id: `t${number}_${index}`, name: 'issue_refund', input: {} })),
});
const done = (number: number, index: number, overrides: Partial<ToolCallRecord> = {}): ToolCallRecord => ({ ...call({ turn: number, call: index, status: 'completed', outcome: 'ok', result: '{"ok":true}' }), ...overrides });

describe('recordFork (ledger protocol)', () => {
  it('appends the fork to the parent once, and answers false without a parent', () => {
    const step = protocol.recordFork({ record: run('p0'), meta: {} }, { runId: 'f1', turn: 2 });
    if (!('write' in step)) throw new Error('expected a write');
    expect(step.write.record).toMatchObject({ forks: [{ runId: 'f1', turn: 2 }] });
    expect(protocol.recordFork({ record: step.write.record as never, meta: {} }, { runId: 'f1', turn: 2 })).toEqual({ keep: true });
    expect(protocol.recordFork(undefined, { runId: 'f1', turn: 2 })).toEqual({ keep: false });
  });
});

describe('forkPrefix', () => {
  const parent = { run: run('p0'), turns: [usesTurn(1, 1), usesTurn(2, 2), usesTurn(3, 0)], calls: [done(1, 1), done(2, 1), done(2, 2)] };

  it('copies the turns before the fork point with their calls', () => {
    const prefix = forkPrefix(parent, 3);
    expect(prefix.turns.map((t) => t.turn)).toEqual([1, 2]);
    expect(prefix.calls.map((c) => `${c.turn}:${c.call}`)).toEqual(['1:1', '2:1', '2:2']);
    expect(copiedSteps(prefix).map((step) => step.key)).toEqual(['turn:1', 'turn:2', 'call:1:1', 'call:2:1', 'call:2:2']);
  });

  it('fails when the fork point is past the turn after the last, naming the range', () => {
    expect(() => forkPrefix(parent, 5)).toThrow(/fork\.at: run p0 has 3 turns; fork at 1 to 4/);
  });

  it('fails when a copied turn has a call without a result', () => {
    expect(() => forkPrefix({ ...parent, calls: [done(1, 1), done(2, 1)] }, 3)).toThrow(/turn 2 of run p0 has 1 tool calls without a result; fork at 2 or earlier/);
  });

  it('gives a fresh budget by adding what the copied steps spent to each limit', () => {
    const prefix = forkPrefix(parent, 3);
    const parentRun = run('p0');
    const forked = forkRunRecord(run('f1'), parentRun, { from: 'p0', at: 3, effects: 'reuse', freshBudget: true }, prefix);
    expect(forked.config.maxSteps).toBe(parentRun.config.maxSteps + 5);
    expect(forked.forkedFrom).toEqual({ runId: 'p0', turn: 3, effects: 'reuse' });
    expect(forkRunRecord(run('f1'), parentRun, { from: 'p0', at: 3, effects: 'dry' }, prefix).config).toEqual(parentRun.config);
  });
});

describe('writeVerdict', () => {
  const paid = { ...done(2, 1, { name: 'issue_refund', args: { refundRequestId: 'rr_1', amountCents: 500 } }), businessKey: 'rr_1' };

  it('reuses the parent\'s write with the same tool and arguments', () => {
    expect(writeVerdict({ name: 'issue_refund' }, { amountCents: 500, refundRequestId: 'rr_1' }, undefined, [paid])).toEqual({ kind: 'reuse', parent: paid });
  });

  it('calls a write with other arguments new when the tool has no business key', () => {
    expect(writeVerdict({ name: 'issue_refund' }, { refundRequestId: 'rr_1', amountCents: 900 }, undefined, [paid])).toEqual({ kind: 'new' });
  });

  it('calls the same business key with other arguments a hazard', () => {
    const verdict = writeVerdict({ name: 'issue_refund' }, { refundRequestId: 'rr_1', amountCents: 900 }, 'rr_1', [paid]);
    expect(verdict).toMatchObject({ kind: 'hazard', reason: expect.stringMatching(/same business key rr_1 and other arguments/) });
  });

  it('never reuses a parent\'s write that failed', () => {
    expect(writeVerdict({ name: 'issue_refund' }, paid.args, 'rr_1', [{ ...paid, outcome: 'error' }])).toEqual({ kind: 'new' });
  });
});

describe('request shape', () => {
  const a = { name: 'a', description: 'A', effect: 'read' as const, input: z.object({}), execute: async () => 1 };
  const b = { ...a, name: 'b' };
  it('names a changed system prompt, and a new tool', () => {
    expect(shapeChanges(requestShape({ system: 'one', tools: [a] }), requestShape({ system: 'two', tools: [a, b] }))).toEqual(['the system prompt changed', 'tool b is new']);
    expect(shapeChanges(requestShape({ system: 'one', tools: [a] }), requestShape({ system: 'one', tools: [a] }))).toEqual([]);
  });
});
