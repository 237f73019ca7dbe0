import { type Timers } from './ports.js';
/**
 * A request's abort signal: fires when `timeoutMs` (if any) pass on `timers`, or when `outer` (the caller's, e.g. the
 * Lambda deadline) fires. Unlike `AbortSignal.any([outer, AbortSignal.timeout(ms)])` its timer and
 * listener are removed by `done()` as soon as the request is over, instead of living on until the
 * timeout (one timer and one dependent signal per request, several times the cost of the call on
 * the in-process transport). Real timers do not keep the process alive for a pending deadline, like
 * AbortSignal.timeout's.
 */
export declare function deadline(timeoutMs: number | undefined, outer?: AbortSignal, timers?: Timers): {
    signal: AbortSignal;
    timedOut(): boolean;
    done(): void;
};
/**
 * `AbortSignal.any(signals)` that leaves nothing behind on its sources once `done()` is called.
 * `AbortSignal.any` keeps a WeakRef to its result in every source, for the source's lifetime (Node
 * 20 never prunes them): on a long-lived source — middy shares one AbortController across every
 * invocation of the process — that is one WeakRef per call, forever (~18 per local run).
 */
export declare function anySignal(signals: readonly AbortSignal[]): {
    signal: AbortSignal;
    done(): void;
};
/** `promise`, or a rejection with `signal`'s reason as soon as it is aborted. */
export declare function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T>;
