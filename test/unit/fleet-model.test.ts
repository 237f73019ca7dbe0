import { describe, expect, it } from 'vitest';
import { lambdaRetryOf, planOf, runFleetModel, sustainedStarts, type RunPlan } from '../../bench/fleet-model.js';
import type { HistoryEvent } from '../../local/engine/local-engine.js';
import { seededRandom } from '../../sim/random.js';

const RETRY = { intervalSeconds: 2, backoffRate: 2, maxDelaySeconds: 60, maxAttempts: 8 };
const fast = { median: 10, p95: 20, max: 50 };
const turn: RunPlan = { phases: [[{ state: 'CallModel', model: true }], [{ state: 'CallTool', model: false }, { state: 'CallTool', model: false }]], ledgerCallsPerInvocation: 2, stepCalls: {} };
const model = (options: Partial<Parameters<typeof runFleetModel>[0]>) =>
  runFleetModel({ runs: 10, offered: 100, plan: turn, lambdaRetry: RETRY, random: seededRandom(1), modelLatency: fast, ledgerLatency: fast, ...options });

describe('the fleet model (bench/fleet-model.ts)', () => {
  it("plans a run from its history: each Task in order, a Map's Tasks side by side", () => {
    let id = 0;
    const event = (type: string, name?: string): HistoryEvent => ({ id: ++id, previousEventId: id - 1, timestamp: new Date(0), type, ...(name && { stateEnteredEventDetails: { name, input: '{}', inputDetails: { truncated: false } } }) });
    const history = [event('ExecutionStarted'), event('TaskStateEntered', 'CallModel'), event('TaskScheduled'), event('MapStateEntered', 'ToolCalls'), event('TaskStateEntered', 'CallTool'), event('TaskScheduled'), event('TaskStateEntered', 'CallTool'), event('TaskScheduled'), event('MapStateExited'), event('TaskStateEntered', 'BudgetCheck'), event('TaskScheduled')];
    expect(planOf([history], 3, { StartExecution: 1 }).phases).toEqual([[{ state: 'CallModel', model: true }], [{ state: 'CallTool', model: false }, { state: 'CallTool', model: false }], [{ state: 'BudgetCheck', model: false }]]);
  });

  it('waits for no model on a CallModel that only decided (the run\'s end: no turn in its output)', () => {
    let id = 0;
    const event = (type: string, extra: Partial<HistoryEvent> = {}): HistoryEvent => ({ id: ++id, previousEventId: id - 1, timestamp: new Date(0), type, ...extra });
    const entered = (name: string) => event('TaskStateEntered', { stateEnteredEventDetails: { name, input: '{}', inputDetails: { truncated: false } } });
    const succeeded = (payload: object) => event('TaskSucceeded', { taskSucceededEventDetails: { output: JSON.stringify({ Payload: payload }) } } as Partial<HistoryEvent>);
    const history = [event('ExecutionStarted'), entered('CallModel'), event('TaskScheduled'), event('TaskStarted'), succeeded({ continue: true, turn: 1 }), entered('CallModel'), event('TaskScheduled'), event('TaskStarted'), succeeded({ continue: false, status: 'succeeded' })];
    expect(planOf([history], 3, {}).phases).toEqual([[{ state: 'CallModel', model: true }], [{ state: 'CallModel', model: false }]]);
  });

  it("reads the Lambda retrier from the definition's Retry fields", () => {
    const definition = { States: { A: { Retry: [{ ErrorEquals: ['Agent.Transient'], MaxAttempts: 6 }, { ErrorEquals: ['Lambda.TooManyRequestsException', 'Lambda.ServiceException'], IntervalSeconds: 2, BackoffRate: 2, MaxDelaySeconds: 60, MaxAttempts: 8 }] } } };
    expect(lambdaRetryOf(definition)).toEqual(RETRY);
  });

  it('throttles invocations over the account concurrency and retries them as the definition says: every run completes', () => {
    const report = model({ lambdaConcurrency: 1 });
    expect(report).toMatchObject({ completed: 10, lost: 0, sfnCalls: { StartExecution: 10 } });
    expect(report.lambda.throttles).toBeGreaterThan(0);
    expect(report.lambda.peakConcurrent).toBe(1);
  });

  it('loses the run whose invocation runs out of retries, and counts the starts it had to back off', () => {
    const report = model({ lambdaConcurrency: 1, lambdaRetry: { ...RETRY, maxAttempts: 0 } });
    expect(report.lost).toBeGreaterThan(0);
    expect(report.completed + report.lost).toBe(10);
    expect(report.lambda.retriesExhausted).toBe(report.lost);
    // 1,400 starts offered at once: the bucket's 1,300, the rest backed off until it refills.
    const burst = model({ runs: 1_400, offered: 1_000_000, lambdaConcurrency: 1_000_000 });
    expect(burst.sfnThrottled['StartExecution']).toBeGreaterThan(0);
    expect(burst.completed).toBe(1_400);
  });

  describe('with a fleet budget (issue 34 item 4): its day counter one item of ~1,000 write units a second', () => {
    // Ten model calls a run, each reserving $0.02 and costing $0.005.
    const tenCalls: RunPlan = { phases: Array.from({ length: 10 }, () => [{ state: 'CallModel', model: true }]), ledgerCallsPerInvocation: 1, stepCalls: {} };
    const budget = (dollarsPerDay: number, leaseMicros: number) => ({ dollarsPerDay, leaseMicros, reservationMicros: 20_000, costMicros: 5_000 });
    // 1,000 runs started at 100/s; a model call ~300 ms, a ledger call ~6 ms (what CI's fleet model runs).
    const fleet = (options: Partial<Parameters<typeof runFleetModel>[0]>) =>
      model({ runs: 1_000, offered: 100, plan: tenCalls, lambdaConcurrency: 1_000_000, modelLatency: { median: 300, p95: 800, max: 5_000 }, ledgerLatency: { median: 6, p95: 15, max: 100 }, ...options });

    it('reserves every model call, writing the counter once per lease, not per call: no throttle with leases, a storm without', () => {
      const leased = fleet({ budget: budget(1_000, 250_000) });
      expect(leased).toMatchObject({ completed: 1_000, lost: 0, budgetStopped: 0 });
      expect(leased.budget).toMatchObject({ callsMade: 10_000, spentMicros: 50_000_000, throttled: 0 });
      expect(leased.budget!.counterWrites).toBeLessThan(10_000 / 2);
      // A chunk no bigger than one call's reservation: every call writes the counter.
      const perCall = fleet({ budget: budget(1_000, 1) });
      expect(perCall.budget!.counterWrites).toBeGreaterThanOrEqual(10_000);
      expect(perCall.budget!.throttled).toBeGreaterThan(10_000);
    });

    it('never leases nor spends past the day when the runs want more: the runs past it are stopped, none lost', () => {
      const tight = fleet({ budget: budget(10, 250_000) });
      expect(tight.budgetStopped).toBeGreaterThan(0);
      expect(tight.completed + tight.budgetStopped).toBe(1_000);
      expect(tight.lost).toBe(0);
      expect(tight.budget!.leasedPeakMicros).toBeLessThanOrEqual(10_000_000);
      expect(tight.budget!.spentMicros).toBeLessThanOrEqual(10_000_000);
    });
  });

  it('measures sustained starts over whole seconds: the least starts in any of them', () => {
    expect(sustainedStarts(Array.from({ length: 201 }, (_, i) => i * 10))).toEqual({ perSecond: 100, seconds: 2 });
    expect(sustainedStarts([0, 500, 2_500, 3_000])).toEqual({ perSecond: 0, seconds: 3 });
  });
});
