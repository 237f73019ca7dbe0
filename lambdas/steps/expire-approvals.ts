import { deliverOwed, ours, type ApprovalDeps } from '../approvals/decision.js';

/** The most decisions and expiries of earlier sweeps one sweep delivers again (each a few requests): the rest wait for the next. */
export const MAX_REDELIVERIES = 25;

/**
 * Escalates every pending approval whose deadline has passed: it is recorded as expired and the
 * waiting execution resumes on its `Approval.Expired` catch (the call answered as not approved).
 *
 * Delivery is repeatable: an expiry, and a person's decision (approvals/decision.ts), is recorded
 * `undelivered` and stays in the pending-approvals index (the query each sweep makes anyway) until
 * its delivery is done, so one that failed — a throttled token read or SendTask call, a callback or
 * sweep timing out after its write — is delivered by the next sweep, a minute later, not by the
 * approval wait's backstop days later (and a decider's retry delivers it too). A token nobody waits
 * on any more is passed over (deliverDecision), and the mark dropped.
 *
 *   sweep n (or the decision):  pending ──(decision written, undelivered)──> deliver ✗ (throws)
 *   sweep n+1:                  listed undelivered ──> deliver ✓ (or nobody waits) ──> mark dropped
 */
export function createExpireApprovals(deps: ApprovalDeps) {
  return async (): Promise<{ expired: string[]; redelivered: string[] }> => {
    const now = deps.clock.now();
    const expired: string[] = [];
    const redelivered: string[] = [];
    const failures: { approvalId: string; error: unknown }[] = [];
    const listed = (await deps.ledger.listPendingApprovals({ undelivered: true })).filter((approval) => ours(deps, approval));
    // The decisions and expiries whose delivery failed first: they have waited longest.
    const owed = listed.filter((approval) => approval.status !== 'pending').slice(0, MAX_REDELIVERIES);
    for (const listedOwed of owed) {
      try {
        // The index may lag behind its table, and projects only part of the record: the item itself.
        const approval = await deps.ledger.getApproval(listedOwed.runId, listedOwed.turn, listedOwed.call);
        if (!approval?.undelivered) continue;
        await deliverOwed(deps, approval);
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
        await deliverOwed(deps, record);
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
