import type { Day } from '../agents/refund-reconciler/domain.js';
import { makeSampleDay, type Mix } from '../agents/refund-reconciler/make-sample-day.js';

/**
 * A day whose reconciliation takes exactly `steps` agent steps — model turns plus tool calls —
 * when nothing fails. The simulated reconciler pipelines its work: one model turn and two lookups
 * (order, payment) per refund request, plus one decision call (refund, or flag for review) except
 * for a request already refunded, plus six (the listing turn and call, the report turn and call,
 * the turn that decides the last request, the final answer):
 *
 *   steps = 4 · requests + 6 − already refunded
 *
 * Nothing needs an approval (no refund above the threshold) unless `approvals` asks for that many
 * refunds above it, taken from the plain requests first, then from the mismatches (so a day of
 * one request can be one that waits): an approval adds a wait, not a step. Every step is one
 * outside call. The benchmark checks the count on a fault-free run before it measures anything.
 */
export function dayWithSteps(steps: number, seed = 1, approvals = 0): { day: Day; mix: Mix } {
  if (!Number.isInteger(steps) || steps < 10) throw new RangeError(`steps must be an integer ≥ 10, got ${steps}`);
  const requests = Math.ceil((steps - 6) / 4);
  const skipped = 4 * requests + 6 - steps;
  if (approvals !== 0 && !(Number.isInteger(approvals) && approvals > 0 && approvals <= requests - skipped)) throw new RangeError(`approvals must be an integer from 0 to ${requests - skipped} at ${steps} steps, got ${approvals}`);
  const mismatch = Math.min(Math.max(1, Math.round(requests / 10)), requests - skipped - approvals);
  const mix: Mix = { plain: requests - skipped - mismatch - approvals, already_refunded: skipped, mismatch, large: approvals };
  // A last request already refunded would end the run a turn early: pick a seed whose day does not.
  for (let attempt = seed; attempt < seed + 100; attempt++) {
    const day = makeSampleDay(attempt, mix);
    const last = day.refundRequests.at(-1)!;
    if (!day.refunds.some((refund) => refund.refundRequestId === last.id)) return { day, mix };
  }
  throw new Error(`no day of ${steps} steps found from seed ${seed}`);
}

/**
 * `day` with every id of its own (refund requests, orders, payments, earlier refunds) under
 * `prefix`: a day of other refund requests, reconciled the same way. The refund and review tools
 * key their effects by refund request (a business key, held across runs), so runs of one day
 * after the first pay nothing and record nothing new; runs of days of their own each do.
 */
export function dayWithPrefix(day: Day, prefix: string): Day {
  const id = (value: string) => `${prefix}${value}`;
  return {
    ...day,
    refundRequests: day.refundRequests.map((request) => ({ ...request, id: id(request.id), orderId: id(request.orderId), paymentId: id(request.paymentId) })),
    orders: day.orders.map((order) => ({ ...order, id: id(order.id) })),
    payments: day.payments.map((payment) => ({ ...payment, id: id(payment.id), orderId: id(payment.orderId) })),
    refunds: day.refunds.map((refund) => ({ ...refund, id: id(refund.id), paymentId: id(refund.paymentId), refundRequestId: id(refund.refundRequestId) })),
  };
}
