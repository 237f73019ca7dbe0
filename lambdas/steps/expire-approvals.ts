import { deliverDecision, ours, wakeFollowers, type ApprovalDeps } from '../approvals/decision.js';

/**
 * Escalates every pending approval whose deadline has passed: it is recorded as expired and the
 * waiting execution resumes on its `Approval.Expired` catch, which flags the refund for review.
 */
export function createExpireApprovals(deps: ApprovalDeps) {
  return async (): Promise<{ expired: string[] }> => {
    const now = deps.clock.now();
    const expired: string[] = [];
    for (const approval of await deps.ledger.listPendingApprovals()) {
      if (approval.decideBy > now.toISOString() || !ours(deps, approval)) continue;
      const { decided, record } = await deps.ledger.decideApproval(
        approval,
        { status: 'expired', reason: `not decided by ${approval.decideBy}`, decidedBy: 'timeout', decidedVia: 'timeout', waitedMs: now.getTime() - Date.parse(approval.createdAt) },
        now,
      );
      if (!decided) continue;
      expired.push(record.approvalId);
      await deliverDecision(deps, record);
      await wakeFollowers(deps, record);
    }
    return { expired };
  };
}
