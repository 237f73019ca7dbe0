/**
 * Where the engine's Task timers run (TimeoutSeconds, HeartbeatSeconds). By default real timers; a
 * clock a test moves by hand can run them instead, so that a Task times out the moment the clock
 * passes its deadline, with no real wait (test/engine/stops.test.ts).
 */
export interface Timers {
  /** Calls `fire` once `ms` have passed on this clock; returns the cancel (a no-op once fired). */
  after(ms: number, fire: () => void): () => void;
}

export const realTimers: Timers = {
  after(ms, fire) {
    const timer = setTimeout(fire, ms);
    return () => clearTimeout(timer);
  },
};
