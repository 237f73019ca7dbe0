import { describe, expect, it } from 'vitest';
import * as protocol from '../../lambdas/ledger/protocol.js';
import { ConditionalWriteError, type Meta, type Step, type Stored } from '../../lambdas/ledger/protocol.js';
import { callSk } from '../../lambdas/ledger/records.js';
import { approval, at, breaker, call, guardEvent, kill, recovery, run, turn } from '../contract/fixtures.js';

// Each rule of the ledger as the pure transition it is (lambdas/ledger/protocol.ts): the item read
// in, the item to write (or the answer without a write, or the refusal) out. The contract suite
// (test/contract) runs the same rules through every storage engine, concurrency included.

const stored = <T>(record: T, meta: Meta = {}): Stored<T> => ({ record, meta });
const written = <R>(step: Step<R>) => {
  if (!('write' in step)) throw new Error(`expected a write, got ${JSON.stringify(step)}`);
  return step;
};
const kept = <R>(step: Step<R>) => {
  if (!('keep' in step)) throw new Error(`expected no write, got ${JSON.stringify(step)}`);
  return step.keep;
};
const refused = <R>(step: Step<R>) => {
  if (!('fail' in step)) throw new Error(`expected a refusal, got ${JSON.stringify(step)}`);
  return step.fail;
};
const callKey = { pk: 'RUN#r1', sk: callSk(3, 1) };

describe('claiming a tool call', () => {
  it('claims a call that has no record: in flight, first attempt, with a TTL', () => {
    const step = written(protocol.claimCall(undefined, call(), at(0)));
    expect(step.write.record).toMatchObject({ status: 'in_flight', attempts: 1, leaseUntil: at(30).toISOString() });
    expect(step.write.meta.expiresAt).toBe(protocol.expiresAt(at(0)));
    expect(step.answer).toEqual({ claimed: true, record: step.write.record });
  });

  it('refuses while the holder’s lease is live, and hands back the record in the way', () => {
    const held = stored({ ...call(), attempts: 1 });
    expect(kept(protocol.claimCall(held, call({ leaseUntil: at(60).toISOString() }), at(29)))).toEqual({ claimed: false, existing: held.record });
    // The lease ends at its instant: a claim at exactly leaseUntil is still refused.
    expect(kept(protocol.claimCall(held, call(), at(30)))).toMatchObject({ claimed: false });
  });

  it('takes over an in-flight call whose lease expired, counting the attempt and keeping the idempotency key', () => {
    const held = stored({ ...call(), attempts: 1 });
    const step = written(protocol.claimCall(held, call({ leaseUntil: at(90).toISOString(), idempotencyKey: 'r1:3:toolu_003_1' }), at(31)));
    expect(step.write.record).toMatchObject({ status: 'in_flight', attempts: 2, leaseUntil: at(90).toISOString(), idempotencyKey: 'r1:3:toolu_003_1' });
  });

  it('never claims a completed call, however old: the first outcome stands', () => {
    const done = stored(call({ status: 'completed', outcome: 'ok', result: '{"refund":"re_1"}', attempts: 1 }));
    expect(kept(protocol.claimCall(done, call(), at(10_000)))).toEqual({ claimed: false, existing: done.record });
    expect(kept(protocol.recordCall(done, call({ status: 'completed', result: '2' }) as never, at(10_000)))).toMatchObject({ recorded: false });
  });

  it('records a read with its outcome in one write, where a claim would succeed', () => {
    const read = call({ effect: 'read', status: 'completed', outcome: 'ok', result: '[]' }) as ReturnType<typeof call> & { status: 'completed' };
    const step = written(protocol.recordCall(undefined, read, at(0)));
    expect(step.write.record).toMatchObject({ status: 'completed', result: '[]', attempts: 1 });
    const takeover = written(protocol.recordCall(stored({ ...call(), attempts: 2 }), read, at(31)));
    expect(takeover.write.record).toMatchObject({ status: 'completed', attempts: 3 });
  });
});

