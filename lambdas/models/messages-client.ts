import { InvalidInputError, ModelThrottledError, TerminalError, TransientError } from '../shared/errors.js';
import { isRecord } from '../shared/json.js';
import { clip } from '../shared/text.js';
import { parseOrThrow } from '../shared/validation.js';
import { toAnthropicParams } from './anthropic-params.js';
import { deadline } from '../shared/deadline.js';
import { realTimers, type Timers } from '../shared/ports.js';
import { MessageResponse, withoutCutCalls, type MessageRequest, type ModelClient } from '../records/messages.js';

export interface HttpMessagesClientOptions {
  /** e.g. `http://127.0.0.1:4010` or `https://api.anthropic.com`; `/v1/messages` is appended. */
  baseUrl: string;
  apiKey: string;
  /** Budget of one call, connection to last byte. @default 60_000 */
  timeoutMs?: number;
  /** Where `timeoutMs` is timed (a test's clock times it out with no real wait). @default real timers */
  timers?: Timers;
  fetch?: typeof fetch;
  /**
   * Send `cache_control` breakpoints (system prompt, last tool, last block of the conversation),
   * as the Anthropic adapter does; off, the request carries none and nothing is cached (the
   * baseline of `npm run bench -- --cost`). @default true
   */
  promptCaching?: boolean;
}

const ANTHROPIC_VERSION = '2023-06-01';

/**
 * A `ModelClient` speaking the Anthropic Messages wire format over HTTP. Provider faults become the
 * error names the state machine retries on (shared/errors.ts): throttling and transient faults are
 * retried, refusals are not, and a response of the wrong shape is invalid input — the model's output
 * is outside input to the run.
 */
export class HttpMessagesClient implements ModelClient {
  readonly #url: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #timers: Timers;
  readonly #fetch: typeof fetch;
  readonly #caching: boolean;

  constructor(options: HttpMessagesClientOptions) {
    this.#url = `${options.baseUrl.replace(/\/+$/, '')}/v1/messages`;
    this.#apiKey = options.apiKey;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#timers = options.timers ?? realTimers;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#caching = options.promptCaching ?? true;
  }

  async createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse> {
    // Built before the send: a request it refuses (a tool's input schema that is no object) is not
    // a network error to retry.
    const sent = JSON.stringify(this.#caching ? toAnthropicParams(request) : request);
    const limit = deadline(this.#timeoutMs, signal, this.#timers);
    let status: number;
    let body: string;
    try {
      const response = await this.#fetch(this.#url, {
        method: 'POST',
        headers: { 'x-api-key': this.#apiKey, 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json' },
        body: sent,
        signal: limit.signal,
      });
      status = response.status;
      body = await response.text();
    } catch (error) {
      // Connection refused/reset, a timeout, or the caller giving up (e.g. the Lambda deadline):
      // the same call may succeed on another attempt.
      const why = limit.timedOut() ? `timed out after ${this.#timeoutMs} ms` : signal?.aborted ? 'aborted' : 'network error';
      throw new TransientError(`model call ${why}: ${errorMessage(error)}`, { cause: error });
    } finally {
      limit.done();
    }

    if (status >= 200 && status < 300) {
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch (error) {
        throw new InvalidInputError(`invalid model response: body is not JSON (${clip(body, 300)})`, { cause: error });
      }
      const response = parseOrThrow(MessageResponse(), json, 'model response');
      // A cut answer's last tool_use may hold half its input: none of its calls is made (records/messages.ts).
      return response.stop_reason === 'max_tokens' ? { ...response, content: withoutCutCalls(response.content) } : response;
    }
    throw statusError(status, body);
  }
}

function statusError(status: number, body: string): Error {
  const detail = `model provider answered ${status}: ${providerMessage(body)}`;
  const cause = { status, body: clip(body, 300) };
  if (status === 429 || status === 529) return new ModelThrottledError(detail, { cause });
  if (status === 408 || status >= 500) return new TransientError(detail, { cause });
  // 400, 401, 403, 404, 413 and the rest of 4xx: the same request will be refused again.
  return new TerminalError(detail, { cause });
}

/** The message of an `{ type: 'error', error: { type, message } }` body, or the body itself. */
function providerMessage(body: string): string {
  try {
    const json: unknown = JSON.parse(body);
    if (isRecord(json) && isRecord(json['error'])) {
      const { type, message } = json['error'];
      if (typeof message === 'string') return typeof type === 'string' ? `${type}: ${message}` : message;
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): show it as it is.
  }
  return clip(body, 300) || '(empty body)';
}

function errorMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // fetch wraps the socket error: the cause says what actually happened.
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
}
