import { z } from 'zod';
import { InvalidInputError, MalformedResponseError, TerminalError, TransientError, parseOrThrow } from 'savepoint';
import {
  Order,
  Payment,
  Refund,
  RefundRequest,
  Report,
  Review,
  type CommerceApi,
  type ReportSummary,
} from './domain.js';

/**
 * The payments provider over HTTP. Its job beyond transport is translating every failure into the
 * error contract (lambdas/shared/errors.ts), because the state machine retries on `error.name`:
 * - network errors, timeouts, 5xx and 429 → `Agent.Transient` (the same call may succeed later;
 *   POSTs are safe to resend because they carry the caller's idempotency key);
 * - 400 / 404 → `Agent.InvalidInput` (the arguments are wrong; the provider's message says why);
 * - 401 / 403 / 409 / 422 (auth, idempotency-key reuse) and any other 4xx → `Agent.Terminal`;
 * - a 2xx body that does not match the domain schema → `Agent.Terminal`: the provider broke its
 *   contract, and retrying will not fix that.
 */

export interface HttpCommerceApiOptions {
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

export class HttpCommerceApi implements CommerceApi {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: HttpCommerceApiOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  async listRefundRequests(date: string, signal?: AbortSignal): Promise<RefundRequest[]> {
    const path = `/v1/refund_requests?date=${encodeURIComponent(date)}`;
    return (await this.request('GET', path, list(RefundRequest), { signal })).data;
  }

  getOrder(orderId: string, signal?: AbortSignal): Promise<Order> {
    return this.request('GET', `/v1/orders/${encodeURIComponent(orderId)}`, Order, { signal });
  }

  getPayment(paymentId: string, signal?: AbortSignal): Promise<Payment> {
    return this.request('GET', `/v1/payments/${encodeURIComponent(paymentId)}`, Payment, { signal });
  }

  createRefund(
    input: { paymentId: string; amountCents: number; reason: string; refundRequestId: string },
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<Refund> {
    return this.request('POST', '/v1/refunds', Refund, { body: input, idempotencyKey, signal });
  }

  createReview(input: { refundRequestId: string; reason: string }, idempotencyKey: string, signal?: AbortSignal): Promise<Review> {
    return this.request('POST', '/v1/reviews', Review, { body: input, idempotencyKey, signal });
  }

  postReport(
    input: { date: string; summary: ReportSummary; text: string },
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<Report> {
    return this.request('POST', '/v1/reports', Report, { body: input, idempotencyKey, signal });
  }

  /** What the provider paid, reviewed and reported (not part of `CommerceApi`: for the CLI and tests). */
  async listRefunds(signal?: AbortSignal): Promise<Refund[]> {
    return (await this.request('GET', '/v1/refunds', list(Refund), { signal })).data;
  }

  async listReviews(signal?: AbortSignal): Promise<Review[]> {
    return (await this.request('GET', '/v1/reviews', list(Review), { signal })).data;
  }

  async listReports(signal?: AbortSignal): Promise<Report[]> {
    return (await this.request('GET', '/v1/reports', list(Report), { signal })).data;
  }

  private async request<S extends z.ZodType>(
    method: 'GET' | 'POST',
    path: string,
    schema: S,
    options: RequestOptions,
  ): Promise<z.output<S>> {
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
      // Whatever ended the call (reset, refused, timeout, the caller's deadline), the provider may
      // or may not have acted: the same call with the same key is the way to find out.
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
