import type { ApprovalRecord } from '../records/ledger-records.js';

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

/** PutEvents takes at most 10 entries per call. */
export const PUT_EVENTS_MAX = 10;

/**
 * The calls that tell the approvers of a request: its per-approver events in PutEvents batches, then
 * one message per approver on the topic, if there is one. What the AWS notifier sends
 * (adapters/aws-approvals.ts), and what the local twin authorizes as the function's role.
 */
export function notificationCalls(request: ApprovalRequested, options: { topic: boolean }): { putEvents: ApprovalRequested[][]; publish: ApprovalRequested[] } {
  const each = perApprover(request);
  const putEvents: ApprovalRequested[][] = [];
  for (let start = 0; start < each.length; start += PUT_EVENTS_MAX) putEvents.push(each.slice(start, start + PUT_EVENTS_MAX));
  return { putEvents, publish: options.topic ? each : [] };
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
