import { JsonHttpClient, listOf as list, type JsonHttpClientOptions } from 'savepoint';
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
 * The payments provider over HTTP, on savepoint's `JsonHttpClient` (which maps every failure to
 * the error contract). POSTs carry the caller's idempotency key; a 409/422 (key reuse with other
 * parameters) is terminal.
 */

export type HttpCommerceApiOptions = JsonHttpClientOptions;

export class HttpCommerceApi implements CommerceApi {
  private readonly http: JsonHttpClient;

  constructor(options: HttpCommerceApiOptions) {
    this.http = new JsonHttpClient(options);
  }
  async listRefundRequests(date: string, signal?: AbortSignal): Promise<RefundRequest[]> {
    const path = `/v1/refund_requests?date=${encodeURIComponent(date)}`;
    return (await this.http.request('GET', path, list(RefundRequest), { signal })).data;
  }

  getOrder(orderId: string, signal?: AbortSignal): Promise<Order> {
    return this.http.request('GET', `/v1/orders/${encodeURIComponent(orderId)}`, Order, { signal });
  }

  getPayment(paymentId: string, signal?: AbortSignal): Promise<Payment> {
    return this.http.request('GET', `/v1/payments/${encodeURIComponent(paymentId)}`, Payment, { signal });
  }

  createRefund(
    input: { paymentId: string; amountCents: number; reason: string; refundRequestId: string },
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<Refund> {
    return this.http.request('POST', '/v1/refunds', Refund, { body: input, idempotencyKey, signal });
  }

  createReview(input: { refundRequestId: string; reason: string }, idempotencyKey: string, signal?: AbortSignal): Promise<Review> {
    return this.http.request('POST', '/v1/reviews', Review, { body: input, idempotencyKey, signal });
  }

  postReport(
    input: { date: string; summary: ReportSummary; text: string },
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<Report> {
    return this.http.request('POST', '/v1/reports', Report, { body: input, idempotencyKey, signal });
  }

  /** What the provider paid, reviewed and reported (not part of `CommerceApi`: for the CLI and tests). */
  async listRefunds(signal?: AbortSignal): Promise<Refund[]> {
    return (await this.http.request('GET', '/v1/refunds', list(Refund), { signal })).data;
  }

  async listReviews(signal?: AbortSignal): Promise<Review[]> {
    return (await this.http.request('GET', '/v1/reviews', list(Review), { signal })).data;
  }

  async listReports(signal?: AbortSignal): Promise<Report[]> {
    return (await this.http.request('GET', '/v1/reports', list(Report), { signal })).data;
  }
}
