import * as z from 'zod';
import { InvalidInputError, MalformedResponseError, OutcomeUnknownError, TerminalError, TransientError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { deadline } from '../shared/deadline.js';
import { realTimers, type Timers } from '../shared/ports.js';

/**
 * JSON over HTTP for an agent's tool backends, translating every failure into savepoint's error
 * contract (the state machine retries on `error.name`):
 * - 5xx, 429 and a connection that could not be made → `Agent.Transient`: the same call may
 *   succeed later;
 * - a request that may have reached the provider and got no answer (its deadline passed, it was
 *   aborted, the connection dropped) → `OutcomeUnknownError` (an `Agent.Transient`): a write's
 *   outcome is unknown, so CallTool resends it only under its idempotency key or after the tool's
 *   `reconcile`, and escalates it otherwise; a read that timed out is told to the model;
 * - 400 / 404 → `Agent.InvalidInput`: the arguments are wrong; the provider's message says why
 *   (a tool returns it to the model);
 * - 401 / 403 / 409 / 422 and any other 4xx → `Agent.Terminal`;
 * - a 2xx body that does not match the schema → `MalformedResponseError` (an `Agent.Terminal`:
 *   the provider broke its contract; a read shows it to the model instead).
 */
export interface JsonHttpClientOptions {
  /** e.g. `http://127.0.0.1:54321` */
  readonly baseUrl: string;
  /**
   * A limit per request, including reading the body, besides the caller's signal. A tool passes
   * its `context.signal`, which is aborted when the tool's own time runs out (its `timeoutMs`, the
   * run's wall clock, the step's deadline): that is the request's deadline, and no shorter one is
   * set unless given here. @default none with a signal; 10_000 without one
   */
  readonly timeoutMs?: number;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Where `timeoutMs` is timed (a test's clock times it out with no real wait). @default real timers */
  readonly timers?: Timers;
}

export interface JsonRequestOptions {
  readonly body?: unknown;
  /** Sent as `Idempotency-Key` (the header payment APIs deduplicate on). */
  readonly idempotencyKey?: string;
  readonly signal?: AbortSignal;
}

const ProviderError = z.object({ error: z.object({ type: z.string(), message: z.string() }) });

/** `{ data: [item…] }`, the shape list routes answer with. */
export const listOf = <S extends z.ZodType>(item: S) => z.object({ data: z.array(item) });

export class JsonHttpClient {
  readonly #baseUrl: string;
  readonly #timeoutMs: number | undefined;
  readonly #fetch: typeof fetch;
  readonly #timers: Timers;

  constructor(options: JsonHttpClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#timeoutMs = options.timeoutMs;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#timers = options.timers ?? realTimers;
  }

  async request<S extends z.ZodType>(method: 'GET' | 'POST', path: string, schema: S, options: JsonRequestOptions = {}): Promise<z.output<S>> {
    const what = `${method} ${path.split('?')[0]}`;
    // The caller's signal is the deadline (a tool's: its remaining time); a request with neither
    // a signal nor a limit of its own is bounded all the same.
    const timeoutMs = this.#timeoutMs ?? (options.signal ? undefined : NO_SIGNAL_TIMEOUT_MS);
    const limit = deadline(timeoutMs, options.signal, this.#timers);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    if (options.idempotencyKey !== undefined) headers['Idempotency-Key'] = options.idempotencyKey;

    let status: number;
    let text: string;
    try {
      const response = await this.#fetch(`${this.#baseUrl}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: limit.signal,
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      // A connection never made sent nothing: the same call is safe to make again. Anything else
      // (a deadline, an abort, a reset or a dropped answer) came after the request may have
      // reached the provider, which may or may not have acted: its outcome is unknown.
      const callerGaveUp = !limit.timedOut() && options.signal?.aborted === true;
      const reason = limit.timedOut() ? `timed out after ${timeoutMs} ms` : callerGaveUp ? `aborted by the caller (${describe(options.signal!.reason)})` : 'network error';
      const message = `${what} failed: ${reason}: ${describe(error)}`;
      if (neverSent(error)) throw new TransientError(message, { cause: error });
      throw new OutcomeUnknownError(message, { cause: error, timedOut: limit.timedOut() || (callerGaveUp && isTimeout(options.signal!.reason)) });
    } finally {
      limit.done();
    }

    if (status >= 200 && status < 300) {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (error) {
        throw new MalformedResponseError(`${what} → ${status}: response is not JSON`, { cause: error });
      }
      try {
        return parseOrThrow(schema, body, `${what} response`);
      } catch (error) {
        throw new MalformedResponseError(`${what} → ${status}: provider broke its contract: ${describe(error)}`, { cause: error });
      }
    }
    const message = `${what} → ${status}: ${providerMessage(text)}`;
    const cause = { status, body: text };
    if (status >= 500 || status === 429) throw new TransientError(message, { cause });
    if (status === 400 || status === 404) throw new InvalidInputError(message, { cause });
    throw new TerminalError(message, { cause });
  }
}

/** A request without a signal and without `timeoutMs` is still bounded. */
const NO_SIGNAL_TIMEOUT_MS = 10_000;

/** Failures that happen before a request can leave: no connection was made, so nothing was sent. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ERR_INVALID_URL']);

function neverSent(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string' && NOT_SENT_CODES.has(cause.code);
}

/** An abort whose reason is a timeout: a `TimeoutError`, or the tool's own timeout (an attempt cut for time). */
function isTimeout(reason: unknown): boolean {
  if (!(reason instanceof Error)) return false;
  return reason.name === 'TimeoutError' || (reason.name === 'AttemptCut' && (reason as { cut?: { kind?: string } }).cut?.kind === 'timeout');
}

/** `type: message` from a `{ error: { type, message } }` body, or the start of whatever came back. */
function providerMessage(text: string): string {
  try {
    const parsed = ProviderError.safeParse(JSON.parse(text));
    if (parsed.success) return `${parsed.data.error.type}: ${parsed.data.error.message}`;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 200) || '(empty body)';
}

/** An error's message plus its cause's (fetch says only "fetch failed"; the cause says why). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}
