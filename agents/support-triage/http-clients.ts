import { z } from 'zod';
import { InvalidInputError, MalformedResponseError, TerminalError, TransientError, parseOrThrow } from 'savepoint';
import { Escalation, KbHit, SentMail, Ticket, TicketSummary, type Queue } from './domain.js';

/**
 * The support-triage agent's providers over HTTP: the helpdesk and the mail provider. Beyond
 * transport, their job is translating every failure into savepoint's error contract, because the
 * state machine retries on `error.name`:
 * - network errors, timeouts, 5xx and 429 → `Agent.Transient`. For the mail send this includes a
 *   connection lost after the provider sent the mail: the retry does not blindly send again, the
 *   harness first runs the tool's `reconcile`, which searches sent mail for the key header;
 * - 400 / 404 → `Agent.InvalidInput` (wrong arguments; the provider's message says why);
 * - 401 / 403 / 409 / 422 and any other 4xx → `Agent.Terminal`;
 * - a 2xx body that does not match the schema → `MalformedResponseError`, an `Agent.Terminal`
 *   (the provider broke its contract; retrying will not fix it; a read shows it to the model).
 */

export interface HttpClientOptions {
  /** e.g. `http://127.0.0.1:54321` */
  readonly baseUrl: string;
  /** Per request, including reading the body. @default 10_000 */
  readonly timeoutMs?: number;
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
}

interface RequestOptions {
  readonly body?: unknown;
  readonly idempotencyKey?: string;
  readonly signal?: AbortSignal;
}

const ProviderError = z.object({ error: z.object({ type: z.string(), message: z.string() }) });
const list = <S extends z.ZodType>(item: S) => z.object({ data: z.array(item) });

/** JSON over HTTP with the error mapping above; the two clients below are thin routes on it. */
class JsonHttp {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: HttpClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  async request<S extends z.ZodType>(method: 'GET' | 'POST', path: string, schema: S, options: RequestOptions = {}): Promise<z.output<S>> {
    const what = `${method} ${path.split('?')[0]}`;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    if (options.idempotencyKey !== undefined) headers['Idempotency-Key'] = options.idempotencyKey;

    let status: number;
    let text: string;
    try {
      const response = await this.fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal,
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      // Whatever ended the call, the provider may or may not have acted: retrying (with the key,
      // or after reconciling) is how the harness finds out.
      const reason = timeout.aborted ? `timed out after ${this.timeoutMs} ms` : options.signal?.aborted ? 'aborted by the caller' : 'network error';
      throw new TransientError(`${what} failed: ${reason}: ${describe(error)}`, { cause: error });
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

/** The helpdesk: an inbox's tickets, the knowledge base, and the escalation queue (which takes idempotency keys). */
export class HelpdeskClient {
  private readonly http: JsonHttp;

  constructor(options: HttpClientOptions) {
    this.http = new JsonHttp(options);
  }

  async listTickets(inbox: string, since: string | undefined, signal?: AbortSignal): Promise<TicketSummary[]> {
    const query = since === undefined ? '' : `?since=${encodeURIComponent(since)}`;
    return (await this.http.request('GET', `/v1/inboxes/${encodeURIComponent(inbox)}/tickets${query}`, list(TicketSummary), { signal })).data;
  }

  getTicket(ticketId: string, signal?: AbortSignal): Promise<Ticket> {
    return this.http.request('GET', `/v1/tickets/${encodeURIComponent(ticketId)}`, Ticket, { signal });
  }

  async searchKb(query: string, signal?: AbortSignal): Promise<KbHit[]> {
    return (await this.http.request('GET', `/v1/kb/search?q=${encodeURIComponent(query)}`, list(KbHit), { signal })).data;
  }

  /** Same key + same parameters → the first escalation; same key + other parameters → Terminal. */
  escalate(input: { ticketId: string; queue: Queue; reason: string }, idempotencyKey: string, signal?: AbortSignal): Promise<Escalation> {
    return this.http.request('POST', '/v1/escalations', Escalation, { body: input, idempotencyKey, signal });
  }

  /** Every escalation (for the CLI and tests). */
  async listEscalations(signal?: AbortSignal): Promise<Escalation[]> {
    return (await this.http.request('GET', '/v1/escalations', list(Escalation), { signal })).data;
  }
}

/** The mail provider: no idempotency keys; sent mail can be searched by a custom header instead. */
export class MailClient {
  private readonly http: JsonHttp;

  constructor(options: HttpClientOptions) {
    this.http = new JsonHttp(options);
  }

  /** Sends one mail. Every call sends one more: a caller that retries must reconcile first. */
  send(mail: { to: string; subject: string; text: string; inReplyTo?: string; headers: Record<string, string> }, signal?: AbortSignal): Promise<SentMail> {
    return this.http.request('POST', '/v1/mail/send', SentMail, { body: mail, signal });
  }

  /** The sent mail carrying `header: value`, oldest first. */
  async findSent(header: string, value: string, signal?: AbortSignal): Promise<SentMail[]> {
    const query = `?header=${encodeURIComponent(header)}&value=${encodeURIComponent(value)}`;
    return (await this.http.request('GET', `/v1/mail/sent${query}`, list(SentMail), { signal })).data;
  }

  /** Every mail sent (for the CLI and tests). */
  async listSent(signal?: AbortSignal): Promise<SentMail[]> {
    return (await this.http.request('GET', '/v1/mail/sent', list(SentMail), { signal })).data;
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
