import { TestClock } from '../../testing/index.js';

/**
 * A clock the test moves by hand, whose timers fire as it passes them: the public test kit's
 * TestClock, started at the real time. Given to a local stack as its clock, it runs the steps'
 * timers (tool timeouts, the wall-clock watch, lease renewals) and the engine's Task timeouts and
 * heartbeats, so that each fires the moment the test moves the clock past it, with no real wait.
 */
export function manualClock(startMs = Date.now()): TestClock {
  return new TestClock(new Date(startMs));
}
