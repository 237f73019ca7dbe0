/**
 * Error names are the contract between the step code and the state machine: a step throws one of
 * these classes, Lambda reports `error.name` as the error type, and the `Retry` / `Catch` fields of
 * the definition (infra/) match on the same constants. Retry lists only the transient names.
 */
export const ErrorNames = {
  /** A transient fault of an outside system (timeout, 5xx, connection reset): retry with backoff. */
  Transient: 'Agent.Transient',
  /** The model provider throttled or is overloaded (429 / 529): retry with a longer backoff. */
  ModelThrottled: 'Agent.ModelThrottled',
  /**
   * Throttled with a `retry-after`: not retried by a `Retry` (whose delay cannot read it) but
   * caught into a Wait of at least that many seconds. The message starts with the seconds
   * (`"17 s …"`), which the state machine reads with intrinsics (see `ModelRetryAfterError`).
   */
  ModelRetryAfter: 'Agent.ModelRetryAfter',
  /** Another attempt holds a live lease on this ledger entry: retry after the lease expires. */
  LeaseHeld: 'Agent.LeaseHeld',
  /**
   * A send whose outcome is unknown is settling (the provider may not show it yet): not retried by
   * a `Retry`, whose attempts a long settle time would exhaust, but caught into a Wait of that many
   * seconds. The message starts with them, as `ModelRetryAfter`'s does.
   */
  SettleWait: 'Agent.SettleWait',
  /**
   * A tool call that needs a person's approval has not asked for it yet: not a fault and never
   * retried, but caught into the approval wait (RequestApproval), after which CallTool runs the call
   * again and reads the decision. Routing by a Catch spares every other call a Choice state (a state
   * transition, which Step Functions bills) in front of its CallTool.
   */
  ApprovalNeeded: 'Agent.ApprovalNeeded',
  /**
   * A call of an agent tool whose child run has not finished: not a fault and never retried, but
   * caught into the child's wait (AwaitChildRun: starts the child once and waits on a task token
   * its end wakes), after which CallTool runs again and records the child's result.
   */
  ChildRunPending: 'Agent.ChildRunPending',
  /** The provider's circuit breaker is open: fail fast, wait out the cooldown, never call it. */
  CircuitOpen: 'Agent.CircuitOpen',
  /** Input that can never succeed (bad event, bad tool arguments, bad config): never retried. */
  InvalidInput: 'Agent.InvalidInput',
  /** A terminal refusal by an outside system (auth, idempotency-key reuse): never retried. */
  Terminal: 'Agent.Terminal',
  /** Automatic recovery gave the run up: it failed again and again without progress. */
  Unrecoverable: 'Agent.Unrecoverable',
  /**
   * A step's code is not the code the run is bound to (its fingerprint differs, and no recorded
   * migration moved the run): never retried, never continued on the other code.
   */
  VersionMismatch: 'Agent.VersionMismatch',
  /**
   * A ledger record fails verification (lambdas/ledger/seal.ts): altered, swapped, forged or
   * missing. Never retried and never recovered: the run stops, an operator looks (docs/guarantees.md, Tamper-evident ledger).
   */
  LedgerIntegrity: 'Ledger.IntegrityError',
  /** A person rejected an approval. Delivered with SendTaskFailure. */
  ApprovalRejected: 'Approval.Rejected',
  /** An approval was not decided before its deadline. Delivered with SendTaskFailure. */
  ApprovalExpired: 'Approval.Expired',
} as const;

export type ErrorName = (typeof ErrorNames)[keyof typeof ErrorNames];

/** The names a `Retry` field may list: faults that the same call can outlive. */
export const RETRYABLE_ERRORS: readonly ErrorName[] = [
  ErrorNames.Transient,
  ErrorNames.ModelThrottled,
  ErrorNames.LeaseHeld,
  ErrorNames.CircuitOpen,
];

/**
 * The names a step throws to route the run, not because anything failed: each is caught into a
 * wait (a person's decision, a child run's end). Logged at INFO, not ERROR (adapters/middleware.ts):
 * an operator's alarm on error lines would go off at every approval.
 */
export const ROUTING_ERRORS: readonly ErrorName[] = [ErrorNames.ApprovalNeeded, ErrorNames.ChildRunPending];

abstract class AgentError extends Error {
  abstract override readonly name: ErrorName;
}

/** A failure the same call may not meet again (a 5xx, a dropped connection): the state machine retries it. */
export class TransientError extends AgentError {
  /** `Agent.Transient`: retried with backoff. */
  override readonly name = ErrorNames.Transient;
}

/**
 * A request that may have reached the provider and whose answer never came: it timed out or was
 * aborted after it was sent, or the connection dropped before the answer. Still `Agent.Transient`
 * to the state machine; to a tool call it is an unknown outcome (tools/failures.ts): a write is
 * reconciled, re-sent under its idempotency key, or escalated, never sent again blindly; a read
 * that timed out is answered to the model.
 */
export class OutcomeUnknownError extends TransientError {
  /** The request's deadline passed (the tool's time ran out): no answer within it, rather than a dropped one. */
  readonly timedOut: boolean;

  constructor(message: string, options: ErrorOptions & { timedOut: boolean }) {
    super(message, options);
    this.timedOut = options.timedOut;
  }
}

/** The model's provider throttled the call (429, overloaded): retried with a longer backoff than a transient failure. */
export class ModelThrottledError extends AgentError {
  /** `Agent.ModelThrottled`. */
  override readonly name = ErrorNames.ModelThrottled;
  /** The provider's `retry-after` in seconds, when it sent one: the floor of the next attempt's delay. */
  readonly retryAfterSeconds: number | undefined;

