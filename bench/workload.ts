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
 * Nothing needs an approval (no refund above the threshold), so every step is one outside call.
 * The benchmark checks the count on a fault-free run before it measures anything.
 */
export function dayWithSteps(steps: number, seed = 1): { day: Day; mix: Mix } {
  if (!Number.isInteger(steps) || steps < 10) throw new RangeError(`steps must be an integer ≥ 10, got ${steps}`);
  const requests = Math.ceil((steps - 6) / 4);
  const skipped = 4 * requests + 6 - steps;
  const mismatch = Math.max(1, Math.round(requests / 10));
  const mix: Mix = { plain: requests - skipped - mismatch, already_refunded: skipped, mismatch, large: 0 };
  // A last request already refunded would end the run a turn early: pick a seed whose day does not.
  for (let attempt = seed; attempt < seed + 100; attempt++) {
    const day = makeSampleDay(attempt, mix);
    const last = day.refundRequests.at(-1)!;
    if (!day.refunds.some((refund) => refund.refundRequestId === last.id)) return { day, mix };
  }
  throw new Error(`no day of ${steps} steps found from seed ${seed}`);
}
