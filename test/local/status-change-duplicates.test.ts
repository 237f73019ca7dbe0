import { StopExecutionCommand } from '@aws-sdk/client-sfn';
import { afterEach, describe, expect, it } from 'vitest';
import { childRunId } from '../../lambdas/index.js';
import { turnCounts } from '../../lambdas/conversation/turns.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { agentCounterPk } from '../../lambdas/records/fleet.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { createExecutionStopped } from '../../lambdas/steps/execution-stopped.js';
import { createRecoverOnStatusChange } from '../../lambdas/steps/recover-run.js';
import { reserveInFleet } from '../../lambdas/guards/fleet.js';
import { tracingLedger } from '../../lambdas/telemetry/tracing-ledger.js';
import { runSpanId, type SpanRecord } from '../../lambdas/telemetry/spans.js';
import { runRecord } from '../support/records.js';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { startLocalStack, type LedgerKind, type LocalStack, type LocalStackOptions } from '../../local/runtime/local-stack.js';
import { deliveredStatusChanges, settleStatusChanges } from '../../local/services/status-events.js';
import { counterAgent } from '../support/counter-agent.js';
import { flakyModel as outage } from '../support/flaky-model.js';
import { duplicatePayments, startHarness } from '../support/refund-harness.js';
import { waitFor } from '../support/agent-harness.js';
import { delegating, expectKilledTreeCounted, heldCall, killCourseRun, lookingChild, notePrices, treeStack, treeTestCleanup, until } from '../support/tree-agents.js';
import { countingWrites } from '../support/counting-writes.js';

/**
 * EventBridge delivers a rule's event to its target at least once, and Lambda may hand an
 * asynchronously invoked function one event twice, even two copies at once (local/aws/event-delivery.ts).
 * The twin's `statusChangeDeliveries` delivers each "Execution Status Change" that many times;
 * here the handlers that hear them (ExecutionStopped, RecoverRun, a parent's wake by its child's
 * end) are held to the same end as with one delivery: a kill recorded once, its call in flight
 * spent once, every fleet lease given back once, one recovery of a failed execution, a parent
 * woken once and carrying its child's spend once, a stuck run given up once. And a delivery that
 * failed after the run's end (Lambda invokes it again) finishes what the first left: the lease back.
 * Nothing de-duplicates on AWS: the ledger's conditions must.
 */

type Deliveries = NonNullable<LocalStackOptions['statusChangeDeliveries']>;
const DUPLICATES: [string, Deliveries, number][] = [
  ['twice, one after the other', 2, 2],
  ['twice at once', { times: 2, overlapping: true }, 2],
  ['three times at once', { times: 3, overlapping: true }, 3],
];

describe('statusChangeDeliveries', () => {
  it.each<[string, unknown]>([
    ['0', 0],
    ['4', 4],
    ['1.5', 1.5],
    ['"2"', '2'],
    ['{ times: 0 }', { times: 0 }],
    ['{ times: 4, overlapping: true }', { times: 4, overlapping: true }],
  ])('refuses %s, naming the option, before it starts anything', async (_name, value) => {
    await expect(startLocalStack({ agent: counterAgent({ calls: 1, perTurn: 1 }) as never, statusChangeDeliveries: value as Deliveries })).rejects.toThrow(
      /^statusChangeDeliveries must be a whole number from 1 to 3, got /,
    );
  });
});