  constructor(message: string, options?: ErrorOptions & { retryAfterSeconds?: number }) {
    super(message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

/**
 * A throttle whose provider said how long to wait. Lambda reports only an error's name and
 * message, so the seconds lead the message: the state machine splits it on the first space and
 * reads the number (infra/agent-state-machine.ts, RetryAfterSeconds). Keep the format.
 */
export class ModelRetryAfterError extends AgentError {
  override readonly name = ErrorNames.ModelRetryAfter;
  readonly retryAfterSeconds: number;

  constructor(retryAfterSeconds: number, message: string, options?: ErrorOptions) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super(`${seconds} s to wait (retry-after): ${message}`, options);
    this.retryAfterSeconds = seconds;
  }
}

export class LeaseHeldError extends AgentError {
  override readonly name = ErrorNames.LeaseHeld;
}

/** A claim refused until `until` (its settle time from the send): the state machine waits the seconds that lead the message. */
export class SettleWaitError extends AgentError {
  override readonly name = ErrorNames.SettleWait;
  readonly seconds: number;

  constructor(seconds: number, message: string) {
    const whole = Math.max(1, Math.ceil(seconds));
    super(`${whole} s to wait (settle): ${message}`);
    this.seconds = whole;
  }
}

/** An agent tool's child run has not finished: the state machine waits for it (see `ErrorNames.ChildRunPending`). */
export class ChildRunPendingError extends AgentError {
  override readonly name = ErrorNames.ChildRunPending;
}

/** A call that needs approval, not yet asked for: the state machine asks (see `ErrorNames.ApprovalNeeded`). */
export class ApprovalNeededError extends AgentError {
  override readonly name = ErrorNames.ApprovalNeeded;
}

export class CircuitOpenError extends AgentError {
  override readonly name = ErrorNames.CircuitOpen;
}

/**
 * Input that is wrong and stays wrong: never retried. From outside a run it fails at once naming
 * the field; thrown by a tool, it is answered to the model as an error result (it can correct itself).
 */
export class InvalidInputError extends AgentError {
  /** `Agent.InvalidInput`: not retried. */
  override readonly name = ErrorNames.InvalidInput;
}

/**
 * Input from outside that names something that does not exist (a fork of a run the ledger does
 * not hold): invalid input like any (never retried), which an HTTP API answers 404, not 400.
 */
export class NotFoundError extends InvalidInputError {}

/** A failure that no retry mends (a refused key, a conflict): not retried. */
export class TerminalError extends AgentError {
  /** `Agent.Terminal`: not retried. */
  override readonly name = ErrorNames.Terminal;
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
export class HttpTransientError extends TransientError implements HttpAnswer {
  /** The response status. */
  readonly status: number;
  /** The response body as received. */
  readonly body: string;

  constructor(message: string, status: number, body: string) {
    super(message, { cause: { status, body } });
    this.status = status;
    this.body = body;
  }
}

/**
 * A 400 or 404 answer from an HTTP provider (`JsonHttpClient`): `Agent.InvalidInput`, the
 * arguments are wrong; a tool returns it to the model. A `DELETE` of what is gone already is
 * this with `status` 404.
 */
export class HttpInvalidInputError extends InvalidInputError implements HttpAnswer {
  /** The response status. */
  readonly status: number;
  /** The response body as received. */
  readonly body: string;

  constructor(message: string, status: number, body: string) {
    super(message, { cause: { status, body } });
    this.status = status;
    this.body = body;
  }
}

/** Any other 4xx answer from an HTTP provider (`JsonHttpClient`: 401, 403, 409, 422, …): `Agent.Terminal`. */
export class HttpTerminalError extends TerminalError implements HttpAnswer {
  /** The response status. */
  readonly status: number;
  /** The response body as received. */
  readonly body: string;

  constructor(message: string, status: number, body: string) {
    super(message, { cause: { status, body } });
    this.status = status;
    this.body = body;
  }
}

export class VersionMismatchError extends AgentError {
  override readonly name = ErrorNames.VersionMismatch;
}

/** A ledger record that fails verification; the message names the run, the record and why. */
export class LedgerIntegrityError extends AgentError {
  override readonly name = ErrorNames.LedgerIntegrity;

  constructor(where: { runId?: string; record: string }, why: string) {
    super(`ledger integrity: ${where.runId === undefined ? '' : `run ${where.runId}, `}record ${where.record} fails verification: ${why}`);
  }
}

/**
 * The provider answered, but not in the shape it promised. Terminal for a call that may have
 * changed the world (its outcome is unknown); a read-only tool returns it to the model instead.
 */
export class MalformedResponseError extends TerminalError {}

/** Faults that mean the provider is down or overloaded: what a circuit breaker counts. */
export function isOutage(error: unknown): boolean {
  return error instanceof Error && (error.name === ErrorNames.Transient || error.name === ErrorNames.ModelThrottled || error.name === ErrorNames.ModelRetryAfter);
}

export function isRetryable(error: unknown): boolean {
  return error instanceof Error && (RETRYABLE_ERRORS as readonly string[]).includes(error.name);
}

/**
 * A Lambda error reaches a Catch as `Cause` = the JSON of `{ errorType, errorMessage, trace }`;
 * the run record keeps the message a person needs, not the stack.
 */
export function causeMessage(cause: string | undefined): string {
  if (!cause) return '';
  const { errorMessage } = causeObject(cause);
  return typeof errorMessage === 'string' ? errorMessage : cause;
}

/** The stack of such a cause (its `trace`, one frame a line), when it has one. */
export function causeTrace(cause: string | undefined): string | undefined {
  const { trace } = causeObject(cause ?? '');
  return Array.isArray(trace) ? trace.join('\n') : undefined;
}

function causeObject(cause: string): { errorMessage?: unknown; trace?: unknown } {
  try {
    const parsed: unknown = JSON.parse(cause);
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}
