import type { ApprovalRecord } from '../ledger/records.js';

/**
 * Approvers are told: when an approval is requested, one event per request carries what a person
 * needs to decide — the summary, the amount, the deadline — and a signed link per approver. On AWS
 * it goes to EventBridge (`PutEvents`, detail-type `Approval Requested`) and optionally an SNS
 * topic; locally the CLI prints it and `savepoint approvals` lists the pending ones.
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
  /** One signed link per approver. */
  links: { approver: string; url: string }[];
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
