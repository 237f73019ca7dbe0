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

  it('measures sustained starts over whole seconds: the least starts in any of them', () => {
    expect(sustainedStarts(Array.from({ length: 201 }, (_, i) => i * 10))).toEqual({ perSecond: 100, seconds: 2 });
    expect(sustainedStarts([0, 500, 2_500, 3_000])).toEqual({ perSecond: 0, seconds: 3 });
  });
});
