import { describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { codeFingerprint } from '../../lambdas/runs/versions.js';
import { createBudgetCheck } from '../../lambdas/steps/budget-check.js';
import { createStartRun } from '../../lambdas/steps/start-run.js';
import { countIfDue, historyAtStart, MAX_EVENTS_AT_START, MAX_EVENTS_PER_CHECK, MAX_EVENTS_PER_STEP, mostEvents } from '../../lambdas/guards/history.js';

/** A history that counts its reads and answers `events`. */
const history = (events: number) => {
  const reads: string[] = [];
  return { reads, eventCount: async (arn: string) => (reads.push(arn), events) };
};

describe('when BudgetCheck counts its execution history (lambdas/guards/history.ts)', () => {
  it('bounds the events from what was last counted, the steps since and the checks since', () => {
    expect(mostEvents(historyAtStart(0), 0)).toBe(MAX_EVENTS_AT_START);
    expect(mostEvents({ events: 900, steps: 90, checks: 2 }, 100)).toBe(900 + 10 * MAX_EVENTS_PER_STEP + 2 * MAX_EVENTS_PER_CHECK);
  });

  it('does not read while the bound is under the threshold, and carries the estimate on unchanged', async () => {
    const h = history(1_000);
    const estimate = { events: 1_000, steps: 50, checks: 3 };
    expect(await countIfDue(h, 'arn:e1', estimate, 60, 20_000)).toEqual({ estimate });
    expect(h.reads).toEqual([]);
  });

  it('reads once the bound reaches the threshold, and starts the estimate again from the count', async () => {
    const h = history(6_000);
    expect(await countIfDue(h, 'arn:e1', { events: 100, steps: 0, checks: 20 }, 60, 20_000)).toEqual({ events: 6_000, estimate: { events: 6_000, steps: 60, checks: 0 } });
    expect(h.reads).toEqual(['arn:e1']);
  });

  it('reads every time without an estimate (a definition that carries none)', async () => {
    const h = history(12);
    expect(await countIfDue(h, 'arn:e1', undefined, 3, 20_000)).toEqual({ events: 12, estimate: { events: 12, steps: 3, checks: 0 } });
    expect(h.reads).toHaveLength(1);
  });

  // Found by the 1,000-run fleet of 100-step runs: their counts come due together, the account's
  // GetExecutionHistory bucket (400, refill 20/s) empties, and 182 first executions failed.
  it('answers a throttled count as due to hand over (continue-as-new), not as a failure; without an estimate the throttle stands', async () => {
    const throttled = { eventCount: async () => Promise.reject(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' })) };
    const estimate = { events: 100, steps: 0, checks: 20 };
    expect(await countIfDue(throttled, 'arn:e1', estimate, 60, 20_000)).toEqual({ estimate, throttled: true });
    await expect(countIfDue(throttled, 'arn:e1', undefined, 60, 20_000)).rejects.toThrow('Rate exceeded');
    const broken = { eventCount: async () => Promise.reject(new Error('socket hang up')) };
    await expect(countIfDue(broken, 'arn:e1', estimate, 60, 20_000)).rejects.toThrow('socket hang up');
  });

  it('BudgetCheck hands the run over when its due count is throttled, with the most events there can be', async () => {
    const ledger = EmbeddedLedger.open();
    const clock = { now: () => new Date('2026-11-29T02:00:00Z') };
    await createStartRun({ agent: refundReconciler, ledger, executions: { isRunning: async () => false, stop: async () => undefined }, clock, codeVersion: 'v1' })({ event: { runId: 'r1', input: { date: '2026-11-28' } }, executionArn: 'arn:e1', definition: { hash: 'h' } });
    const throttled = { eventCount: async () => Promise.reject(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' })) };
    const check = createBudgetCheck({ agent: refundReconciler, fingerprint: codeFingerprint(refundReconciler, 'v1'), ledger, clock, history: throttled });
    // This check is the one that makes the bound reach the threshold: 19,900 + one check's 300.
    expect(await check({ runId: 'r1', history: { events: 19_900, steps: 0, checks: 0 } })).toMatchObject({ continue: true, handoff: { events: 19_900 + MAX_EVENTS_PER_CHECK, threshold: 20_000, unchecked: true } });
    ledger.close();
  });
});
