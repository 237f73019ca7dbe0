import { describe, expect, it } from 'vitest';
import * as protocol from '../../lambdas/ledger/protocol.js';
import * as approvalProtocol from '../../lambdas/ledger/approval-protocol.js';
import { endExpected, finishRun } from '../../lambdas/ledger/run-end.js';
import { ConditionalWriteError, type Meta, type Step, type Stored } from '../../lambdas/ledger/protocol.js';
import { callSk } from '../../lambdas/records/ledger-records.js';
import { approval, at, breaker, call, guardEvent, holder, kill, recovery, releasedAt, run, turn } from '../contract/fixtures.js';

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
    expect(released.write.record).toMatchObject({ status: 'in_flight' });
    // At the very instant of the release (a standing clock, a retry in the same millisecond).
    expect(protocol.claimable(stored(released.write.record as never), at(3))).toBe(true);
    expect(written(protocol.claimCall(stored(released.write.record as never), call(), at(3))).answer).toMatchObject({ claimed: true });
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
    expect(written(finishRun(stored(run('r1')), 'r1', { status: 'succeeded' }, at(9))).answer).toMatchObject({ status: 'succeeded', finishedAt: at(9).toISOString() });
    expect(refused(finishRun(undefined, 'r1', { status: 'succeeded' }, at(9)))).toBeInstanceOf(ConditionalWriteError);
  });

  it('ends a run only while it is as read, when asked so: a second end decided from the same read (a copy of its event) writes nothing', () => {
    const running = run('r1');
    const asRead = endExpected(running);
    const killed = written(finishRun(stored(running), 'r1', { status: 'killed' }, at(9), { expected: asRead }));
    expect(killed.answer).toMatchObject({ status: 'killed' });
    expect(kept(finishRun(stored(killed.write.record as never, killed.write.meta), 'r1', { status: 'killed' }, at(10), { expected: asRead }))).toBeUndefined();
    // Another execution drives it now: not this caller's to end.
    expect(kept(finishRun(stored(running), 'r1', { status: 'killed' }, at(9), { expected: { ...asRead, executionArn: 'arn:other' } }))).toBeUndefined();
    // A failure by accident given up: the give-up changes its error, so a copy of it finds it changed.
    const failed = run('r1', { status: 'failed', error: { error: 'Agent.Transient', cause: '503' } });
    const unrecoverable = { status: 'failed' as const, error: { error: 'Agent.Unrecoverable', cause: 'stuck' } };
    const given = written(finishRun(stored(failed), 'r1', unrecoverable, at(9), { expected: endExpected(failed) }));
    expect(kept(finishRun(stored(given.write.record as never, given.write.meta), 'r1', unrecoverable, at(10), { expected: endExpected(failed) }))).toBeUndefined();
  });

  it('spends a killed run\'s model call in flight at its reservation, and counts its turn: landing after the end, it counts nothing', () => {
    // Turn 2 reserved (reserve:2), not yet recorded (no turn:2): its call is out.
    const inFlight = stored(run('r1', { costMicros: 70_000, inputTokens: 900, reservedMicros: 115_000, reservedTokens: 800 }), { countedSteps: ['reserve:1', 'turn:1', 'reserve:2'] });
    const killed = written(finishRun(inFlight, 'r1', { status: 'killed', stopReason: 'killed by ops' }, at(9)));
    expect(killed.write.record).toMatchObject({ status: 'killed', costMicros: 185_000, inputTokens: 1_700, reservedMicros: 0, reservedTokens: 0 });
    expect(killed.write.meta.countedSteps).toEqual(['reserve:1', 'turn:1', 'reserve:2', 'turn:2']);
    const late = { stepKey: 'turn:2', deltas: { modelTurns: 1, costMicros: 60_000, inputTokens: 400, outputTokens: 300, reservedMicros: -115_000, reservedTokens: -800 } };
    expect(kept(protocol.countStep(stored(killed.write.record as never, killed.write.meta), late.stepKey, late.deltas))).toBe(false);
    // Any other end leaves the reservation open (a resume's retry of the call settles it), and a run with none in flight is as it was.
    expect(written(finishRun(inFlight, 'r1', { status: 'stopped' }, at(9))).write).toMatchObject({ record: { costMicros: 70_000, reservedMicros: 115_000 }, meta: { countedSteps: ['reserve:1', 'turn:1', 'reserve:2'] } });
    const settled = stored(run('r1', { costMicros: 70_000 }), { countedSteps: ['reserve:1', 'turn:1'] });
    expect(written(finishRun(settled, 'r1', { status: 'killed' }, at(9))).write).toMatchObject({ record: { costMicros: 70_000 }, meta: { countedSteps: ['reserve:1', 'turn:1'] } });
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
    expect(approvalProtocol.tokenWanted(undefined)).toBe(true);
    expect(approvalProtocol.tokenWanted(stored(approval()))).toBe(true);
    expect(approvalProtocol.tokenWanted(stored(approval({ status: 'approved' })))).toBe(false);
  });

  it('decides a pending approval once, and hands back the first decision to the second', () => {
    const decision = { status: 'approved' as const, decidedBy: 'alice', decidedVia: 'link' as const, linkId: 'l1' };
    const step = written(approvalProtocol.decideApproval(stored(approval()), approval(), decision, at(5)));
    expect(step.answer).toMatchObject({ decided: true, record: { status: 'approved', decidedBy: 'alice', reason: '', usedLinks: ['l1'], decidedAt: at(5).toISOString() } });
    expect(protocol.isPendingApproval(step.write.record)).toBe(false);
    expect(kept(approvalProtocol.decideApproval(stored(step.answer.record), approval(), { ...decision, status: 'rejected' }, at(6)))).toMatchObject({ decided: false, record: { status: 'approved' } });
    expect(refused(approvalProtocol.decideApproval(undefined, approval(), decision, at(6))).message).toMatch(/no approval for call 3\/1 of run r1/);
  });

  it('records the first of two approvals once, only while pending', () => {
    const first = { by: 'alice', via: 'link' as const, at: at(4).toISOString() };
    const step = written(approvalProtocol.recordFirstApproval(stored(approval()), approval(), first, 'l1'));
    expect(step.answer.record).toMatchObject({ status: 'pending', firstApproval: first, usedLinks: ['l1'] });
    expect(kept(approvalProtocol.recordFirstApproval(stored(step.answer.record), approval(), { ...first, by: 'bob' }, undefined))).toMatchObject({ recorded: false });
  });

  it('puts a run in the running index while it runs, an approval in the pending index while it is pending', () => {
    expect(protocol.isRunningRun(run('r1') as never)).toBe(true);
    expect(protocol.isRunningRun(run('r1', { status: 'stopped' }) as never)).toBe(false);
    expect(protocol.isPendingApproval(approval() as never)).toBe(true);
  });
});

