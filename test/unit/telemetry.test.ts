import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { stepHandler, type Telemetry } from '../../lambdas/adapters/middleware.js';
import { awsDeps } from '../../lambdas/adapters/aws-deps.js';
import { errorMetrics, resultMetrics, toolFailureFields } from '../../lambdas/adapters/step-telemetry.js';
import { ApprovalNeededError, ChildRunPendingError, CircuitOpenError, InvalidInputError, TransientError } from '../../lambdas/shared/errors.js';
import { MetricNames } from '../../lambdas/shared/metrics.js';
import { Steps } from '../../lambdas/shared/steps.js';

/** A telemetry that records what a Powertools logger and metrics would write. */
function recorder() {
  let keys: Record<string, unknown> = {};
  const lines: Record<string, unknown>[] = [];
  const metrics: { name: string; value: number }[] = [];
  let flushed = 0;
  const telemetry: Telemetry = {
    resetKeys: () => (keys = {}),
    appendKeys: (more) => (keys = { ...keys, ...more }),
    info: (message, attributes) => lines.push({ level: 'INFO', message, ...keys, ...attributes }),
    error: (message, attributes) => lines.push({ level: 'ERROR', message, ...keys, ...attributes }),
    addMetrics: (points) => metrics.push(...points.map(({ name, value }) => ({ name, value }))),
    flush: () => (flushed += 1),
  };
  return { telemetry, lines, metrics, flushed: () => flushed };
}

const context = { getRemainingTimeInMillis: () => 30_000 } as Context;

describe('the step middleware', () => {
  it('puts the run, turn and tool on the log line and emits the step, not its arguments or result', async () => {
    const { telemetry, lines, metrics, flushed } = recorder();
    const handler = stepHandler(
      async () => ({ turn: 3, call: 1, name: 'issue_refund', outcome: 'ok', next: null, summary: 'issue_refund → ok', counted: true, args: { card: '4111' } }),
      undefined,
      { step: Steps.CallTool, telemetry },
    );
    await handler({ runId: 'r1', turn: 3, call: 1 }, context);
    expect(lines).toEqual([{ level: 'INFO', message: 'call-tool done', runId: 'r1', turn: 3, call: 1, tool: 'issue_refund', outcome: 'ok', summary: 'issue_refund → ok' }]);
    expect(JSON.stringify(lines)).not.toContain('4111');
    expect(metrics).toEqual([
      { name: MetricNames.Steps, value: 1 },
      { name: MetricNames.ToolCalls, value: 1 },
    ]);
    expect(flushed()).toBe(1);
  });

  it('drops the keys of the previous invocation', async () => {
    const { telemetry, lines } = recorder();
    const handler = stepHandler(async (event) => event, undefined, { step: Steps.Finalize, telemetry });
    await handler({ runId: 'r1', turn: 2 }, context);
    await handler({ runId: 'r2' }, context);
    expect(lines[1]).toEqual({ level: 'INFO', message: 'finalize done', runId: 'r2' });
  });

  it('logs a failure with its contract name, counts a retry to come, and keeps the error name for the state machine', async () => {
    const { telemetry, lines, metrics } = recorder();
    const sdkThrottle = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException', $retryable: { throttling: true } });
    const handler = stepHandler(async () => Promise.reject(sdkThrottle), undefined, { step: Steps.BudgetCheck, telemetry });
    await expect(handler({ runId: 'r1' }, context)).rejects.toMatchObject({ name: 'Agent.Transient' });
    expect(lines).toEqual([{ level: 'ERROR', message: 'budget-check failed', runId: 'r1', error: 'Agent.Transient', errorMessage: 'ThrottlingException: Rate exceeded' }]);
    expect(metrics).toEqual([{ name: MetricNames.Retries, value: 1 }]);
  });

  it('logs a call that waits for a person or a child run at INFO, not as a failure, and keeps its name for the state machine', async () => {
    const { telemetry, lines, metrics } = recorder();
    const handler = stepHandler(async () => Promise.reject(new ApprovalNeededError('tool call 9/1 of run r1 needs an approval: asking for it')), undefined, { step: Steps.CallTool, telemetry });
    await expect(handler({ runId: 'r1' }, context)).rejects.toMatchObject({ name: 'Agent.ApprovalNeeded' });
    expect(lines).toEqual([{ level: 'INFO', message: 'call-tool waits', runId: 'r1', error: 'Agent.ApprovalNeeded', errorMessage: 'tool call 9/1 of run r1 needs an approval: asking for it' }]);
    expect(metrics).toEqual([]);
    // Without telemetry (the local engine's lines, savepoint.log) alike; a fault stays an ERROR.
    const logged: string[] = [];
    const local = stepHandler(async (event: unknown) => Promise.reject(event === 'child' ? new ChildRunPendingError('child c1 runs') : new TransientError('reset')), (line) => logged.push(line));
    await expect(local('child', context)).rejects.toMatchObject({ name: 'Agent.ChildRunPending' });
    await expect(local('fault', context)).rejects.toMatchObject({ name: 'Agent.Transient' });
    expect(logged.map((line) => JSON.parse(line) as { level: string; error: string })).toEqual([
      { level: 'INFO', error: 'Agent.ChildRunPending', message: 'child c1 runs' },
      { level: 'ERROR', error: 'Agent.Transient', message: 'reset' },
    ]);
  });

  it("logs a bug's stack (an error none of the harness's own), bounded, and no stack for the harness's own errors", async () => {
    const { telemetry, lines } = recorder();
    const bug = new TypeError("Cannot read properties of undefined (reading 'summary')");
    const handler = stepHandler(async () => Promise.reject(bug), undefined, { step: Steps.CallTool, telemetry });
    await expect(handler({ runId: 'r1' }, context)).rejects.toBe(bug);
    expect(lines).toEqual([{ level: 'ERROR', message: 'call-tool failed', runId: 'r1', error: 'TypeError', errorMessage: bug.message, stack: bug.stack }]);
    // Without telemetry (the local engine's error lines): the same stack, cut at 4,000 characters.
    const logged: string[] = [];
    const long = Object.assign(new Error('deep'), { stack: `Error: deep\n${'    at f (/a.js:1:1)\n'.repeat(500)}` });
    await expect(stepHandler(async () => Promise.reject(long), (line) => logged.push(line))({}, context)).rejects.toBe(long);
    expect(JSON.parse(logged[0]!)).toEqual({ level: 'ERROR', error: 'Error', message: 'deep', stack: long.stack.slice(0, 4_000) });
  });

  it("logs a tool's own failure on AWS with the run's keys, its name, message and stack, not its arguments", () => {
    const { telemetry, lines } = recorder();
    telemetry.appendKeys({ runId: 'r1', turn: 2, call: 1 });
    const failure = new TypeError("Cannot read properties of undefined (reading 'url')");
    awsDeps({}, { telemetry }).onToolFailure!('lookup', failure);
    expect(lines).toEqual([{ level: 'ERROR', message: 'tool failed', runId: 'r1', turn: 2, call: 1, tool: 'lookup', error: 'TypeError', errorMessage: failure.message, stack: failure.stack }]);
    expect(toolFailureFields('lookup', 'a string thrown')).toMatchObject({ tool: 'lookup', error: 'Error', errorMessage: 'a string thrown' });
    // Bounded whatever was thrown: a CloudWatch Logs event holds at most 256 KiB (PutLogEvents quota), and a
    // line the logger splits is no longer one JSON object.
    const huge = Object.assign(new Error('x'.repeat(1_000_000)), { stack: 'y'.repeat(1_000_000) });
    expect(JSON.stringify(toolFailureFields('t'.repeat(10_000), huge)).length).toBeLessThan(6_000);
  });
});

