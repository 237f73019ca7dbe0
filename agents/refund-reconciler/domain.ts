import { CalendarDate } from 'savepoint';
import * as z from 'zod';

/**
 * The refund reconciler's world, as the payments provider (the "commerce API") serves it.
 * Amounts are integer cents; ids are the provider's. These schemas validate what comes back from
 * the provider, what the sample day file holds, and what the simulated model reads.
 */

/** A real calendar date, YYYY-MM-DD (2026-02-30 is refused). */
export const IsoDate = CalendarDate;
export const Cents = z.number().int().nonnegative();

export const RefundRequest = z.object({
  id: z.string().min(1),
  orderId: z.string().min(1),
  paymentId: z.string().min(1),
  amountCents: Cents,
  currency: z.literal('usd'),
  reason: z.string(),
  requestedAt: z.string(),
});
export type RefundRequest = z.infer<typeof RefundRequest>;

export const Order = z.object({
  id: z.string().min(1),
  customerId: z.string().min(1),
  totalCents: Cents,
  currency: z.literal('usd'),
  status: z.enum(['delivered', 'returned', 'cancelled', 'partially_returned']),
  items: z.array(z.object({ sku: z.string(), quantity: z.number().int().positive(), unitCents: Cents })),
});
export type Order = z.infer<typeof Order>;

export const Refund = z.object({
  id: z.string().min(1),
  paymentId: z.string().min(1),
  amountCents: Cents,
  currency: z.literal('usd'),
  reason: z.string(),
  refundRequestId: z.string().min(1),
  createdAt: z.string(),
});
export type Refund = z.infer<typeof Refund>;

export const Payment = z.object({
  id: z.string().min(1),
  orderId: z.string().min(1),
  amountCents: Cents,
  refundedCents: Cents,
  currency: z.literal('usd'),
  status: z.enum(['succeeded', 'partially_refunded', 'refunded']),
  refunds: z.array(Refund),
});
export type Payment = z.infer<typeof Payment>;

export const Review = z.object({
  id: z.string().min(1),
  refundRequestId: z.string().min(1),
  reason: z.string(),
  createdAt: z.string(),
});
export type Review = z.infer<typeof Review>;

export const ReportSummary = z.object({
  issued: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
  flagged: z.number().int().nonnegative(),
  issuedCents: Cents,
});
export type ReportSummary = z.infer<typeof ReportSummary>;

export const Report = z.object({
  id: z.string().min(1),
  date: IsoDate,
  summary: ReportSummary,
  text: z.string(),
  createdAt: z.string(),
});
export type Report = z.infer<typeof Report>;

/**
 * A day of refund requests: the bundled sample (events/sample-day.json) and what the simulated
 * provider is seeded with. `refunds` are refunds paid before the run (the "already refunded" cases).
 */
export const Day = z.object({
  date: IsoDate,
  refundRequests: z.array(RefundRequest),
  orders: z.array(Order),
  payments: z.array(Payment.omit({ refundedCents: true, status: true, refunds: true })),
  refunds: z.array(Refund),
});
export type Day = z.infer<typeof Day>;

/** What the tools need from the payments provider. One implementation talks HTTP to it. */
export interface CommerceApi {
  listRefundRequests(date: string, signal?: AbortSignal): Promise<RefundRequest[]>;
  getOrder(orderId: string, signal?: AbortSignal): Promise<Order>;
  getPayment(paymentId: string, signal?: AbortSignal): Promise<Payment>;
  /** Same key + same parameters → the first refund; same key + other parameters → Terminal error. */
  createRefund(
    input: { paymentId: string; amountCents: number; reason: string; refundRequestId: string },
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<Refund>;
  createReview(input: { refundRequestId: string; reason: string }, idempotencyKey: string, signal?: AbortSignal): Promise<Review>;
  postReport(
    input: { date: string; summary: ReportSummary; text: string },
    idempotencyKey: string,
    signal?: AbortSignal,
  ): Promise<Report>;
}

/** An amount in cents, in dollars: `$12.34`. */
export function dollars(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}
