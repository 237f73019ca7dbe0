import type { Run } from './run.js';

/**
 * A refusal of the API: its HTTP status, the message naming the problem and, when the API answered
 * with the run the request conflicts with (a 409: a start under a run id another input or model
 * holds, a fork under a taken run id, a cancel of a run that has ended), that run.
 */
export class RunsApiError extends Error {
  /** Always `RunsApiError`. */
  override readonly name = 'RunsApiError';
  /** The run the API answered the refusal with (`GET /v1/runs/{runId}`'s shape); absent when it named none. */
  readonly run?: Run;
  constructor(
    /** The HTTP status the API answered (400 bad input, 403 the credential, 404 no such run, 409 a conflict with a run, …). */
    readonly status: number,
    message: string,
    details: { run?: Run } = {},
  ) {
    super(message);
    if (details.run !== undefined) this.run = details.run;
  }
}

/**
 * Whether `error` is the runs API's refusal of what was asked (a 4xx): the caller's to fix, never
 * retried. Told by its name, not its class: a client bundled apart (the CLI's, the MCP server's
 * caller's) has a RunsApiError class of its own.
 */
export function isRefusal(error: unknown): error is RunsApiError {
  if (!(error instanceof Error) || error.name !== 'RunsApiError') return false;
  const { status } = error as RunsApiError;
  return status >= 400 && status < 500;
}

/** What an API's refusal says: its JSON body's `message`, else the body, else its status. */
export async function refusalOf(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    return String((JSON.parse(text) as { message?: unknown }).message ?? text);
  } catch {
    return text || `HTTP ${response.status}`;
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
