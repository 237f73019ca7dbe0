import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deadline } from '../../lambdas/shared/deadline.js';

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