describe('the settle time of a call whose tool reconciles', () => {
  it('is not taken over until settleMs after its lease ended: reconcile never looks too early', () => {
    const held = stored({ ...call({ settleMs: 50_000 }), attempts: 1 });
    // The lease ended at 30 s; the provider may show a request it received then only at 80 s.
    expect(kept(protocol.claimCall(held, call({ leaseUntil: at(200).toISOString() }), at(79)))).toMatchObject({ claimed: false });
    expect(kept(protocol.claimCall(held, call(), at(80)))).toMatchObject({ claimed: false });
    expect(written(protocol.claimCall(held, call({ leaseUntil: at(200).toISOString(), settleMs: 50_000 }), at(81))).write.record).toMatchObject({ attempts: 2, settleMs: 50_000 });
    expect(protocol.takeoverAfter(held.record)).toBe(at(80).toISOString());
  });

  it('counts from when the request was sent, whatever the lease: the same rule on every engine', () => {
    // Sent at 2 s; its lease (a local engine's 1 s, or renewed for long) ended at 30 s.
    const held = stored({ ...call({ settleMs: 50_000, sentAt: at(2).toISOString() }), attempts: 1 });
    expect(protocol.takeoverAfter(held.record)).toBe(at(52).toISOString());
    expect(kept(protocol.claimCall(held, call(), at(52)))).toMatchObject({ claimed: false });
    const taken = written(protocol.claimCall(held, call({ settleMs: 50_000, sentAt: at(53).toISOString() }), new Date(at(52).getTime() + 1))).write.record;
    // The taker sends anew (its own sentAt) and decides on the earlier send, whose outcome is unknown.
    expect(taken).toMatchObject({ attempts: 2, sentAt: at(53).toISOString(), earlierSend: at(2).toISOString() });
    // A lease longer than the settle time still holds the call: its holder may be alive.
    const live = stored({ ...call({ settleMs: 10_000, sentAt: at(2).toISOString(), leaseUntil: at(90).toISOString() }), attempts: 1 });
    expect(protocol.takeoverAfter(live.record)).toBe(at(90).toISOString());
  });

  it('keeps no send of unknown outcome for an attempt released knowing it did nothing', () => {
    const sent = stored({ ...call({ settleMs: 50_000, sentAt: at(2).toISOString() }), attempts: 1 });
    const unknown = written(protocol.releaseCall(sent, at(5))).write as Stored<never>;
    expect((unknown.record as { sentAt?: string }).sentAt).toBe(at(2).toISOString());
    const refused = written(protocol.releaseCall(sent, at(5), true)).write as Stored<never>;
    expect((refused.record as { sentAt?: string }).sentAt).toBeUndefined();
    // Nothing settling: claimable after the settle time from its release (as a record without a send time), with no earlier send to decide on.
    expect(written(protocol.claimCall(refused, call({ sentAt: at(60).toISOString() }), at(60))).write.record).not.toHaveProperty('earlierSend');
    // A takeover whose reconcile failed sent nothing: the earlier send is still the one of unknown outcome.
    const takeover = stored({ ...call({ settleMs: 50_000, sentAt: at(60).toISOString(), earlierSend: at(2).toISOString() }), attempts: 2 });
    const again = written(protocol.releaseCall(takeover, at(61), true)).write.record as { sentAt?: string; earlierSend?: string };
    expect(again.sentAt).toBe(at(2).toISOString());
    expect(again.earlierSend).toBeUndefined();
  });

  it('counts from the release of a failed attempt, not from its lease', () => {
    const released = written(protocol.releaseCall(stored({ ...call({ settleMs: 50_000 }), attempts: 1 }), at(5))).write;
    expect(protocol.claimable(released as Stored<never>, new Date(at(55).getTime() - 1))).toBe(false);
    expect(protocol.claimable(released as Stored<never>, at(55))).toBe(true);
  });
});

