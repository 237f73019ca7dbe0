/**
 * What the steps need from the outside, as small interfaces: the handlers bind them to the AWS SDK
 * (lambdas/adapters/), tests and the local engine bind them to the same adapters on loopback.
 */

/**
 * Timers that run on a clock. By default real ones; a clock a test moves by hand can run them
 * instead, so that what waits on one (a tool's timeout, a lease renewal, a Task timeout) fires the
 * moment the clock passes it, with no real wait.
 */
export interface Timers {
  /** Calls `fire` once `ms` have passed on this clock; returns the cancel (a no-op once fired). */
  after(ms: number, fire: () => void): () => void;
}

/**
 * What the steps read the time from. One that also arms timers (`after`: a test's clock) runs the
 * steps' timers too — tool timeouts, the wall-clock watch, lease renewals; without it they are real.
 */
export interface Clock extends Partial<Timers> {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Real timers. Like `AbortSignal.timeout`, a pending one alone does not keep the process alive. */
export const realTimers: Timers = {
  after(ms, fire) {
    const timer = setTimeout(fire, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** The timers that run on `clock`: its own when it arms them, else real ones. */
export function timersOf(clock: Clock): Timers {
  return clock.after ? { after: clock.after.bind(clock) } : realTimers;
}

/** The task-token callbacks of Step Functions (`SendTaskSuccess` / `SendTaskFailure`). */
export interface TaskCallbacks {
  /** Resolves `false` when the token is no longer waited on (the execution moved on or ended). */
  succeed(taskToken: string, output: unknown): Promise<boolean>;
  fail(taskToken: string, error: string, cause: string): Promise<boolean>;
}

export interface Executions {
  isRunning(executionArn: string): Promise<boolean>;
  /** `StopExecution` (a migration stops the execution it takes the run from); an ended one is left alone. */
  stop(executionArn: string, error: string, cause: string): Promise<void>;
}
