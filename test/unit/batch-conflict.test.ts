import { describe, expect, it } from 'vitest';
import { otherBatchProblem, type BatchExecutionInput } from '../../lambdas/runs/batch.js';

const batch: BatchExecutionInput = {
  batchId: 'b1',
  agent: 'counter',
  runs: [{ runId: 'b1-0', input: { n: 1 } }],
  itemFunction: 'arn:aws:lambda:us-east-1:000000000000:function:item',
  concurrency: 2,
  pollSeconds: 5,
  caller: { id: 'local:alice', via: 'cli' },
  createdAt: '2026-12-05T00:00:00.000Z',
};

describe('a batch posted under an id a batch holds', () => {
  it('is that batch again whoever posts it and when: the same agent, runs and manifest', () => {
    expect(otherBatchProblem(batch, { ...batch, caller: { id: 'local:bob', via: 'cli' }, createdAt: '2026-12-06T00:00:00.000Z' }, true)).toBeUndefined();
    expect(otherBatchProblem(batch, { ...batch, concurrency: 9 }, false)).toBeUndefined();
  });

  it("is another batch for another agent, another item's input, or a concurrency it names", () => {
    expect(otherBatchProblem(batch, { ...batch, agent: 'other' }, false)).toBe('batchId: batch b1 exists for agent counter, not other: post this one under another batchId');
    expect(otherBatchProblem(batch, { ...batch, runs: [{ runId: 'b1-0', input: { n: 2 } }] }, false)).toMatch(/^batchId: batch b1 exists with other items \(1 runs; they differ from items\[0\] on\)/);
    expect(otherBatchProblem(batch, { ...batch, runs: [...batch.runs, { runId: 'b1-1', input: { n: 2 } }] }, false)).toMatch(/differ from items\[1\] on/);
    expect(otherBatchProblem(batch, { ...batch, concurrency: 9 }, true)).toBe('batchId: batch b1 exists with concurrency 2, not 9: a batch\'s concurrency is set when it starts');
  });
});