describe('an effect claimed across runs by its business key', () => {
  const other = { runId: 'r2', turn: 5, call: 2 };
  const inFlight = (overrides: Partial<ReturnType<typeof holder>> = {}) => written(protocol.claimEffect(undefined, holder(overrides), at(0))).write as Stored<never>;

  it('claims an effect no run holds: in flight, first attempt, the holder and its arguments recorded', () => {
    const step = written(protocol.claimEffect(undefined, holder(), at(0)));
    expect(step.write.record).toEqual({ kind: 'effect', ...holder(), status: 'in_flight', attempts: 1 });
    expect(step.answer).toEqual({ claimed: true, record: step.write.record });
  });

  it('completed by another run: that run’s recorded result is returned, nothing written', () => {
    const done = written(protocol.completeEffect(inFlight(), holder(), { outcome: 'ok', result: '{"id":"re_1"}', latencyMs: 3 }, at(1))).write as Stored<never>;
    expect(kept(protocol.claimEffect(done, holder(other), at(10_000)))).toMatchObject({ claimed: false, existing: { status: 'completed', runId: 'r1', result: '{"id":"re_1"}' } });
  });

  it('in flight in a live run: refused (the caller waits), never a second holder', () => {
    expect(kept(protocol.claimEffect(inFlight(), holder({ ...other, leaseUntil: at(90).toISOString() }), at(29)))).toMatchObject({ claimed: false, existing: { runId: 'r1', status: 'in_flight' } });
    expect(kept(protocol.claimEffect(inFlight(), holder(other), at(30)))).toMatchObject({ claimed: false });
  });

  it('in flight in a dead run: taken over once the lease (and the settle time) ended, with the holder’s arguments', () => {
    const held = inFlight({ settleMs: 10_000 });
    expect(kept(protocol.claimEffect(held, holder({ ...other, args: { refundRequestId: 'rr_1', amountCents: 999 } }), at(40)))).toMatchObject({ claimed: false });
    const takeover = written(protocol.claimEffect(held, holder({ ...other, args: { refundRequestId: 'rr_1', amountCents: 999 }, leaseUntil: at(100).toISOString() }), at(41)));
    expect(takeover.write.record).toMatchObject({ runId: 'r2', turn: 5, call: 2, attempts: 2, leaseUntil: at(100).toISOString(), args: { amountCents: 100 } });
  });

  it('the holding call’s own retry claims it again at once, as the next attempt', () => {
    expect(written(protocol.claimEffect(inFlight(), holder({ leaseUntil: at(60).toISOString() }), at(10))).write.record).toMatchObject({ runId: 'r1', attempts: 2 });
  });

  it('rejected by a person or refused by the provider: released, not a claim — the next call claims it afresh', () => {
    for (const outcome of ['rejected', 'error'] as const) {
      const released = written(protocol.completeEffect(inFlight(), holder(), { outcome, result: '{}', latencyMs: 0 }, at(1))).write as Stored<never>;
      expect(released.record).toMatchObject({ status: 'released', outcome });
      expect(written(protocol.claimEffect(released, holder(other), at(2))).write.record).toMatchObject({ runId: 'r2', attempts: 1, status: 'in_flight' });
    }
  });

  it('keeps the first outcome: a later completion changes nothing, and only the holder releases it', () => {
    const done = written(protocol.completeEffect(inFlight(), holder(), { outcome: 'ok', result: '1', latencyMs: 0 }, at(1))).write as Stored<never>;
    expect(kept(protocol.completeEffect(done, holder(other), { outcome: 'ok', result: '2', latencyMs: 0 }, at(2)))).toMatchObject({ result: '1' });
    expect(kept(protocol.completeEffect(inFlight(), holder(other), { outcome: 'error', result: '{}', latencyMs: 0 }, at(2)))).toMatchObject({ status: 'in_flight' });
    expect(kept(protocol.releaseEffect(inFlight(), other, at(2)))).toBeUndefined();
    expect(written(protocol.releaseEffect(inFlight(), holder(), at(2))).write.record).toMatchObject({ leaseUntil: releasedAt(at(2)).toISOString() });
    expect(refused(protocol.completeEffect(undefined, holder(), { outcome: 'ok', result: '1', latencyMs: 0 }, at(1)))).toBeInstanceOf(ConditionalWriteError);
  });
});

