/**
 * Error names are the contract between the step code and the state machine: a step throws one of
 * these classes, Lambda reports `error.name` as the error type, and the `Retry` / `Catch` fields of
 * the definition (infra/) match on the same constants. Retry lists only the transient names.
 */
export declare const ErrorNames: {
    /** A transient fault of an outside system (timeout, 5xx, connection reset): retry with backoff. */
    readonly Transient: 'Agent.Transient';
    /** The model provider throttled or is overloaded (429 / 529): retry with a longer backoff. */
    readonly ModelThrottled: 'Agent.ModelThrottled';
    /**
     * Throttled with a `retry-after`: not retried by a `Retry` (whose delay cannot read it) but
     * caught into a Wait of at least that many seconds. The message starts with the seconds
     * (`"17 s …"`), which the state machine reads with intrinsics (see `ModelRetryAfterError`).
     */
    readonly ModelRetryAfter: 'Agent.ModelRetryAfter';
    /** Another attempt holds a live lease on this ledger entry: retry after the lease expires. */
    readonly LeaseHeld: 'Agent.LeaseHeld';
    /**
     * A send whose outcome is unknown is settling (the provider may not show it yet): not retried by
     * a `Retry`, whose attempts a long settle time would exhaust, but caught into a Wait of that many
     * seconds. The message starts with them, as `ModelRetryAfter`'s does.
     */
    readonly SettleWait: 'Agent.SettleWait';
    /** The provider's circuit breaker is open: fail fast, wait out the cooldown, never call it. */
    readonly CircuitOpen: 'Agent.CircuitOpen';
    /** Input that can never succeed (bad event, bad tool arguments, bad config): never retried. */
    readonly InvalidInput: 'Agent.InvalidInput';
    /** A terminal refusal by an outside system (auth, idempotency-key reuse): never retried. */
    readonly Terminal: 'Agent.Terminal';
    /** Automatic recovery gave the run up: it failed again and again without progress. */
    readonly Unrecoverable: 'Agent.Unrecoverable';
    /**
     * A step's code is not the code the run is bound to (its fingerprint differs, and no recorded
     * migration moved the run): never retried, never continued on the other code.
     */
    readonly VersionMismatch: 'Agent.VersionMismatch';
    /**
     * A ledger record fails verification (lambdas/ledger/seal.ts): altered, swapped, forged or
     * missing. Never retried and never recovered: the run stops, an operator looks (README).
     */
    readonly LedgerIntegrity: 'Ledger.IntegrityError';
    /** A person rejected an approval. Delivered with SendTaskFailure. */
    readonly ApprovalRejected: 'Approval.Rejected';
    /** An approval was not decided before its deadline. Delivered with SendTaskFailure. */
    readonly ApprovalExpired: 'Approval.Expired';
};
export type ErrorName = (typeof ErrorNames)[keyof typeof ErrorNames];
/** The names a `Retry` field may list: faults that the same call can outlive. */
export declare const RETRYABLE_ERRORS: readonly ErrorName[];
declare abstract class AgentError extends Error {
    abstract readonly name: ErrorName;
}
export declare class TransientError extends AgentError {
    readonly name: "Agent.Transient";
}
/**
 * A request that may have reached the provider and whose answer never came: it timed out or was
 * aborted after it was sent, or the connection dropped before the answer. Still `Agent.Transient`
 * to the state machine; to a tool call it is an unknown outcome (tools/failures.ts): a write is
 * reconciled, re-sent under its idempotency key, or escalated, never sent again blindly; a read
 * that timed out is answered to the model.
 */
export declare class OutcomeUnknownError extends TransientError {
    /** The request's deadline passed (the tool's time ran out): no answer within it, rather than a dropped one. */
    readonly timedOut: boolean;
    constructor(message: string, options: ErrorOptions & {
        timedOut: boolean;
    });
}
export declare class ModelThrottledError extends AgentError {
    readonly name: "Agent.ModelThrottled";
    /** The provider's `retry-after` in seconds, when it sent one: the floor of the next attempt's delay. */
    readonly retryAfterSeconds: number | undefined;
    constructor(message: string, options?: ErrorOptions & {
        retryAfterSeconds?: number;
    });
}
/**
 * A throttle whose provider said how long to wait. Lambda reports only an error's name and
 * message, so the seconds lead the message: the state machine splits it on the first space and
 * reads the number (infra/agent-state-machine.ts, RetryAfterSeconds). Keep the format.
 */
export declare class ModelRetryAfterError extends AgentError {
    readonly name: "Agent.ModelRetryAfter";
    readonly retryAfterSeconds: number;
    constructor(retryAfterSeconds: number, message: string, options?: ErrorOptions);
}
export declare class LeaseHeldError extends AgentError {
    readonly name: "Agent.LeaseHeld";
}
/** A claim refused until `until` (its settle time from the send): the state machine waits the seconds that lead the message. */
export declare class SettleWaitError extends AgentError {
    readonly name: "Agent.SettleWait";
    readonly seconds: number;
    constructor(seconds: number, message: string);
}
export declare class CircuitOpenError extends AgentError {
    readonly name: "Agent.CircuitOpen";
}
export declare class InvalidInputError extends AgentError {
    readonly name: "Agent.InvalidInput";
}
export declare class TerminalError extends AgentError {
    readonly name: "Agent.Terminal";
}
/** What an HTTP provider answered with a non-2xx status: the `status` and `body` of every `Http…Error`. */
export interface HttpAnswer {
    /** The response status, e.g. 404. */
    readonly status: number;
    /** The response body as received (the provider's error message, usually JSON). */
    readonly body: string;
}
/**
 * A 5xx or 429 answer from an HTTP provider (`JsonHttpClient`): `Agent.Transient`, retried by
 * the state machine.
 */
export declare class HttpTransientError extends TransientError implements HttpAnswer {
    readonly status: number;
    readonly body: string;
    constructor(message: string, status: number, body: string);
}
/**
 * A 400 or 404 answer from an HTTP provider (`JsonHttpClient`): `Agent.InvalidInput`, the
 * arguments are wrong; a tool returns it to the model. A `DELETE` of what is gone already is
 * this with `status` 404.
 */
export declare class HttpInvalidInputError extends InvalidInputError implements HttpAnswer {
    readonly status: number;
    readonly body: string;
    constructor(message: string, status: number, body: string);
}
/** Any other 4xx answer from an HTTP provider (`JsonHttpClient`: 401, 403, 409, 422, …): `Agent.Terminal`. */
export declare class HttpTerminalError extends TerminalError implements HttpAnswer {
    readonly status: number;
    readonly body: string;
    constructor(message: string, status: number, body: string);
}
export declare class VersionMismatchError extends AgentError {
    readonly name: "Agent.VersionMismatch";
}
/** A ledger record that fails verification; the message names the run, the record and why. */
export declare class LedgerIntegrityError extends AgentError {
    readonly name: "Ledger.IntegrityError";
    constructor(where: {
        runId?: string;
        record: string;
    }, why: string);
}
/**
 * The provider answered, but not in the shape it promised. Terminal for a call that may have
 * changed the world (its outcome is unknown); a read-only tool returns it to the model instead.
 */
export declare class MalformedResponseError extends TerminalError {
}
/** Faults that mean the provider is down or overloaded: what a circuit breaker counts. */
export declare function isOutage(error: unknown): boolean;
export declare function isRetryable(error: unknown): boolean;
/**
 * A Lambda error reaches a Catch as `Cause` = the JSON of `{ errorType, errorMessage, trace }`;
 * the run record keeps the message a person needs, not the stack.
 */
export declare function causeMessage(cause: string | undefined): string;
export {};
