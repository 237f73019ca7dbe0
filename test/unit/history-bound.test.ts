import { describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { createStartRun } from '../../lambdas/steps/start-run.js';
import { createBudgetCheck } from '../../lambdas/steps/budget-check.js';
import { codeFingerprint } from '../../lambdas/runs/versions.js';
import {
  boundNow,
  EVENTS_AT_START,
  historyAtStart,
  LAMBDA_TASK_EVENTS,
  meteredStep,
  pathEvents,
  recordedEvents,
  TOKEN_TASK_EVENTS,
} from '../../lambdas/guards/history.js';
import { ErrorNames, LeaseHeldError, SettleWaitError, TransientError } from '../../lambdas/shared/errors.js';
import { UNKEYED_COUNT } from '../../lambdas/ledger/ledger.js';

const clock = { now: () => new Date('2026-11-29T02:00:00Z') };

describe('the history bound (lambdas/guards/history.ts)', () => {
  it('takes every Task at its unrecorded MaxAttempts: 53 events a Lambda Task, 62 a task-token wait', () => {
    expect(LAMBDA_TASK_EVENTS).toBe(53);
    expect(TOKEN_TASK_EVENTS).toBe(62);
    // An execution's first decision (CallModel's) follows ExecutionStarted, StartRun and StartOrResume.
    expect(EVENTS_AT_START).toBe(1 + 53 + 2);
    expect(boundNow(historyAtStart(0), 0, () => 0).events).toBe(EVENTS_AT_START + LAMBDA_TASK_EVENTS);
  });

  it('adds the path the last decision chose: a model turn with the tool calls its record asked for', () => {
    const calls = (turn: number) => (turn === 7 ? 4 : 0);
    // CallModel made the turn: Choice + Map (4) + 4 × (iteration 2 + CallTool) + CallModel.
    expect(pathEvents({ model: 7 }, calls)).toBe(2 + 4 + 4 * (2 + 53) + 53);
    // BudgetCheck let a turn through: Choice + CallModel.
    expect(pathEvents({ callModel: true }, calls)).toBe(2 + 53);
    expect(pathEvents({ tools: 2 }, calls)).toBe(2 + 2 + 4 + 2 * 55 + 53);
    expect(pathEvents({ compact: true }, calls)).toBe(2 + 53 + 53);
    expect(pathEvents({ extension: true }, calls)).toBe(2 + 62 + 53);
  });

  it('adds what the steps recorded since the last decision (the run meter), never less than nothing', () => {
    expect(boundNow({ events: 1_000, meter: 40, next: { compact: true } }, 100, () => 0)).toEqual({ events: 1_000 + 108 + 60, meter: 100 });
    // A meter lower than the last one seen (another execution's record read earlier) adds nothing.
    expect(boundNow({ events: 1_000, meter: 40, next: { compact: true } }, 10, () => 0).events).toBe(1_108);
  });

  it('counts a loop its Catch starts as the loop states and the Task entered again; a retried error as its failed attempt', () => {
    expect(recordedEvents(ErrorNames.ModelRetryAfter)).toBe(6 + 53);
    expect(recordedEvents(ErrorNames.SettleWait)).toBe(6 + 53);
    expect(recordedEvents(ErrorNames.ApprovalNeeded)).toBe(62 + 53);
    expect(recordedEvents(ErrorNames.LeaseHeld)).toBe(3);
  });
});

describe('meteredStep', () => {
  const recording = () => {
    const counted: { runId: string; key: string; deltas: object }[] = [];
    return { counted, ledger: { countStep: async (runId: string, key: string, deltas: object) => (counted.push({ runId, key, deltas }), true) } };
  };

  it('records a recorded error with its events before throwing it, each throw anew', async () => {
    const { counted, ledger } = recording();
    const step = meteredStep(async () => Promise.reject(new SettleWaitError(3, 'settling')), { ledger, clock });
    await expect(step({ runId: 'r1', turn: 2, call: 1 })).rejects.toMatchObject({ name: ErrorNames.SettleWait });
    await expect(step({ runId: 'r1', turn: 2, call: 1 })).rejects.toMatchObject({ name: ErrorNames.SettleWait });
    expect(counted.map((c) => c.deltas)).toEqual([{ historyEvents: 59 }, { historyEvents: 59 }]);
    expect(counted.every((c) => c.key.startsWith(UNKEYED_COUNT))).toBe(true);
  });

  it('writes nothing for an error the bound counts by MaxAttempts, nor for a result', async () => {
    const { counted, ledger } = recording();
    await expect(meteredStep(async () => Promise.reject(new TransientError('5xx')), { ledger, clock })({ runId: 'r1' })).rejects.toThrow('5xx');
    expect(await meteredStep(async () => 'ok', { ledger, clock })({ runId: 'r1' })).toBe('ok');
    expect(counted).toEqual([]);
  });

  it('fails Agent.Transient when the record cannot be written (a loop never goes uncounted)', async () => {
    const ledger = { countStep: async () => Promise.reject(new Error('ledger down')) };
    await expect(meteredStep(async () => Promise.reject(new LeaseHeldError('held')), { ledger, clock })({ runId: 'r1' })).rejects.toMatchObject({ name: ErrorNames.Transient });
  });
});

describe('an unkeyed count (the history records)', () => {
  it('adds every time it is written and keeps no key: a step counted before is still recognised after 100 of them', async () => {
    const ledger = EmbeddedLedger.open();
    await createStartRun({ agent: refundReconciler, ledger, executions: { isRunning: async () => false, stop: async () => undefined }, clock, codeVersion: 'v1' })({ event: { runId: 'r1', input: { date: '2026-11-28' } }, executionArn: 'arn:e1', definition: { hash: 'h' } });
    expect(await ledger.countStep('r1', 'turn:1', { steps: 1 })).toBe(true);
    for (let i = 0; i < 100; i++) await ledger.countStep('r1', `${UNKEYED_COUNT}history:x`, { historyEvents: 3 });
    expect(await ledger.countStep('r1', 'turn:1', { steps: 1 })).toBe(false);
    expect(await ledger.getRun('r1')).toMatchObject({ steps: 1, historyEvents: 300 });
    ledger.close();
  });
});

describe('BudgetCheck and continue-as-new', () => {
  it('hands the run over when the bound reaches the threshold, with no Step Functions call (it has no such dependency)', async () => {
    const ledger = EmbeddedLedger.open();
    const start = await createStartRun({ agent: refundReconciler, ledger, executions: { isRunning: async () => false, stop: async () => undefined }, clock, codeVersion: 'v1' })({ event: { runId: 'r1', input: { date: '2026-11-28' } }, executionArn: 'arn:e1', definition: { hash: 'h' } });
    expect(start.history).toEqual(historyAtStart(0));
    const check = createBudgetCheck({ agent: refundReconciler, fingerprint: codeFingerprint(refundReconciler, 'v1'), ledger, clock });
    // Below: the run goes on to CallModel (which decides again and calls), the bound carried on.
    expect(await check({ runId: 'r1', history: { events: 1_000, meter: 0, next: { compact: true } } })).toMatchObject({ continue: true, history: { events: 1_108, meter: 0, next: { callModel: true } } });
    // Never at an execution's first BudgetCheck (a threshold under the start's bound would hand off forever).
    expect(await check({ runId: 'r1', history: { events: 30_000, meter: 0 } })).not.toHaveProperty('handoff');
    expect(await check({ runId: 'r1', history: start.history })).not.toHaveProperty('handoff');
    // Nor at CallModel's decision right after it, before the execution made progress.
    expect(await check({ runId: 'r1', history: { events: 30_000, meter: 0, next: { callModel: true } } })).not.toHaveProperty('handoff');
    // At the threshold (20,000 by default): 19,900 + a compaction's 108.
    expect(await check({ runId: 'r1', history: { events: 19_900, meter: 0, next: { compact: true } } })).toMatchObject({ continue: true, handoff: { events: 20_008, threshold: 20_000 } });
    ledger.close();
  });
});
