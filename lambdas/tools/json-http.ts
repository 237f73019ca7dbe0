import * as z from 'zod';
import { InvalidInputError, MalformedResponseError, TerminalError, TransientError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { deadline } from '../shared/deadline.js';
import { realTimers, type Timers } from '../shared/ports.js';

/**
 * JSON over HTTP for an agent's tool backends, translating every failure into savepoint's error
 * contract (the state machine retries on `error.name`):
 * - network errors, timeouts, 5xx and 429 → `Agent.Transient`: the same call may succeed later
 *   (a POST is safe to resend with the caller's idempotency key, or after the tool's `reconcile`);
 * - 400 / 404 → `Agent.InvalidInput`: the arguments are wrong; the provider's message says why
 *   (a tool returns it to the model);
 * - 401 / 403 / 409 / 422 and any other 4xx → `Agent.Terminal`;
 * - a 2xx body that does not match the schema → `MalformedResponseError` (an `Agent.Terminal`:
 *   the provider broke its contract; a read shows it to the model instead).
 */
export interface JsonHttpClientOptions {
  /** e.g. `http://127.0.0.1:54321` */
  readonly baseUrl: string;
  /** Per request, including reading the body. @default 10_000 */
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
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;
  readonly #timers: Timers;

  constructor(options: JsonHttpClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#timers = options.timers ?? realTimers;
  }

  async request<S extends z.ZodType>(method: 'GET' | 'POST', path: string, schema: S, options: JsonRequestOptions = {}): Promise<z.output<S>> {
    const what = `${method} ${path.split('?')[0]}`;
    const limit = deadline(this.#timeoutMs, options.signal, this.#timers);
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
      // Whatever ended the call (reset, refused, timeout, the caller's deadline), the provider may
      // or may not have acted: the same call with the same key (or a reconcile) finds out.
      const reason = limit.timedOut() ? `timed out after ${this.#timeoutMs} ms` : options.signal?.aborted ? 'aborted by the caller' : 'network error';
      throw new TransientError(`${what} failed: ${reason}: ${describe(error)}`, { cause: error });
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