describe('ExecutionStopped, one stop delivered twice at once', () => {
  it('ends the run once: one copy kills it, the other finds it ended and writes nothing, the trace exported once', async () => {
    // What a copy of a stop meets on AWS, or a child's stop heard by both rules on its state
    // machine (its own stack's and its parent's): two invocations reading the run running at once.
    const exported: SpanRecord[] = [];
    const sink = { content: {}, export: async (spans: readonly SpanRecord[]) => (exported.push(...spans), {}), shutdown: async () => undefined };
    const now = new Date('2026-12-07T10:00:00.000Z');
    const ledger = tracingLedger(EmbeddedLedger.open(), { sink, clock: { now: () => now } });
    const executionArn = 'arn:aws:states:us-east-1:000000000000:execution:agent:stopped-1';
    await ledger.createRun(runRecord({ runId: 'stopped', executionArn }));
    const stop = { 'detail-type': 'Step Functions Execution Status Change', source: 'aws.states', detail: { executionArn, status: 'ABORTED', input: JSON.stringify({ runId: 'stopped' }), error: 'Operator.Stop', cause: 'by hand', stopDate: now.getTime() } };
    const stopped = createExecutionStopped({ ledger, clock: { now: () => now } });

    const answers = await Promise.all([stopped(structuredClone(stop)), stopped(structuredClone(stop))]);
    // One end written: one invoke_agent span for the run, not one per copy.
    expect(exported.filter((span) => span.spanId === runSpanId('stopped'))).toHaveLength(1);
    expect(await ledger.getRun('stopped')).toMatchObject({ status: 'killed', stopReason: expect.stringMatching(/^killed by StopExecution at .*: Operator.Stop: by hand$/) });
    expect(answers.map((answer) => answer.action).sort()).toEqual(['ignored', 'killed']);
  });
});

// ── a kill, its child's call in flight, under a fleet budget ─────────────────────────────────

const { unwatch, track } = treeTestCleanup();
const SYSTEM = 'Look, and look again.';
/** Looks three times, then ends: its second call is the one in flight at the kill. */
const child = lookingChild('dup-kill-child', 3, SYSTEM);
const parent = delegating('dup-kill-parent', 'ask_child', child, { maxDollars: 1, maxTokens: 100_000 });

describe.each<LedgerKind>(['embedded', 'dynalite'])('a parent stopped while its child run is mid-call, each status change delivered more than once, %s ledger', (kind) => {
  it.each(DUPLICATES.filter(([, deliveries]) => kind === 'embedded' || typeof deliveries === 'object'))(
    'delivered %s: both runs killed once, the call in flight spent once, every lease back once, the tree counted once',
    { timeout: 60_000 },
    async (_name, deliveries, times) => {
      const held = heldCall(SYSTEM, 2);
      const writes = countingWrites();
      const stack = track(await treeStack(parent, unwatch, { ledger: kind, prices: notePrices, wrapModel: held.wrap, fleetBudget: { agent: { dollarsPerDay: 40 }, stack: { dollarsPerDay: 50 } }, statusChangeDeliveries: deliveries, decorateLedger: writes.decorate }));
      const runId = `dup-kill-${times}-${typeof deliveries === 'object' ? 'at-once' : 'in-turn'}-${kind}`;
      const childId = childRunId(runId, 1, 'call_1');
      const { executionArn } = stack.engine.startExecution({ name: `${runId}-1`, input: { runId, input: { invoice: 'inv_1' }, config: { maxTokensPerTurn: 256 } } });
      await held.entered;
      const atKill = (await stack.ledger.getRun(childId))!;
      expect({ status: atKill.status, turns: atKill.modelTurns, reserved: (atKill.reservedMicros ?? 0) > 0 }).toEqual({ status: 'running', turns: 1, reserved: true });

      await stack.sfn.send(new StopExecutionCommand({ executionArn, error: 'Operator.Stop', cause: 'wrong invoice' }));
      await killCourseRun(stack, 'dup-kill-child', executionArn, atKill.executionArn);
      const childStack = stack.children.get('dup-kill-child')!;
      held.open();
      await until(() => stack.ledger.getTurn(childId, 2));

      // Every copy was delivered: the parent's stop to its stack's rule; the child's to its own
      // stack's rule and to the parent's rule on the child's state machine.
      expect([deliveredStatusChanges(stack.engine), deliveredStatusChanges(childStack.engine)]).toEqual([times, 2 * times]);

      const [parentRun, childRun] = (await Promise.all([stack.ledger.getRun(runId), stack.ledger.getRun(childId)])) as [RunRecord, RunRecord];
      expect([parentRun.status, childRun.status]).toEqual(['killed', 'killed']);
      expect(parentRun.stopReason).toMatch(/^killed by StopExecution at .*: Operator.Stop: wrong invoice$/);
      expect(childRun.killed).toMatchObject({ by: `parent run ${runId}` });
      // The parent ended once, its lease given back once (its end is written through this stack's
      // ledger; the child's may be by its own stack's, which shares the storage beneath: its end is
      // held to once below, by the handler). One kill in each run's guard events.
      expect({ finishRun: writes.of('finishRun', runId), returnFleetLease: writes.of('returnFleetLease', runId) }).toEqual({ finishRun: 1, returnFleetLease: 1 });
      expect([parentRun, childRun].map((run) => (run.guardEvents ?? []).filter((event) => event.guard === 'kill').length)).toEqual([1, 1]);

      // Nothing after the call in flight.
      expect(await stack.ledger.getTurn(childId, 3)).toBeUndefined();
      // The call in flight spent once, at what it reserved; the parent carrying its own spend and its
      // child's once; the day's counters: no run held, what the tree spent, the child's dollars once.
      await expectKilledTreeCounted(stack, parentRun, childRun, atKill);
    },
  );
});