describe('completing and releasing a tool call', () => {
  const outcome = { outcome: 'ok' as const, result: '{"refund":"re_1"}', latencyMs: 12 };

  it('completes an in-flight call with its outcome and when it was recorded', () => {
    const step = written(protocol.completeCall(stored({ ...call(), attempts: 1 }, { expiresAt: 7 }), callKey, 'r1', outcome, at(5)));
    expect(step.write.record).toMatchObject({ ...outcome, status: 'completed', attempts: 1, recordedAt: at(5).toISOString() });
    // Storage attributes are carried over (the TTL is not renewed by a completion).
    expect(step.write.meta).toEqual({ expiresAt: 7 });
  });

  it('refuses a duplicate completion as a failed condition: the first outcome stands', () => {
    const done = stored(call({ status: 'completed', ...outcome }));
    const error = refused(protocol.completeCall(done, callKey, 'r1', { ...outcome, result: 'other' }, at(6)));
    expect(error).toBeInstanceOf(ConditionalWriteError);
    expect(error).toMatchObject({ name: 'ConditionalCheckFailedException', message: expect.stringContaining('TURN#0003#CALL#01 of run r1 is not in flight') });
  });

  it('refuses to complete a call that was never claimed', () => {
    expect(refused(protocol.completeCall(undefined, callKey, 'r1', outcome, at(6)))).toBeInstanceOf(ConditionalWriteError);
  });

  it('releases a lease at once, so that the retry can claim it without waiting', () => {
    const released = written(protocol.releaseCall(stored({ ...call(), attempts: 1 }), at(3)));
    expect(released.write.record).toMatchObject({ status: 'in_flight', leaseUntil: at(3).toISOString() });
    expect(protocol.claimable(stored(released.write.record as never), at(4))).toBe(true);
    expect(kept(protocol.releaseCall(stored(call({ status: 'completed' })), at(3)))).toBeUndefined();
    expect(kept(protocol.releaseCall(undefined, at(3)))).toBeUndefined();
  });
});

describe('runs', () => {
  it('creates a run once', () => {
    expect(written(protocol.createRun(undefined, run('r1'), at(0))).answer).toBe(true);
    expect(kept(protocol.createRun(stored(run('r1')), run('r1'), at(0)))).toBe(false);
  });

  it('attaches an execution, clearing how the run last ended, and refuses a stale resume', () => {
    const ended = stored(run('r1', { status: 'failed', finishedAt: at(1).toISOString(), stopReason: 'crashed' }));
    const step = written(protocol.attachExecution(ended, 'r1', 'arn:2', at(2), { previousArn: 'arn:1' }));
    expect(step.answer).toMatchObject({ status: 'running', executionArn: 'arn:2', executions: ['arn:1', 'arn:2'] });
    expect(step.answer).not.toHaveProperty('finishedAt');
    // The second of two racing resumes read arn:1, but arn:2 drives the run now.
    expect(kept(protocol.attachExecution(stored(step.answer!), 'r1', 'arn:3', at(2), { previousArn: 'arn:1' }))).toBeUndefined();
    expect(refused(protocol.attachExecution(undefined, 'r1', 'arn:3', at(2), {}))).toBeInstanceOf(ConditionalWriteError);
  });

  it('records a recovery only on the recovery key it read (a second delivery is ignored)', () => {
    const current = stored(run('r1', { recovery: recovery('k1') }));
    expect(written(protocol.recordRecovery(current, recovery('k2'), { executionArn: 'arn:1', previousKey: 'k1' })).write.record).toMatchObject({ recovery: { key: 'k2' } });
    expect(kept(protocol.recordRecovery(current, recovery('k2'), { executionArn: 'arn:1' }))).toBe(false);
    expect(kept(protocol.recordRecovery(current, recovery('k2'), { executionArn: 'arn:0', previousKey: 'k1' }))).toBe(false);
  });

  it('keeps the first kill', () => {
    const killed = written(protocol.killRun(stored(run('r1')), kill('ops')));
    expect(kept(protocol.killRun(stored(killed.write.record as never), kill('someone else')))).toBe(true);
    expect(kept(protocol.killRun(undefined, kill('ops')))).toBe(false);
  });

  it('finishes a run, and refuses a run that does not exist', () => {
    expect(written(protocol.finishRun(stored(run('r1')), 'r1', { status: 'succeeded' }, at(9))).answer).toMatchObject({ status: 'succeeded', finishedAt: at(9).toISOString() });
    expect(refused(protocol.finishRun(undefined, 'r1', { status: 'succeeded' }, at(9)))).toBeInstanceOf(ConditionalWriteError);
  });
});

