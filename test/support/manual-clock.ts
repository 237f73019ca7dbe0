/**
 * A clock the test moves by hand, whose timers fire as it passes them: given to a local stack as its
 * clock, it runs the engine's Task timeouts and heartbeats (local/engine/timers.ts), so a Task times
 * out the moment the test moves the clock past its TimeoutSeconds, with no real wait. It starts at
 * the real time and stands still between moves.
 */
export function manualClock(startMs = Date.now()) {
  let nowMs = startMs;
  const timers = new Set<{ at: number; fire: () => void }>();
  return {
    now: () => new Date(nowMs),
    /** Fires `fire` at the first move that reaches `ms` from now (a timer is never fired between moves). */
    after(ms: number, fire: () => void): () => void {
      const timer = { at: nowMs + ms, fire };
      timers.add(timer);
      return () => void timers.delete(timer);
    },
    /** Moves the clock forward by `ms`, then fires the timers due by then, earliest first. */
    advance(ms: number): void {
      if (!(ms >= 0)) throw new Error(`manualClock.advance: ms must be ≥ 0, got ${ms}`);
      nowMs += ms;
      const due = [...timers].filter((timer) => timer.at <= nowMs).sort((a, b) => a.at - b.at);
      // A timer cancelled by an earlier one's firing does not fire.
      for (const timer of due) if (timers.delete(timer)) timer.fire();
    },
  };
}
