import * as z from 'zod';
import { HttpInvalidInputError, HttpTerminalError, HttpTransientError, MalformedResponseError, OutcomeUnknownError, TransientError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { deadline } from '../shared/deadline.js';
import { realTimers, type Timers } from '../shared/ports.js';

/**
 * JSON over HTTP for an agent's tool backends, translating every failure into savepoint's error
 * contract (the state machine retries on `error.name`):
 * - 5xx and 429 → `HttpTransientError`, and a connection that could not be made →
 *   `TransientError` (both `Agent.Transient`): the same call may succeed later;
 * - a request that may have reached the provider and got no answer (its deadline passed, it was
 *   aborted, the connection dropped) → `OutcomeUnknownError` (an `Agent.Transient`): a write's
 *   outcome is unknown, so CallTool resends it only under its idempotency key or after the tool's
 *   `reconcile`, and escalates it otherwise; a read that timed out is told to the model;
 * - 400 / 404 → `HttpInvalidInputError` (`Agent.InvalidInput`): the arguments are wrong; the
 *   provider's message says why (a tool returns it to the model);
 * - 401 / 403 / 409 / 422 and any other 4xx → `HttpTerminalError` (`Agent.Terminal`);
 * - a 2xx body that does not match the schema → `MalformedResponseError` (an `Agent.Terminal`:
 *   the provider broke its contract; a read shows it to the model instead). An empty 2xx body (a
 *   204) is `undefined` to the schema: `z.undefined()` accepts it.
 *
 * The three `Http…Error`s carry the answer's `status` and `body` (`HttpAnswer`).
 */
/** Where a `JsonHttpClient` sends its requests and how long each may take. */
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
  /** What sends the requests: give it a tool's `deps` context `fetch` (a local run reaches the simulated world through it). @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Where `timeoutMs` is timed (a test's clock times it out with no real wait). @default real timers */
  readonly timers?: Timers;
}

/** The methods `JsonHttpClient` sends. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One request's options. */
export interface JsonRequestOptions {
  /** Sent as JSON. @default no body */
  readonly body?: unknown;
  /** Sent as `Idempotency-Key` (the header payment APIs deduplicate on). */
  readonly idempotencyKey?: string;
  /** Aborts the request: a tool passes its `context.signal`. @default none (bounded by `timeoutMs`) */
  readonly signal?: AbortSignal;
}

const ProviderError = z.object({ error: z.object({ type: z.string(), message: z.string() }) });

/**
 * One list schema per item schema: zod compiles an object schema on its first parse, so a tool
 * that asks `listOf(Item)` on every call would compile it again on every call.
 */
const lists = new WeakMap<z.ZodType, z.ZodObject<{ data: z.ZodArray<z.ZodType> }, z.core.$strip>>();

/** `{ data: [item…] }`, the shape list routes answer with: the schema of one (the same schema for the same item's). */
export const listOf = <S extends z.ZodType>(item: S): z.ZodObject<{ data: z.ZodArray<S> }, z.core.$strip> => {
  let list = lists.get(item) as z.ZodObject<{ data: z.ZodArray<S> }, z.core.$strip> | undefined;
  if (list === undefined) lists.set(item, (list = z.object({ data: z.array(item) })));
  return list;
};

/**
 * A JSON HTTP client for a tool's backend whose every failure is one of savepoint's errors (above).
 *
 * @example
 * ```ts
 * import * as z from 'zod';
 * import { HttpInvalidInputError, JsonHttpClient } from 'savepoint';
 *
 * const http = new JsonHttpClient({ baseUrl: 'https://payments.example.com' });
 * const Refund = z.object({ id: z.string(), status: z.string() });
 * const refund = await http.post('/refunds', Refund, { body: { amount: 500 }, idempotencyKey: 'run-1:turn-3:call-1' });
 * await http.patch(`/refunds/${refund.id}`, Refund, { body: { note: 'checked' } });
 * try {
 *   await http.delete(`/holds/${refund.id}`, z.undefined()); // a 204
 * } catch (error) {
 *   if (!(error instanceof HttpInvalidInputError && error.status === 404)) throw error; // gone already
 * }
 * ```
 */
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

  /** `GET path`, its answer parsed by `schema`. */
  get<S extends z.ZodType>(path: string, schema: S, options: JsonRequestOptions = {}): Promise<z.output<S>> {
    return this.request('GET', path, schema, options);
  }

  /** `POST path` with `options.body`, its answer parsed by `schema`. */
  post<S extends z.ZodType>(path: string, schema: S, options: JsonRequestOptions = {}): Promise<z.output<S>> {
    return this.request('POST', path, schema, options);
  }

  /** `PUT path` with `options.body`, its answer parsed by `schema`. */
  put<S extends z.ZodType>(path: string, schema: S, options: JsonRequestOptions = {}): Promise<z.output<S>> {
    return this.request('PUT', path, schema, options);
  }

  /** `PATCH path` with `options.body`, its answer parsed by `schema`. */
  patch<S extends z.ZodType>(path: string, schema: S, options: JsonRequestOptions = {}): Promise<z.output<S>> {
    return this.request('PATCH', path, schema, options);
  }

  /** `DELETE path`, its answer parsed by `schema` (`z.undefined()` for a 204). */
  delete<S extends z.ZodType>(path: string, schema: S, options: JsonRequestOptions = {}): Promise<z.output<S>> {
    return this.request('DELETE', path, schema, options);
  }

  /** Sends one request and parses its answer by `schema`; every failure is one of savepoint's errors. */
  async request<S extends z.ZodType>(method: HttpMethod, path: string, schema: S, options: JsonRequestOptions = {}): Promise<z.output<S>> {
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
        body = text === '' ? undefined : JSON.parse(text);
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
    if (status >= 500 || status === 429) throw new HttpTransientError(message, status, text);
    if (status === 400 || status === 404) throw new HttpInvalidInputError(message, status, text);
    throw new HttpTerminalError(message, status, text);
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
