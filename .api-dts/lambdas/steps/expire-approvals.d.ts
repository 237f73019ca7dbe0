import { type ApprovalDeps } from '../approvals/decision.js';
/**
 * Escalates every pending approval whose deadline has passed: it is recorded as expired and the
 * waiting execution resumes on its `Approval.Expired` catch, which flags the refund for review.
 */
export declare function createExpireApprovals(deps: ApprovalDeps): () => Promise<{
    expired: string[];
}>;
