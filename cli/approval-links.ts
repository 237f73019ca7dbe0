import { signedLinks } from '../lambdas/approvals/links.js';
import type { ApprovalRecord } from '../lambdas/records/ledger-records.js';
import { localUser } from '../local/services/local-user.js';
import { localApprovalKeys } from '../local/state/approval-keys.js';

/** Links to decide `approval` on the approval page at `pageUrl`, signed with `dir`'s link key (loaded by `approvals` only when an engine serves a page). */
export function signedLinksIn(dir: string, pageUrl: string, approval: Pick<ApprovalRecord, 'approvalId' | 'runId' | 'decideBy'>) {
  return signedLinks({ signer: localApprovalKeys(dir).links, pageUrl, approvers: [localUser()] }, approval);
}