describe('a stop whose first delivery failed after the run ended, delivered again', () => {
  it.each<LedgerKind>(['embedded', 'dynalite'])('finishes the kill: the lease given back by the second delivery, once (%s ledger)', { timeout: 60_000 }, async (kind) => {
    // The first delivery ends the run, then its lease return is throttled and the invocation
    // fails: Lambda invokes it again (or EventBridge's copy comes). That one reads the run killed.
    const runId = `dup-retry-${kind}`;
    const writes = countingWrites({ failFirstLeaseReturnOf: runId });
    const stack = track(await treeStack(parent, unwatch, { ledger: kind, prices: notePrices, fleetBudget: { agent: { dollarsPerDay: 40 }, stack: { dollarsPerDay: 50 } }, statusChangeDeliveries: 2, decorateLedger: writes.decorate }));
    const { executionArn } = stack.engine.startExecution({ name: `${runId}-1`, input: { runId, input: { invoice: 'inv_1' }, config: { maxTokensPerTurn: 256 } } });
    const childId = childRunId(runId, 1, 'call_1');
    const childArn = await until(async () => (await stack.ledger.getRun(childId))?.executionArn);
    await stack.sfn.send(new StopExecutionCommand({ executionArn, error: 'Operator.Stop', cause: 'wrong invoice' }));
    await killCourseRun(stack, 'dup-kill-child', executionArn, childArn);

    const parentRun = (await stack.ledger.getRun(runId))!;
    expect(parentRun).toMatchObject({ status: 'killed', fleetLease: { returned: true } });
    expect({ finishRun: writes.of('finishRun', runId), returnFleetLease: writes.of('returnFleetLease', runId) }).toEqual({ finishRun: 1, returnFleetLease: 1 });
    expect((parentRun.guardEvents ?? []).filter((event) => event.guard === 'kill')).toHaveLength(1);
    const own = (await stack.ledger.listConversation(runId)).turns.map(turnCounts).reduce((sum, count) => sum + count.costMicros, 0);
    const agentDay = await stack.ledger.getFleetDay(agentCounterPk('dup-kill-parent', parentRun.fleetLease!.day));
    expect({ runs: agentDay?.runs, leased: agentDay?.leased }).toEqual({ runs: 0, leased: own });
  });
});

// ── a child's end wakes its parent ───────────────────────────────────────────────────────────

const waking = delegating('dup-wake-parent', 'ask_child', lookingChild('dup-wake-child', 2), { maxDollars: 1, maxTokens: 100_000 });

