import type { ApprovalRecord } from '../records/ledger-records.js';
import { SNS_SUBJECT_MAX_LENGTH } from '../shared/limits.js';
import { formatAmount } from '../shared/money.js';

/**
 * Approvers are told: when an approval is requested, an event carries what a person needs to
 * decide — the summary, the amount, the deadline — and each approver is sent a signed link. A link
 * is its approver's credential, so it travels only where its approver alone receives it: one SNS
 * message per approver on the approvals topic (encrypted with a key of its own), holding only that
 * approver's link and naming them in the attribute `approver`, which each approver's subscription
 * filters on. The event on EventBridge (the account's default bus, detail-type `Approval
 * Requested`) carries no link: any rule on the bus receives it. Locally the CLI prints the links and
 * `savepoint approvals` lists the pending ones.
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

/** One EventBridge `PutEvents` entry, as the AWS notifier sends it (the SDK's `PutEventsRequestEntry`). */
export interface EventEntry {
  readonly Source: string;
  readonly DetailType: string;
  readonly Detail: string;
  readonly EventBusName?: string;
}

/** One SNS `Publish` request, as the AWS notifier sends it (the SDK's `PublishInput`). */
export interface TopicMessage {
  readonly TopicArn: string;
  readonly Subject: string;
  readonly Message: string;
  readonly MessageAttributes?: Record<string, { DataType: 'String'; StringValue: string }>;
}

/** The approval-requested event as it goes on the bus: everything but the links (and so no approver: it is one event for all). */
export type ApprovalRequestedEvent = Omit<ApprovalRequested, 'links' | 'approver'>;

/** `request` without its links: what the bus carries. */
export function busEvent(request: ApprovalRequested): ApprovalRequestedEvent {
  const { links: _links, approver: _approver, ...event } = request;
  return event;
}

/**
 * The requests that tell the approvers of a request: one event on the bus, with no link, then one
 * message per approver on the topic, if there is one, each with that approver's link only. What the
 * AWS notifier sends (adapters/aws-approvals.ts), and what the local twin checks against SNS's and
 * EventBridge's request rules and authorizes as the function's role (local/aws/iam/services.ts).
 */
export function notificationRequests(request: ApprovalRequested, options: { busName?: string; topicArn?: string }): { putEvents: EventEntry[][]; publish: TopicMessage[] } {
  const entry: EventEntry = { Source: APPROVAL_EVENT.source, DetailType: APPROVAL_EVENT.detailType, Detail: JSON.stringify(busEvent(request)), ...(options.busName !== undefined && { EventBusName: options.busName }) };
  const putEvents: EventEntry[][] = [[entry]];
  const topicArn = options.topicArn;
  const publish = topicArn === undefined ? [] : perApprover(request).map((event) => topicMessage(topicArn, event));
  return { putEvents, publish };
}

function topicMessage(topicArn: string, event: ApprovalRequested): TopicMessage {
  const link = event.links[0];
  const amount = event.amount ? ` (${formatAmount(event.amount)})` : '';
  return {
    TopicArn: topicArn,
    Subject: snsSubject(`Approval needed: ${event.summary}`),
    Message: `${event.summary}${amount}\nDecide by ${event.decideBy}.${link ? `\n\nYour link (personal, single use):\n${link.url}` : ''}`,
    ...(event.approver && { MessageAttributes: { approver: { DataType: 'String', StringValue: event.approver } } }),
  };
}

/**
 * `text` as SNS takes a subject: printable ASCII on one line (line breaks, tabs and other control
 * characters become spaces, accents are dropped, any other character becomes `?`), shorter than
 * 100 characters (cut with `...`). A summary is the tool's text, often the model's words: SNS
 * refuses the whole Publish for a subject it does not take, and the approvers would not be told.
 */
export function snsSubject(text: string): string {
  const ascii = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/[^\x20-\x7e]/g, '?')
    .replace(/ {2,}/g, ' ')
    .trim();
  const subject = ascii.length > SNS_SUBJECT_MAX_LENGTH ? `${ascii.slice(0, SNS_SUBJECT_MAX_LENGTH - 3).trimEnd()}...` : ascii;
  return /^[A-Za-z0-9\p{P}]/u.test(subject) ? subject : `Approval needed${subject ? `: ${subject}` : ''}`.slice(0, SNS_SUBJECT_MAX_LENGTH);
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