describe('the metrics of a step', () => {
  it.each([
    ['a model turn: a step, its tokens and dollars', Steps.CallModel, { turn: 1, tokens: { input: 1200, output: 300 }, dollars: 0.0081, counted: true }, { Steps: 1, ModelTurns: 1, InputTokens: 1200, OutputTokens: 300, Dollars: 0.0081 }],
    ['a model turn counted before (a retry): nothing', Steps.CallModel, { turn: 1, tokens: { input: 1, output: 1 }, dollars: 1, counted: false }, {}],
    ['a model call skipped by a guard: nothing', Steps.CallModel, { turn: 1, skipped: 'killed' }, {}],
    ['a guard that stopped the run', Steps.BudgetCheck, { continue: false, status: 'stopped', reason: 'steps', guard: 'steps' }, { GuardStops: 1 }],
    ['a budget extension asked for: not a stop', Steps.BudgetCheck, { continue: false, status: 'stopped', reason: 'steps', guard: 'steps', extension: { guard: 'steps' } }, {}],
    ['a guard warning', Steps.BudgetCheck, { continue: true, nextTurn: 2, pending: null, warning: 'loop' }, { GuardWarnings: 1 }],
    ['the agent finished: no guard', Steps.BudgetCheck, { continue: false, status: 'succeeded', reason: 'done' }, {}],
    ['an approval requested', Steps.RequestApproval, { approvalId: 'apv_x', status: 'pending' }, { ApprovalsRequested: 1 }],
    ['approvals expired', Steps.ExpireApprovals, { expired: ['a', 'b'] }, { ApprovalsExpired: 2 }],
    ['a finished run', Steps.Finalize, { status: 'succeeded', steps: 97, dollars: 0.42 }, { RunsSucceeded: 1, StepsPerRun: 97, DollarsPerRun: 0.42 }],
    ['a recovery', Steps.RecoverRun, { action: 'recovered' }, { Recoveries: 1 }],
    ['a run given up', Steps.RecoverRun, { action: 'gave-up' }, { RecoveriesGivenUp: 1, RunsFailed: 1 }],
    ['a kill by StopExecution', Steps.ExecutionStopped, { action: 'killed' }, { RunsKilled: 1 }],
    [
      'a sweep',
      Steps.Sweep,
      { recovered: [{}], gaveUp: [], reported: [{}], failed: [], approvalsWaiting: 2, oldestApprovalAgeSeconds: 7200, orphanedApprovals: [{}] },
      { Recoveries: 1, RunsNeedingAttention: 1, ApprovalsWaiting: 2, OldestApprovalAgeSeconds: 7200, OrphanedApprovals: 1 },
    ],
  ])('%s', (_case, step, result, expected) => {
    expect(Object.fromEntries(resultMetrics(step, result).map((point) => [point.name, point.value]))).toEqual(expected);
  });

  it('counts a retry for the retried error names only, and an open breaker', () => {
    expect(errorMetrics(new TransientError('x')).map((point) => point.name)).toEqual([MetricNames.Retries]);
    expect(errorMetrics(new CircuitOpenError('x')).map((point) => point.name)).toEqual([MetricNames.Retries, MetricNames.BreakerOpen]);
    expect(errorMetrics(new InvalidInputError('x'))).toEqual([]);
  });
});
