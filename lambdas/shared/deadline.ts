/**
 * A request's abort signal: fires when `timeoutMs` pass, or when `outer` (the caller's, e.g. the
 * Lambda deadline) fires. Unlike `AbortSignal.any([outer, AbortSignal.timeout(ms)])` its timer and
 * listener are removed by `done()` as soon as the request is over, instead of living on until the
 * timeout (one timer and one dependent signal per request, several times the cost of the call on
 * the in-process transport).
 */
export function deadline(timeoutMs: number, outer?: AbortSignal): { signal: AbortSignal; timedOut(): boolean; done(): void } {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, timeoutMs);
  // Like AbortSignal.timeout: a pending deadline alone does not keep the process alive.
  timer.unref();
  const onAbort = () => controller.abort(outer!.reason);
  if (outer?.aborted) controller.abort(outer.reason);
  else outer?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    done: () => {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}
