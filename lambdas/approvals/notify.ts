import type { ApprovalRecord } from '../ledger/records.js';

/**
 * Approvers are told: when an approval is requested, an event carries what a person needs to
 * decide — the summary, the amount, the deadline — and a signed link. A link is its approver's
 * credential, so each approver is told on their own: one event (and one SNS message) per approver,
 * holding only that approver's link and naming them in `approver` (what a rule's pattern or a
 * subscription's filter policy matches). On AWS it goes to EventBridge (`PutEvents`, detail-type
 * `Approval Requested`) and optionally an SNS topic; locally the CLI prints it and `savepoint
 * approvals` lists the pending ones.
 */
export const APPROVAL_EVENT = { source: 'savepoint.approvals', detailType: 'Approval Requested' } as const;

export interface ApprovalRequested {
  approvalId: string;
  runId: string;
  agent?: string;
  toolName: string;
  summary: string;
  amount?: { minor: number; currency: string };
  decideBy: string;
  /** The approver this event is for (absent when there are no links: decided through the IAM API). */
  approver?: string;
  /** The signed links this event carries: the one of `approver` (all of them only in process, locally). */
  links: { approver: string; url: string }[];
}

/**
 * The request as one event per approver, each with only that approver's link: a recipient of one
 * cannot decide as another (nor be the required second approver). Without links, the one event.
 */
export function perApprover(event: ApprovalRequested): ApprovalRequested[] {
  if (event.links.length === 0) return [event];
  return event.links.map((link) => ({ ...event, approver: link.approver, links: [link] }));
}

export interface ApprovalNotifier {
  approvalRequested(event: ApprovalRequested): Promise<void>;
}

export function approvalRequested(approval: ApprovalRecord, links: ApprovalRequested['links']): ApprovalRequested {
  return {
    approvalId: approval.approvalId,
    runId: approval.runId,
    ...(approval.agent && { agent: approval.agent }),
    toolName: approval.toolName,
    summary: approval.summary,
    ...(approval.amount && { amount: approval.amount }),
    decideBy: approval.decideBy,
    links,
  };
}