/** What a finished parent run and its child came to: compared between one delivery and several. */
async function treeOutcome(stack: LocalStack, runId: string) {
  const childId = childRunId(runId, 1, 'call_1');
  const [parentRun, childRun] = (await Promise.all([stack.ledger.getRun(runId), stack.ledger.getRun(childId)])) as [RunRecord, RunRecord];
  const counters = ({ status, costMicros, inputTokens, outputTokens, modelTurns, steps, reservedMicros, childRunsOpen }: RunRecord) => ({ status, costMicros, inputTokens, outputTokens, modelTurns, steps, reservedMicros: reservedMicros ?? 0, childRunsOpen: childRunsOpen ?? 0 });
  return { parent: counters(parentRun), child: counters(childRun), childSettled: childRun.settledIntoParentAt !== undefined };
}

describe("a child run's end, delivered more than once", () => {
  it.each(DUPLICATES)('delivered %s: wakes its parent once, and the parent ends as with one delivery', { timeout: 60_000 }, async (_name, deliveries, times) => {
    const outcomes = [];
    for (const [index, each] of ([1, deliveries] as Deliveries[]).entries()) {
      const stack = track(await treeStack(waking, unwatch, { prices: notePrices, statusChangeDeliveries: each }));
      const runId = `dup-wake-${index}`;
      const { executionArn } = stack.engine.startExecution({ name: `${runId}-1`, input: { runId, input: { invoice: 'inv_1' } } });
      const ended = await stack.engine.waitForExecution(executionArn);
      expect(ended.status).toBe('SUCCEEDED');
      const childStack = stack.children.get('dup-wake-child')!;
      for (const engine of [childStack.engine, stack.engine]) await settleStatusChanges(engine);
      // The child's success reached the parent's rule `times` times (its own stack's rule hears no success).
      expect(deliveredStatusChanges(childStack.engine)).toBe(index === 0 ? 1 : times);
      // Its wait was woken once: one callback succeeded the waiting task, the copies found its token spent.
      const history = stack.engine.getExecutionHistory(executionArn);
      const woken = history.filter((event) => event.type === 'TaskSucceeded' && JSON.stringify(event).includes('childRunId'));
      expect(woken).toHaveLength(1);
      outcomes.push(await treeOutcome(stack, runId));
      await stack.close();
    }
    expect(outcomes[0]).toMatchObject({ parent: { status: 'succeeded', reservedMicros: 0, childRunsOpen: 0 }, child: { status: 'succeeded' }, childSettled: true });
    expect(outcomes[1]).toEqual(outcomes[0]);
  });
});

// ── a failed execution is recovered ──────────────────────────────────────────────────────────

