/** A refusal of the API: its HTTP status and the message naming the problem. */
export class RunsApiError extends Error {
  /** Always `RunsApiError`. */
  override readonly name = 'RunsApiError';
  constructor(
    /** The HTTP status the API answered (400 bad input, 403 the credential, 404 no such run, …). */
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What a wait stopped by its `signal` rejects with: named `AbortError` with the code `ABORT_ERR`,
 * as Node's own aborted calls (`fetch`, `timers/promises`) are, so a caller tells it from a failure
 * the same way; its `cause` is the signal's reason.
 */
export function abortError(message: string, signal: AbortSignal | undefined): Error {
  return Object.assign(new Error(message, { cause: signal?.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
}
