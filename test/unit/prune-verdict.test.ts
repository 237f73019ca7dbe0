import { describe, expect, it } from 'vitest';
import { createRunUnlessPruned, pruneRecordProblems, pruneVerdict, type PruneFacts, type PruneRecord } from '../../lambdas/ledger/pruning.js';
import type { RunStatus } from '../../lambdas/records/ledger-records.js';
import { runRecord } from '../support/records.js';

/** The one rule of what `savepoint prune` may remove (protocol.ts), for both ledgers. */
const cutoff = new Date('2026-12-01T00:00:00.000Z');
const facts = (overrides: Partial<PruneFacts> & { forks?: Record<string, RunStatus> } = {}): PruneFacts => ({
  pendingApprovals: overrides.pendingApprovals ?? 0,
  forkStatus: (runId) => overrides.forks?.[runId],
});
const finished = (status: RunStatus, finishedAt = '2026-11-30T02:00:00.000Z', forks?: string[]) =>
  runRecord({ runId: 'r', status, finishedAt, ...(forks && { forks: forks.map((runId) => ({ runId, turn: 2 })) }) });

describe('pruneVerdict', () => {
  it.each([
    ['a succeeded run that finished before the cutoff', finished('succeeded'), facts(), { prune: true }],
    ['a stopped one', finished('stopped'), facts(), { prune: true }],
    ['a killed one', finished('killed'), facts(), { prune: true }],
    ['a running run', runRecord({ status: 'running' }), facts(), { prune: false, reason: 'it is running' }],
    ['a failed run (it can be resumed)', finished('failed'), facts(), { prune: false, reason: 'it is failed' }],
    ['a run that finished at the cutoff', finished('succeeded', cutoff.toISOString()), facts(), { prune: false, reason: `it finished at ${cutoff.toISOString()}` }],
    ['a finished run with no finish time recorded', runRecord({ status: 'succeeded' }), facts(), { prune: false, reason: 'it finished at (unrecorded)' }],
    ['a killed run with an approval still pending', finished('killed'), facts({ pendingApprovals: 1 }), { prune: false, reason: 'it has 1 approval pending' }],
    ['a parent whose fork runs', finished('succeeded', undefined, ['f']), facts({ forks: { f: 'running' } }), { prune: false, reason: 'its fork f is running and reads its records' }],
    ['a parent whose fork failed (resumable)', finished('succeeded', undefined, ['f']), facts({ forks: { f: 'failed' } }), { prune: false, reason: 'its fork f is failed and reads its records' }],
    ['a parent whose fork finished', finished('succeeded', undefined, ['f']), facts({ forks: { f: 'succeeded' } }), { prune: true }],
    ['a parent whose fork is gone (pruned)', finished('succeeded', undefined, ['f']), facts(), { prune: true }],
  ])('%s', (_, run, given, verdict) => {
    expect(pruneVerdict(run, cutoff, given)).toEqual(verdict);
  });
});

describe('pruneRecordProblems', () => {
  const record: PruneRecord = { kind: 'prune', prunedAt: '2026-12-01T03:00:00.000Z', finishedBefore: cutoff.toISOString(), runIds: ['a', 'b'], records: 9, digest: `sha256:${'0'.repeat(64)}` };
  it('finds none in a record that adds up, with none of its runs left', () => {
    expect(pruneRecordProblems(record, [])).toEqual([]);
  });
  it('names counts that do not add up, a digest that is not one, and a run still in the ledger', () => {
    expect(pruneRecordProblems({ ...record, records: 1, digest: 'md5:x' }, ['b'])).toEqual([
      'prune record of 2026-12-01T03:00:00.000Z: 2 runs and 1 records do not add up',
      'prune record of 2026-12-01T03:00:00.000Z: its digest md5:x is not a sha256',
      'prune record of 2026-12-01T03:00:00.000Z: run b is pruned, yet its records are in the ledger',
    ]);
  });
});

describe('createRunUnlessPruned', () => {
  const run = { record: { kind: 'run', runId: 'r1' }, meta: {} };
  const pruned = { record: { kind: 'pruned-run' as const, runId: 'r1', prunedAt: '2026-12-01T00:00:00.000Z' }, meta: {} };

  it('writes a new run with the item that would say its id was pruned checked absent beside it', () => {
    expect(createRunUnlessPruned(undefined, { write: run, answer: true }, 'r1')).toEqual({ writes: [undefined, run], answer: true });
  });

  it('refuses a new run under a pruned id, naming the prune; a run that exists is found as before', () => {
    expect(createRunUnlessPruned(pruned, { write: run, answer: true }, 'r1')).toMatchObject({
      fail: { name: 'Agent.InvalidInput', message: 'runId: run r1 was pruned at 2026-12-01T00:00:00.000Z (savepoint prune): its id names that run for good, and a new run under it would repeat what it did; pass another run id' },
    });
    expect(createRunUnlessPruned(pruned, { keep: false }, 'r1')).toEqual({ keep: false });
  });
});