const unattendedDay = makeSampleDay(7, { plain: 2, already_refunded: 0, mismatch: 1, large: 0 });
const noBreaker = { failures: 1_000, windowMs: 1_000, openMs: 1, probeLeaseMs: 1 };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a failed execution, its end delivered more than once', () => {
  it.each(DUPLICATES)('delivered %s: recovered once, by one execution, the run finished as with one delivery', { timeout: 60_000 }, async (_name, deliveries, times) => {
    let simulated = '';
    // The 4th to the 10th model request fail: seven in a row exhaust CallModel's six retries.
    const modelUrl = await outage(() => simulated, (request) => request >= 4 && request <= 10, (close) => cleanups.push(close));
    // What the twin logs of a delivery whose handler failed (a function error on AWS, its alarm).
    const failedDeliveries: string[] = [];
    const log = (line: string) => void (line.startsWith('execution status change of') && failedDeliveries.push(line));
    const h = await startHarness({ modelUrl, day: unattendedDay, breaker: noBreaker, statusChangeDeliveries: deliveries, log });
    cleanups.push(() => h.stack.close());
    simulated = h.stack.endpoints.model;

    const first = await h.run({ runId: 'dup-outage', input: { date: unattendedDay.date } });
    expect(first.status).toBe('FAILED');
    const recovery = await waitFor(() => h.stack.engine.listExecutions().executions.find((execution) => execution.name === 'dup-outage-recovery-1'));
    expect(await h.stack.engine.waitForExecution(recovery.executionArn)).toMatchObject({ status: 'SUCCEEDED' });
    await settleStatusChanges(h.stack.engine);
    expect(deliveredStatusChanges(h.stack.engine)).toBe(times);
    // A copy that lost the recovery's write to another decided again from what it wrote: no copy failed.
    expect(failedDeliveries).toEqual([]);

    // One recovery: one execution started for it, one recorded; the run as one recovery leaves it.
    expect(h.stack.engine.listExecutions().executions.map((execution) => execution.name).sort()).toEqual(['dup-outage-recovery-1', first.name]);
    const run = (await h.stack.ledger.getRun('dup-outage'))!;
    expect(run).toMatchObject({ status: 'succeeded', executions: [first.executionArn, recovery.executionArn], recovery: { attempts: 1, withoutProgress: 1 } });
    const report = (await loadReport(h.stack.ledger, 'dup-outage', new Date(), refundReconciler))!;
    expect(report).toMatchObject({ inFlight: 0, summary: { issued: 2, flagged: 1 } });
    const { turns, calls } = await h.stack.ledger.listConversation('dup-outage');
    expect(run).toMatchObject({ steps: turns.length + calls.filter((call) => call.status === 'completed').length, modelTurns: turns.length });
    expect(duplicatePayments(h.stack)).toEqual([]);
  });
});

describe('a run given up, the last failure delivered more than once', () => {
  it.each(DUPLICATES)('delivered %s: given up once, with one end written, after the recoveries one delivery makes', { timeout: 60_000 }, async (_name, deliveries) => {
    let simulated = '';
    const modelUrl = await outage(() => simulated, (request) => request >= 2, (close) => cleanups.push(close));
    const writes = countingWrites();
    const h = await startHarness({ modelUrl, day: unattendedDay, breaker: noBreaker, recovery: { maxWithoutProgress: 2 }, statusChangeDeliveries: deliveries, decorateLedger: writes.decorate });
    cleanups.push(() => h.stack.close());
    simulated = h.stack.endpoints.model;

    await h.run({ runId: 'dup-stuck', input: { date: unattendedDay.date } });
    const given = await waitFor(async () => {
      const record = await h.stack.ledger.getRun('dup-stuck');
      return record?.error?.error === 'Agent.Unrecoverable' ? record : undefined;
    });
    await settleStatusChanges(h.stack.engine);
    expect(given).toMatchObject({ status: 'failed', recovery: { attempts: 2, withoutProgress: 2 } });
    expect(given.stopReason).toMatch(/^not recovered: 2 recoveries in a row made no progress \(stuck at step 2\); last: execution dup-stuck-recovery-2 FAILED: Agent.Transient/);
    expect(h.stack.engine.listExecutions().executions.map((execution) => execution.name).sort()).toEqual(['dup-stuck-recovery-1', 'dup-stuck-recovery-2', 'test-1']);
    // Its ends: each execution's failure (RecordFailure), then the give-up, once.
    expect(writes.of('finishRun', 'dup-stuck')).toBe(4);
  });
});

