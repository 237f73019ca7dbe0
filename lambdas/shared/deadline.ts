import { realTimers, type Timers } from './ports.js';

/**
 * A request's abort signal: fires when `timeoutMs` (if any) pass on `timers`, or when `outer` (the caller's, e.g. the
 * Lambda deadline) fires. Unlike `AbortSignal.any([outer, AbortSignal.timeout(ms)])` its timer and
 * listener are removed by `done()` as soon as the request is over, instead of living on until the
 * timeout (one timer and one dependent signal per request, several times the cost of the call on
 * the in-process transport). Real timers do not keep the process alive for a pending deadline, like
 * AbortSignal.timeout's.
 */
export function deadline(timeoutMs: number | undefined, outer?: AbortSignal, timers: Timers = realTimers): { signal: AbortSignal; timedOut(): boolean; done(): void } {
  const controller = new AbortController();
  let timedOut = false;
  // No limit of its own (undefined): only `outer` ends it.
  const cancel =
    timeoutMs === undefined
      ? () => undefined
      : timers.after(timeoutMs, () => {
          timedOut = true;
          controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
        });
  const onAbort = () => controller.abort(outer!.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    done: () => {
      cancel();
      outer?.removeEventListener('abort', onAbort);
    },
  };
}

/** `promise`, or a rejection with `signal`'s reason as soon as it is aborted. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