describe('a call and its effect, claimed and recorded in one write', () => {
  const other = { runId: 'r2', turn: 5, call: 2 };
  const entry = () => call({ effectKey: holder().key });
  const pairWritten = <R>(step: protocol.PairStep<R>) => {
    if (!('writes' in step)) throw new Error(`expected a write, got ${JSON.stringify(step)}`);
    return step;
  };
  const pairKept = <R>(step: protocol.PairStep<R>) => {
    if (!('keep' in step)) throw new Error(`expected no write, got ${JSON.stringify(step)}`);
    return step.keep;
  };
  const asStored = (item: Stored | undefined) => item as Stored<never>;
  const claimedBoth = () => pairWritten(protocol.claimCallEffect(undefined, undefined, entry(), holder(), at(0)));

  it('claims both where each rule claims: the call in flight and its effect in flight, held by the call', () => {
    const step = claimedBoth();
    expect(step.writes[0]?.record).toMatchObject({ status: 'in_flight', attempts: 1, effectKey: holder().key });
    expect(step.writes[1]?.record).toEqual({ kind: 'effect', ...holder(), status: 'in_flight', attempts: 1 });
    expect(step.answer).toEqual({ claimed: true, record: step.writes[0]!.record, effect: step.writes[1]!.record });
  });

  it('the call in the way (completed, or in flight on a live lease): its record, the effect not read into the decision', () => {
    const done = stored(call({ status: 'completed', outcome: 'ok', result: '1', attempts: 1 }));
    expect(pairKept(protocol.claimCallEffect(done, undefined, entry(), holder(), at(0)))).toEqual({ claimed: false, existing: done.record });
    const live = asStored(claimedBoth().writes[0]);
    expect(pairKept(protocol.claimCallEffect(live, undefined, entry(), holder(), at(29)))).toMatchObject({ claimed: false, existing: { status: 'in_flight' } });
  });

  it('completed elsewhere: that run’s recorded result, and the call is not claimed (nothing written)', () => {
    const { writes } = claimedBoth();
    const done = asStored(pairWritten(protocol.completeCallEffect(asStored(writes[0]), asStored(writes[1]), callKey, holder(), { outcome: 'ok', result: '{"id":"re_1"}', latencyMs: 3 }, at(1))).writes[1]);
    expect(pairKept(protocol.claimCallEffect(undefined, done, entry(), holder(other), at(10_000)))).toEqual({ claimed: false, effect: done.record });
  });

  it('in flight in a live run: the holder’s record (the caller waits), nothing written — no claim of the call to release again', () => {
    const effect = asStored(claimedBoth().writes[1]);
    expect(pairKept(protocol.claimCallEffect(undefined, effect, entry(), holder({ ...other, leaseUntil: at(90).toISOString() }), at(30)))).toMatchObject({ claimed: false, effect: { runId: 'r1', status: 'in_flight' } });
  });

  it('in flight in a dead run: both taken over once its lease and settle time ended, with the holder’s arguments', () => {
    const effect = asStored(pairWritten(protocol.claimCallEffect(undefined, undefined, entry(), holder({ settleMs: 10_000 }), at(0))).writes[1]);
    const late = holder({ ...other, args: { refundRequestId: 'rr_1', amountCents: 999 }, leaseUntil: at(100).toISOString() });
    expect(pairKept(protocol.claimCallEffect(undefined, effect, entry(), late, at(40)))).toMatchObject({ claimed: false });
    const takeover = pairWritten(protocol.claimCallEffect(undefined, effect, entry(), late, at(41)));
    expect(takeover.writes[1]?.record).toMatchObject({ runId: 'r2', attempts: 2, args: { amountCents: 100 } });
    expect(takeover.answer).toMatchObject({ claimed: true, effect: { attempts: 2 } });
  });

  it('records the outcome on both: ok completes the effect; a refusal or rejection releases it, and the call keeps its outcome', () => {
    const { writes } = claimedBoth();
    const ok = pairWritten(protocol.completeCallEffect(asStored(writes[0]), asStored(writes[1]), callKey, holder(), { outcome: 'ok', result: '1', latencyMs: 2 }, at(1)));
    expect(ok.writes.map((item) => item?.record['status'])).toEqual(['completed', 'completed']);
    expect(ok.answer).toMatchObject({ status: 'completed', outcome: 'ok', result: '1' });
    expect(ok.answer).not.toHaveProperty('unknown');
    const rejected = pairWritten(protocol.completeCallEffect(asStored(writes[0]), asStored(writes[1]), callKey, holder(), { outcome: 'rejected', result: '{}', latencyMs: 0 }, at(1)));
    expect(rejected.writes.map((item) => item?.record['status'])).toEqual(['completed', 'released']);
    const unknown = pairWritten(protocol.completeCallEffect(asStored(writes[0]), asStored(writes[1]), callKey, holder(), { outcome: 'error', result: '{}', latencyMs: 0, unknown: true }, at(1)));
    expect(unknown.writes[1]?.record).toMatchObject({ status: 'completed', outcome: 'error' });
  });

  it('a completed effect keeps its first outcome: the call is recorded, the effect only checked', () => {
    const { writes } = claimedBoth();
    const done = asStored(pairWritten(protocol.completeCallEffect(asStored(writes[0]), asStored(writes[1]), callKey, holder(), { outcome: 'ok', result: '1', latencyMs: 0 }, at(1))).writes[1]);
    const step = pairWritten(protocol.completeCallEffect(asStored(writes[0]), done, callKey, holder(), { outcome: 'ok', result: '2', latencyMs: 0 }, at(2)));
    expect(step.writes[0]?.record).toMatchObject({ result: '2' });
    expect(step.writes[1]).toBeUndefined();
  });

  it('refuses both when either rule refuses: a call not in flight, or an effect never claimed', () => {
    const { writes } = claimedBoth();
    const done = stored(call({ status: 'completed', outcome: 'ok', result: '1', attempts: 1 }));
    expect('fail' in protocol.completeCallEffect(done, asStored(writes[1]), callKey, holder(), { outcome: 'ok', result: '2', latencyMs: 0 }, at(2))).toBe(true);
    expect('fail' in protocol.completeCallEffect(asStored(writes[0]), undefined, callKey, holder(), { outcome: 'ok', result: '2', latencyMs: 0 }, at(2))).toBe(true);
  });

  it('releases and renews both leases together, each by its own rule (only the holder’s live attempt)', () => {
    const { writes } = claimedBoth();
    const released = pairWritten(protocol.releaseCallEffect(asStored(writes[0]), asStored(writes[1]), holder(), at(5)));
    const ended = releasedAt(at(5)).toISOString();
    expect(released.writes.map((item) => item?.record['leaseUntil'])).toEqual([ended, ended]);
    expect(protocol.claimable(asStored(released.writes[0]) as Stored<never>, at(5))).toBe(true);
    expect(pairWritten(protocol.releaseCallEffect(asStored(writes[0]), asStored(writes[1]), { ...holder(), ...other }, at(5))).writes[1]).toBeUndefined();
    const renewed = pairWritten(protocol.renewCallEffect(asStored(writes[0]), asStored(writes[1]), { ...holder(), attempts: 1 }, 1, at(20), at(60)));
    expect(renewed.answer).toBe(true);
    expect(renewed.writes.map((item) => item?.record['leaseUntil'])).toEqual([at(60).toISOString(), at(60).toISOString()]);
    expect(pairKept(protocol.renewCallEffect(asStored(writes[0]), asStored(writes[1]), { ...holder(), attempts: 1 }, 1, at(31), at(60)))).toBe(false);
  });
});

