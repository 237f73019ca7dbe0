import { beforeEach, describe, expect, it, vi } from 'vitest';
import { deadlineTimers } from '../../local/runtime/approvals.js';
import { TestClock } from '../../testing/index.js';

// Approval deadlines without polling: one timer per pending approval, on the runtime's clock's timers.
const t0 = Date.parse('2026-11-29T02:00:00.000Z');
let clock: TestClock;
const approval = (id: string, seconds: number, status: 'pending' | 'approved' = 'pending') => ({
  approvalId: id,
  decideBy: new Date(t0 + seconds * 1000).toISOString(),
  status,
});

describe('approval deadline timers', () => {
  beforeEach(() => {
    clock = new TestClock(new Date(t0));
  });

  it('expires each approval at its deadline, not before, once', () => {
    const onDue = vi.fn();
    const timers = deadlineTimers(clock, onDue);
    timers.arm(approval('a', 5));
    timers.arm(approval('a', 5)); // armed again (a refreshed token): still one timer
    timers.arm(approval('b', 60));
    clock.advance(4_999);
    expect(onDue).not.toHaveBeenCalled();
    clock.advance(1);
    expect(onDue).toHaveBeenCalledTimes(1);
    clock.advance(55_000);
    expect(onDue).toHaveBeenCalledTimes(2);
    clock.advance(3_600_000);
    expect(onDue).toHaveBeenCalledTimes(2);
  });

  it('expires at once an approval already past its deadline, and ignores a decided one', () => {
    const onDue = vi.fn();
    const timers = deadlineTimers(clock, onDue);
    timers.arm(approval('late', -10));
    timers.arm(approval('decided', 1, 'approved'));
    clock.advance(0);
    expect(onDue).toHaveBeenCalledTimes(1);
    clock.advance(10_000);
    expect(onDue).toHaveBeenCalledTimes(1);
  });

  it('waits out a deadline beyond the longest timer, and fires nothing once cleared', () => {
    const onDue = vi.fn();
    const timers = deadlineTimers(clock, onDue);
    timers.arm(approval('week', 30 * 24 * 3600)); // 30 days: longer than one timer can wait
    clock.advance(25 * 24 * 3600 * 1000);
    expect(onDue).not.toHaveBeenCalled();
    clock.advance(5 * 24 * 3600 * 1000);
    expect(onDue).toHaveBeenCalledTimes(1);
    timers.arm(approval('cleared', 1));
    timers.clear();
    clock.advance(10_000);
    expect(onDue).toHaveBeenCalledTimes(1);
  });
});
