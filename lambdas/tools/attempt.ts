import { timersOf, type Clock } from '../shared/ports.js';

/**
 * One attempt of a tool's outside work, bounded twice: by the tool's own timeout (like the Lambda
 * timeout it sits under) and by the run's wall-clock budget, both on the run's clock (which tests
 * inject: a clock that arms timers times both out with no real wait, real timers otherwise). Either one aborts the signal the tool was handed and ends the
 * attempt at once, whether or not the tool listens to its signal: a hung call does not hold the
 * step until its Lambda dies.
 *
 *   start ──► execute(signal) ───────────────────────────► result
 *          │
 *          ├─ timeoutMs pass ──────► abort: AttemptCut { kind: 'timeout' }
 *          ├─ the clock passes stopAt ─► abort: AttemptCut { kind: 'wallClock' }
 *          └─ the step's own signal fires (its deadline) ─► abort with its reason (the work decides)
 */

/** Why an attempt was cut short; the tool's signal carries it as its `reason`. */
export type Cut = { readonly kind: 'timeout'; readonly message: string } | { readonly kind: 'wallClock'; readonly message: string };

export class AttemptCut extends Error {
  override readonly name = 'AttemptCut';
  constructor(readonly cut: Cut) {
    super(cut.message);
  }
}

/**
 * How often an attempt re-reads the run's clock while it waits for the wall-clock limit: a clock
 * may be moved without arming timers of its own (an offset on the system clock), so a real timer
 * set once for the limit could fire late. A clock's limit is still met to the millisecond: the
 * last wait is what is left (and a clock that arms timers fires them as it is moved).
 */
export const CLOCK_CHECK_MS = 250;

export interface AttemptBounds {
  /** The tool's timeout. @default none (the work's own client bounds it) */
  readonly timeoutMs?: number;
  /** The step's own signal (the Lambda deadline): the attempt ends with it. */
  readonly signal?: AbortSignal;
  /** The run's clock: the timeout and the wall-clock watch run on its timers (`after`), when it has them. */
  readonly clock: Clock;
  /** When the run's wall-clock budget runs out, on `clock`. */
  readonly stopAt: Date;
  /** Names the work in the cut's message, e.g. the tool's name. */
  readonly what: string;
}

/**
 * Runs `work` with a signal that the bounds abort; rejects with an `AttemptCut` when one of them ends it.
 * One promise, settled by whichever comes first — the work or a cut — rather than a race of two
 * and a `finally`: every model and tool call runs through here.
 */
export function boundedAttempt<T>(work: (signal: AbortSignal) => Promise<T>, bounds: AttemptBounds): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let cancelTimeout: (() => void) | undefined;
    let stopWatching: (() => void) | undefined;
    const onOuter = () => abort(bounds.signal!.reason);
    const settle = () => {
      settled = true;
      cancelTimeout?.();
      stopWatching?.();
      bounds.signal?.removeEventListener('abort', onOuter);
    };
    // Only a cut ends the attempt here: the step's own deadline reaches the work through its signal,
    // and what the work throws then (its client's mapping of an abort) is what the step sees. Only
    // this function aborts the controller, so a cut settles the attempt before the work's own
    // listeners run.
    const abort = (reason: unknown) => {
      if (controller.signal.aborted) return;
      if (reason instanceof AttemptCut && !settled) {
        settle();
        reject(reason);
      }
      controller.abort(reason);
    };
    const cut = (value: Cut) => abort(new AttemptCut(value));
    const timers = timersOf(bounds.clock);
    cancelTimeout = bounds.timeoutMs === undefined ? undefined : timers.after(bounds.timeoutMs, () => cut({ kind: 'timeout', message: `${bounds.what} did not answer within ${bounds.timeoutMs} ms (its timeoutMs)` }));
    if (bounds.signal?.aborted) onOuter();
    else bounds.signal?.addEventListener('abort', onOuter, { once: true });
    stopWatching = watchClock(bounds.clock, bounds.stopAt, () => cut({ kind: 'wallClock', message: `${bounds.what} was cut off: the run's wall-clock budget ran out` }));
    // Cut while being armed (the clock already past the limit): what was armed after the cut is disarmed too.
    if (settled) settle();
    // Whatever the work threw once its signal was aborted (an AbortError, a socket reset), the cut is why.
    const failed = (error: unknown) => {
      if (settled) return;
      settle();
      reject(controller.signal.reason instanceof AttemptCut ? controller.signal.reason : error);
    };
    let running: Promise<T>;
    try {
      running = work(controller.signal);
    } catch (error) {
      failed(error);
      return;
    }
    // A tool that ignores its signal is left behind once cut, not waited for.
    running.then((value) => {
      if (settled) return;
      settle();
      resolve(value);
    }, failed);
  });
}

/** Calls `onDue` once `clock` reaches `at` (checked at most CLOCK_CHECK_MS apart, on its timers); returns the cancel. */
export function watchClock(clock: Clock, at: Date, onDue: () => void): () => void {
  const timers = timersOf(clock);
  let cancel = () => {};
  const check = () => {
    const left = at.getTime() - clock.now().getTime();
    if (left <= 0) return onDue();
    cancel = timers.after(Math.min(left, CLOCK_CHECK_MS), check);
  };
  check();
  return () => cancel();
}
