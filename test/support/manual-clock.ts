import { TestClock } from '../../testing/index.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';

/**
 * A clock the test moves by hand, whose timers fire as it passes them: the public test kit's
 * TestClock, started at the real time. Given to a local stack as its clock, it runs the steps'
 * timers (tool timeouts, the wall-clock watch, lease renewals) and the engine's Task timeouts and
 * heartbeats, so that each fires the moment the test moves the clock past it, with no real wait.
 */
export function manualClock(startMs = Date.now()): TestClock {
  return new TestClock(new Date(startMs));
}

/**
 * A manual clock, moved to each approval's deadline (`decideBy`) once it is asked: the approval
 * expires — its deadline timer runs on the clock — with no real wait, and the run goes on without
 * it. Spread into `startHarness` (`clock` and `onAsked`). `expires` picks the approvals nobody
 * will decide (the rest are left for the test to decide).
 *
 * @example
 * harness = await startHarness(expiringApprovals());
 * await harness.run({ input, config: { approvalTimeoutSeconds: 1 } }); // each approval expires on the clock
 */
export function expiringApprovals(options: { clock?: TestClock; expires?: (approval: ApprovalRecord) => boolean } = {}) {
  const { clock = manualClock(), expires = () => true } = options;
  // Moved on the next turn of the event loop: the deadline passes after the step that asked has
  // returned, as a real one does, not inside it.
  const toDeadline = (approval: ApprovalRecord) => clock.advance(Math.max(0, Date.parse(approval.decideBy) - clock.now().getTime()));
  return { clock, onAsked: (approval: ApprovalRecord) => void (expires(approval) && setImmediate(() => toDeadline(approval))) };
}

/**
 * The real time, moved on by `advance` (a settle wait skipped: testing `skipSettleWaits`): its
 * timers run in real time, and fire at once when an advance passes them. For a stack whose other
 * waits (the breaker's cooldown, approval deadlines) should pass as they do, in real time.
 */
export function skippingClock(): TestClock {
  let offset = 0;
  const timers = new Set<{ at: number; fire: () => void; timer: NodeJS.Timeout }>();
  const now = () => new Date(Date.now() + offset);
  const clock = {
    now,
    after: (ms: number, fire: () => void) => {
      const armed = { at: now().getTime() + ms, fire, timer: setTimeout(() => timers.delete(armed) && fire(), ms) };
      timers.add(armed);
      return () => {
        clearTimeout(armed.timer);
        timers.delete(armed);
      };
    },
    advance: (ms: number) => {
      offset += ms;
      const due = [...timers].filter((armed) => armed.at <= now().getTime()).sort((a, b) => a.at - b.at);
      for (const armed of due) {
        if (!timers.delete(armed)) continue;
        clearTimeout(armed.timer);
        armed.fire();
      }
    },
  };
  return clock as unknown as TestClock;
}
