import { ModelThrottledError, TerminalError, TransientError } from '../shared/errors.js';
import { clip } from '../shared/text.js';

/**
 * What the three per-provider classifiers (anthropic-errors.ts, bedrock-errors.ts, openai-errors.ts)
 * share. Each classifier is a pure function from whatever its SDK threw to one savepoint error:
 *
 * - throttled (429, overloaded): `ModelThrottledError`, carrying `retry-after` when the provider sent
 *   one — the state machine's retry delay must not be shorter;
 * - transient (timeouts, connection errors, 5xx): `TransientError`;
 * - terminal (auth, permission, not found, invalid request, context too long, spend cap):
 *   `TerminalError` whose message says what to fix. Never retried, not an outage (see `isOutage`).
 */

/** Why a terminal refusal happened: each kind names its own remedy. */
export type TerminalKind = 'authentication' | 'permission' | 'not_found' | 'invalid_request' | 'context_too_long' | 'spend_cap' | 'refused';

export interface ProviderFault {
  /** `anthropic`, `bedrock`, `openai`: the prefix of every message, so a log line names the provider. */
  readonly provider: string;
  /** The HTTP status, when there was a response. */
  readonly status?: number | undefined;
  /** The provider's own error type or code (`rate_limit_error`, `ThrottlingException`, `insufficient_quota`). */
  readonly code?: string | undefined;
  readonly message: string;
}

/** What a classifier knows of the call besides the error: where it went and how long it could take. */
export interface ModelCall {
  /** The base URL called, named in a connection error (which has no response to say where). */
  readonly endpoint?: string | undefined;
  /** The client's budget for one call, named when the call outlives it. */
  readonly timeoutMs?: number | undefined;
}

/**
 * A call that outlived the model timeout: how long that was and where it is set, since a model that
 * writes long answers needs it raised, and a bare "timed out", retried six times, does not say so.
 */
export function timedOut({ timeoutMs }: ModelCall): string {
  return timeoutMs === undefined ? 'timed out' : `timed out after ${timeoutMs} ms (the model timeout: MODEL_TIMEOUT_MS, set on AWS by the stack's modelTimeout)`;
}

/** A connection error's message, naming where the call went. */
export function connectionError({ endpoint }: ModelCall, message: string): string {
  return `connection error${endpoint ? ` to ${endpoint}` : ''}: ${message}`;
}

export function throttled(fault: ProviderFault, retryAfterSeconds: number | undefined, cause: unknown): ModelThrottledError {
  const after = retryAfterSeconds === undefined ? '' : ` (retry after ${retryAfterSeconds} s)`;
  return new ModelThrottledError(`${describe(fault)}${after}`, { cause, ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }) });
}

export function transient(fault: ProviderFault, cause: unknown): TransientError {
  return new TransientError(describe(fault), { cause });
}

/** A terminal refusal whose message ends with what the operator has to change, per provider. */
export function terminal(fault: ProviderFault, kind: TerminalKind, remedy: string, cause: unknown): TerminalError {
  return new TerminalError(`${describe(fault)} [${kind}] — ${remedy}`, { cause });
}

function describe(fault: ProviderFault): string {
  const status = fault.status === undefined ? '' : ` ${fault.status}`;
  const code = fault.code ? ` ${fault.code}` : '';
  // Without a status or code (a connection that never got an answer): "failed: connection error …".
  return `${fault.provider} model call failed${status || code ? `:${status}${code}` : ''}: ${clip(fault.message, 300)}`;
}

/** The subset of `Headers` the classifiers read (the Anthropic and OpenAI SDKs hand over a `Headers`). */
export interface HeaderSource {
  get(name: string): string | null | undefined;
}

/** A `HeaderSource` over a plain record of lower-case names (what the AWS SDK keeps on `$response`). */
export function headersOf(record: Record<string, string | undefined>): HeaderSource {
  return { get: (name) => record[name.toLowerCase()] };
}

/**
 * `retry-after-ms` or `retry-after` (seconds or an HTTP date), as whole seconds rounded up; undefined
 * when absent, unparsable or in the past. `now` is injected so that the classifiers stay pure.
 */
export function retryAfterSeconds(headers: HeaderSource | undefined, now: number): number | undefined {
  const ms = Number(header(headers, 'retry-after-ms'));
  if (header(headers, 'retry-after-ms') !== undefined && Number.isFinite(ms) && ms >= 0) return Math.ceil(ms / 1000);
  const value = header(headers, 'retry-after');
  if (value === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.ceil(Number(value));
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  const seconds = Math.ceil((date - now) / 1000);
  return seconds >= 0 ? seconds : undefined;
}

function header(headers: HeaderSource | undefined, name: string): string | undefined {
  const value = headers?.get(name);
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** Whether a 400's message says the prompt does not fit the model's context window. */
export function isContextTooLong(message: string): boolean {
  // Anthropic (and Claude on Bedrock) also: "input length and `max_tokens` exceed context limit: N + M > W".
  return /prompt is too long|context length|context window|context limit|maximum context|too many (input )?tokens|input is too long/i.test(message);
}

export function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // fetch wraps the socket error: the cause says what actually happened.
  return error.cause instanceof Error && error.cause.message !== error.message ? `${error.message} (${error.cause.message})` : error.message;
}
