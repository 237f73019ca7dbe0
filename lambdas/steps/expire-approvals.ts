import { deliverToEveryRun, ours, type ApprovalDeps } from '../approvals/decision.js';
import type { ApprovalRecord } from '../records/ledger-records.js';

/** The most expiries of earlier sweeps one sweep delivers again (each a few requests): the rest wait for the next. */
export const MAX_REDELIVERIES = 25;

/**
 * Escalates every pending approval whose deadline has passed: it is recorded as expired and the
 * waiting execution resumes on its `Approval.Expired` catch, which flags the refund for review.
 *
 * Delivery is repeatable, as a decider's retry makes it for a decision (approvals/decision.ts): an
 * expiry is recorded `undelivered` and stays in the pending-approvals index (the query each sweep
 * makes anyway) until its delivery is done, so one that failed — a throttled token read or
 * SendTaskFailure, a sweep timing out after its write — is delivered by the next sweep, a minute
 * later, not by the approval wait's backstop days later. A token nobody waits on any more is
 * passed over (deliverDecision), and the mark dropped.
 *
 *   sweep n:    pending ──(expiry written, undelivered)──> deliver ✗ (throws)
 *   sweep n+1:  listed undelivered ──> deliver ✓ (or nobody waits) ──> mark dropped
 */
export function createExpireApprovals(deps: ApprovalDeps) {
  return async (): Promise<{ expired: string[]; redelivered: string[] }> => {
    const now = deps.clock.now();
    const expired: string[] = [];
    const redelivered: string[] = [];
    const failures: { approvalId: string; error: unknown }[] = [];
    const listed = (await deps.ledger.listPendingApprovals({ undelivered: true })).filter((approval) => ours(deps, approval));
    // The expiries earlier sweeps failed to deliver first: they have waited longest.
    const owed = listed.filter((approval) => approval.status !== 'pending').slice(0, MAX_REDELIVERIES);
    for (const listedOwed of owed) {
      try {
        // The index may lag behind its table, and projects only part of the record: the item itself.
        const approval = await deps.ledger.getApproval(listedOwed.runId, listedOwed.turn, listedOwed.call);
        if (!approval?.undelivered) continue;
        await deliver(deps, approval);
        redelivered.push(approval.approvalId);
      } catch (error) {
        failures.push({ approvalId: listedOwed.approvalId, error });
      }
    }
    for (const approval of listed) {
      if (approval.status !== 'pending' || approval.decideBy > now.toISOString()) continue;
      try {
        const { decided, record } = await deps.ledger.decideApproval(
          approval,
          { status: 'expired', reason: `not decided by ${approval.decideBy}`, decidedBy: 'timeout', decidedVia: 'timeout', waitedMs: now.getTime() - Date.parse(approval.createdAt), undelivered: true },
          now,
        );
        if (!decided) continue;
        expired.push(record.approvalId);
        await deliver(deps, record);
      } catch (error) {
        failures.push({ approvalId: approval.approvalId, error });
      }
    }
    // The others are done; the failed ones are left for the next sweep, and the failure is the function's (its alarm).
    if (failures.length > 0) {
      throw new AggregateError(
        failures.map((failure) => failure.error),
        `approval expiry: ${failures.map(({ approvalId, error }) => `${approvalId}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`).join('; ')} (the next sweep tries again)`,
      );
    }
    return { expired, redelivered };
  };
}

/** Delivers a recorded expiry to its run and the runs that share it, then drops its `undelivered` mark. */
async function deliver(deps: ApprovalDeps, approval: ApprovalRecord): Promise<void> {
  await deliverToEveryRun(deps, approval);
  await deps.ledger.markDelivered(approval);
}