describe('counting and guards', () => {
  it('counts a step once: a retried step changes nothing', () => {
    const step = written(protocol.countStep(stored(run('r1')), 'turn:1', { steps: 1, inputTokens: 100, outputTokens: 0 }));
    expect(step.write.record).toMatchObject({ steps: 1, inputTokens: 100, outputTokens: 0 });
    expect(step.write.meta.countedSteps).toEqual(['turn:1']);
    expect(kept(protocol.countStep(stored(step.write.record as never, step.write.meta), 'turn:1', { steps: 1 }))).toBe(false);
    expect(kept(protocol.countStep(undefined, 'turn:1', { steps: 1 }))).toBe(false);
  });

  it('records a guard event once per reason', () => {
    const step = written(protocol.recordGuardEvent(stored(run('r1')), guardEvent('80% of steps', 1)));
    expect(step.write.meta.guardReasons).toEqual(['80% of steps']);
    expect(kept(protocol.recordGuardEvent(stored(step.write.record as never, step.write.meta), guardEvent('80% of steps', 2)))).toBeUndefined();
  });

  it('applies only a later budget extension', () => {
    const step = written(protocol.applyBudgetExtension(stored(run('r1')), 'r1', 'steps', 1, 600));
    expect(step.answer).toMatchObject({ config: { maxSteps: 600 }, budgetExtensions: { steps: 1 } });
    expect(kept(protocol.applyBudgetExtension(stored(step.answer), 'r1', 'steps', 1, 900))).toMatchObject({ config: { maxSteps: 600 } });
  });

  it('saves a breaker only over the version it read (version 1 creates it)', () => {
    expect(written(protocol.saveBreaker(undefined, breaker('m', 1))).write.record).toEqual({ kind: 'breaker', ...breaker('m', 1) });
    expect(kept(protocol.saveBreaker(undefined, breaker('m', 2)))).toBe(false);
    expect(kept(protocol.saveBreaker(stored(breaker('m', 2)), breaker('m', 2)))).toBe(false);
    expect(written(protocol.saveBreaker(stored(breaker('m', 2)), breaker('m', 3))).answer).toBe(true);
    expect(protocol.breakerOf({ kind: 'breaker', ...breaker('m', 3) })).toEqual(breaker('m', 3));
  });
});

describe('turns and approvals', () => {
  it('records a turn once and returns the first one to a retry', () => {
    const first = stored(turn(1));
    expect(kept(protocol.recordTurn(first, turn(1, 'another answer'), at(0)))).toBe(first.record);
  });

  it('stores a task token unless the approval was decided', () => {
    expect(protocol.tokenWanted(undefined)).toBe(true);
    expect(protocol.tokenWanted(stored(approval()))).toBe(true);
    expect(protocol.tokenWanted(stored(approval({ status: 'approved' })))).toBe(false);
  });

  it('decides a pending approval once, and hands back the first decision to the second', () => {
    const decision = { status: 'approved' as const, decidedBy: 'alice', decidedVia: 'link' as const, linkId: 'l1' };
    const step = written(protocol.decideApproval(stored(approval()), approval(), decision, at(5)));
    expect(step.answer).toMatchObject({ decided: true, record: { status: 'approved', decidedBy: 'alice', reason: '', usedLinks: ['l1'], decidedAt: at(5).toISOString() } });
    expect(protocol.isPendingApproval(step.write.record)).toBe(false);
    expect(kept(protocol.decideApproval(stored(step.answer.record), approval(), { ...decision, status: 'rejected' }, at(6)))).toMatchObject({ decided: false, record: { status: 'approved' } });
    expect(refused(protocol.decideApproval(undefined, approval(), decision, at(6))).message).toMatch(/no approval for call 3\/1 of run r1/);
  });

  it('records the first of two approvals once, only while pending', () => {
    const first = { by: 'alice', via: 'link' as const, at: at(4).toISOString() };
    const step = written(protocol.recordFirstApproval(stored(approval()), approval(), first, 'l1'));
    expect(step.answer.record).toMatchObject({ status: 'pending', firstApproval: first, usedLinks: ['l1'] });
    expect(kept(protocol.recordFirstApproval(stored(step.answer.record), approval(), { ...first, by: 'bob' }, undefined))).toMatchObject({ recorded: false });
  });

  it('puts a run in the running index while it runs, an approval in the pending index while it is pending', () => {
    expect(protocol.isRunningRun(run('r1') as never)).toBe(true);
    expect(protocol.isRunningRun(run('r1', { status: 'stopped' }) as never)).toBe(false);
    expect(protocol.isPendingApproval(approval() as never)).toBe(true);
  });
});