describe('a step’s record and its count, in one write', () => {
  const count = { stepKey: 'call:3:1', deltas: { steps: 1, toolCalls: 1 } };
  const runItem = (meta: Meta = {}) => stored(run('r1'), meta);
  const itemsWritten = <R>(step: protocol.ItemsStep<R>) => {
    if (!('writes' in step)) throw new Error(`expected a write, got ${JSON.stringify(step)}`);
    return step;
  };
  const read = () => call({ effect: 'read', status: 'completed', outcome: 'ok', result: '[]' }) as ReturnType<typeof call> & { status: 'completed' };

  it('records a read and counts its step: the call, then the run item with the counters added and the key kept', () => {
    const step = itemsWritten(protocol.recordCallCounted(undefined, runItem(), read(), at(0), count));
    expect(step.writes).toHaveLength(2);
    expect(step.writes[0]?.record).toMatchObject({ status: 'completed', result: '[]', attempts: 1 });
    expect(step.writes[1]?.record).toMatchObject({ steps: run('r1').steps + 1, toolCalls: run('r1').toolCalls + 1 });
    expect(step.writes[1]?.meta.countedSteps).toEqual(['call:3:1']);
    expect(step.answer).toEqual({ recorded: true, record: step.writes[0]!.record });
  });

  it('a record in the way: nothing written, nothing counted (a call found recorded is counted on its own)', () => {
    const done = stored(call({ status: 'completed', outcome: 'ok', result: '1', attempts: 1 }));
    expect(kept(protocol.recordCallCounted(done, runItem(), read(), at(0), count) as Step<unknown>)).toEqual({ recorded: false, existing: done.record });
    const live = stored({ ...call(), attempts: 1 });
    expect(kept(protocol.recordCallCounted(live, runItem(), read(), at(29), count) as Step<unknown>)).toMatchObject({ recorded: false, existing: { status: 'in_flight' } });
  });

  it('a step counted already: the record alone, the run item left out (neither written nor checked)', () => {
    const step = itemsWritten(protocol.recordCallCounted(undefined, runItem({ countedSteps: ['call:3:1'] }), read(), at(0), count));
    expect(step.writes[0]?.record).toMatchObject({ status: 'completed' });
    expect(step.writes[1]).toBeNull();
  });

  it('completes a claimed call and counts it; with its effect, all three items; a call not in flight is refused, nothing counted', () => {
    const claimed = stored({ ...call(), attempts: 1 });
    const alone = itemsWritten(protocol.completeCallCounted(claimed, undefined, runItem(), callKey, 'r1', { outcome: 'ok', result: '1', latencyMs: 2 }, at(1), count));
    expect(alone.writes.map((item) => item?.record['kind'])).toEqual(['tool', 'run']);
    expect(alone.answer).toMatchObject({ status: 'completed', outcome: 'ok', result: '1' });
    const both = itemsWritten(protocol.claimCallEffect(undefined, undefined, call({ effectKey: holder().key }), holder(), at(0)) as protocol.ItemsStep<unknown>);
    const [callItem, effectItem] = both.writes as Stored<never>[];
    const three = itemsWritten(protocol.completeCallCounted(callItem, { current: effectItem, holder: holder() }, runItem(), callKey, 'r1', { outcome: 'ok', result: '1', latencyMs: 2 }, at(1), count));
    expect(three.writes.map((item) => item?.record['status'] ?? item?.record['kind'])).toEqual(['completed', 'completed', 'running']);
    expect(three.writes[2]?.record).toMatchObject({ steps: run('r1').steps + 1 });
    const done = stored(call({ status: 'completed', outcome: 'ok', result: '1', attempts: 1 }));
    expect(refused(protocol.completeCallCounted(done, undefined, runItem(), callKey, 'r1', { outcome: 'ok', result: '2', latencyMs: 0 }, at(2), count) as Step<unknown>)).toBeInstanceOf(ConditionalWriteError);
  });

  it('records a turn and settles its count (usage in, reservation out); a turn recorded before comes back, nothing counted', () => {
    const settle = { stepKey: 'turn:3', deltas: { steps: 1, modelTurns: 1, costMicros: 500, reservedMicros: -900 } };
    const reserved = stored({ ...run('r1'), reservedMicros: 900 }, { countedSteps: ['reserve:3'] });
    const step = itemsWritten(protocol.recordTurnCounted(undefined, reserved, turn(3), at(0), settle));
    expect(step.writes[0]?.record).toEqual(turn(3));
    expect(step.writes[1]?.record).toMatchObject({ reservedMicros: 0, steps: run('r1').steps + 1, modelTurns: run('r1').modelTurns + 1 });
    expect(step.writes[1]?.meta.countedSteps).toEqual(['reserve:3', 'turn:3']);
    const first = stored(turn(3, 'An earlier attempt’s answer.'));
    expect(kept(protocol.recordTurnCounted(first, reserved, turn(3), at(1), settle) as Step<unknown>)).toEqual(first.record);
  });
});
