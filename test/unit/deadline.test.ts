import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { getEventListeners } from 'node:events';
import { anySignal, deadline } from '../../lambdas/shared/deadline.js';

describe('deadline (a request’s abort signal)', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('fires with a TimeoutError when the time is up, and says it timed out', () => {
    const limit = deadline(1_000);
    vi.advanceTimersByTime(999);
    expect(limit.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(limit.signal.aborted).toBe(true);
    expect((limit.signal.reason as DOMException).name).toBe('TimeoutError');
    expect(limit.timedOut()).toBe(true);
  });

  it('fires with the caller’s reason when the caller’s signal fires, already or later, and not as a timeout', () => {
    const outer = new AbortController();
    const limit = deadline(1_000, outer.signal);
    outer.abort(new Error('the Lambda deadline'));
    expect(limit.signal.aborted).toBe(true);
    expect((limit.signal.reason as Error).message).toBe('the Lambda deadline');
    expect(limit.timedOut()).toBe(false);
    const late = deadline(1_000, outer.signal);
    expect((late.signal.reason as Error).message).toBe('the Lambda deadline');
  });

  it('leaves no timer and no listener once done', () => {
    const outer = new AbortController();
    const limit = deadline(1_000, outer.signal);
    expect(vi.getTimerCount()).toBe(1);
    limit.done();
    expect(vi.getTimerCount()).toBe(0);
    outer.abort();
    vi.advanceTimersByTime(5_000);
    expect(limit.signal.aborted).toBe(false);
  });
});

/** The dependent signals Node keeps in a source for AbortSignal.any (an internal symbol; empty when the Node version has none). */
function dependants(signal: AbortSignal): number {
  const symbol = Object.getOwnPropertySymbols(signal).find((s) => s.description === 'kDependantSignals');
  return symbol ? ((signal as unknown as Record<symbol, Set<unknown>>)[symbol]?.size ?? 0) : 0;
}

describe('anySignal (AbortSignal.any that leaves nothing on its sources)', () => {
  it('fires with the reason of whichever source fires, already or later', () => {
    const own = new AbortController();
    const task = new AbortController();
    const either = anySignal([own.signal, task.signal]);
    expect(either.signal.aborted).toBe(false);
    task.abort(new Error('Task timed out'));
    expect((either.signal.reason as Error).message).toBe('Task timed out');
    expect((anySignal([own.signal, task.signal]).signal.reason as Error).message).toBe('Task timed out');
  });

  it('leaves no listener and no dependent signal on a long-lived source once done (one per step, for the life of the process)', () => {
    const shared = new AbortController(); // middy's: one for every invocation of the process
    for (let step = 0; step < 1_000; step++) {
      const either = anySignal([shared.signal, new AbortController().signal]);
      either.done();
    }
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    expect(dependants(shared.signal)).toBe(0);
  });
});