describe('RecoverRun, a give-up whose invocation failed after it, delivered again', () => {
  it('gives the run\'s fleet lease back on the second delivery, once', async () => {
    // A timed-out execution (no RecordFailure returned its lease) of a run stuck past its bound:
    // the first delivery gives it up, then its lease return is throttled and the invocation fails.
    const now = new Date('2026-12-07T10:00:00.000Z');
    const executionArn = 'arn:aws:states:us-east-1:000000000000:execution:agent:stuck-recovery-2';
    const ledger = EmbeddedLedger.open();
    const recovery = { attempts: 2, withoutProgress: 2, atSteps: 2, key: 'arn:earlier@2026-12-07T09:00:00.000Z', reason: 'execution stuck-recovery-1 TIMED_OUT', executionName: 'stuck-recovery-2', at: '2026-12-07T09:00:01.000Z' };
    await ledger.createRun(runRecord({ runId: 'stuck', agent: 'refunds', executionArn, steps: 2, recovery }));
    await reserveInFleet(ledger, { run: (await ledger.getRun('stuck'))!, turn: 3, reservation: { tokens: 1_000, micros: 600_000 }, now, budget: { agent: { dollarsPerDay: 5 } } });
    const writes = countingWrites({ failFirstLeaseReturnOf: 'stuck' });
    const started: string[] = [];
    const recover = createRecoverOnStatusChange({ ledger: writes.decorate(ledger), starter: { start: async (name) => (started.push(name), { executionArn: `arn:${name}` }) }, clock: { now: () => now }, policy: { maxWithoutProgress: 2 } });
    const timedOut = { 'detail-type': 'Step Functions Execution Status Change', source: 'aws.states', detail: { executionArn, status: 'TIMED_OUT', input: JSON.stringify({ runId: 'stuck' }), stopDate: now.getTime() } };

    await expect(recover(structuredClone(timedOut))).rejects.toMatchObject({ name: 'ProvisionedThroughputExceededException' });
    const givenUp = (await ledger.getRun('stuck'))!;
    expect({ status: givenUp.status, error: givenUp.error?.error, returned: givenUp.fleetLease?.returned }).toEqual({ status: 'failed', error: 'Agent.Unrecoverable', returned: undefined });
    expect(await recover(structuredClone(timedOut))).toMatchObject({ action: 'ignored' });

    const run = (await ledger.getRun('stuck'))!;
    expect(run.fleetLease).toMatchObject({ returned: true });
    // The day's counter holds no run, and what the run spent or holds (its call's reservation), no more.
    expect(await ledger.getFleetDay(agentCounterPk('refunds', run.fleetLease!.day))).toMatchObject({ runs: 0, leased: run.costMicros + (run.reservedMicros ?? 0) });
    // Given up once, and never recovered.
    expect({ finishRun: writes.of('finishRun', 'stuck'), started }).toEqual({ finishRun: 1, started: [] });
  });
});

describe('RecoverRun, one failure delivered twice at once', () => {
  it('recovers the run once, and neither copy fails: the one that lost the race decides again and starts the recorded execution, by name', async () => {
    // Both copies read the run before either records its recovery; before, the loser threw
    // Agent.Transient: a function error (Lambda invoked it again), for what is only a duplicate.
    const now = new Date('2026-12-07T10:00:00.000Z');
    const executionArn = 'arn:aws:states:us-east-1:000000000000:execution:agent:failed-1';
    const ledger = EmbeddedLedger.open();
    await ledger.createRun(runRecord({ runId: 'failed', agent: 'refunds', executionArn, steps: 2 }));
    const started: string[] = [];
    const recover = createRecoverOnStatusChange({ ledger, starter: { start: async (name) => (started.push(name), { executionArn: `arn:${name}` }) }, clock: { now: () => now } });
    const failed = { 'detail-type': 'Step Functions Execution Status Change', source: 'aws.states', detail: { executionArn, status: 'FAILED', error: 'Agent.Transient', input: JSON.stringify({ runId: 'failed' }), stopDate: now.getTime() } };

    const answers = await Promise.all([recover(structuredClone(failed)), recover(structuredClone(failed))]);
    expect(answers).toEqual([0, 1].map(() => expect.objectContaining({ action: 'recovered', attempt: 1, executionArn: 'arn:failed-recovery-1' })));
    // Started by name twice: StartExecution answers the second with the first (idempotent).
    expect(started).toEqual(['failed-recovery-1', 'failed-recovery-1']);
    expect((await ledger.getRun('failed'))!.recovery).toMatchObject({ attempts: 1, executionName: 'failed-recovery-1' });
  });
});
