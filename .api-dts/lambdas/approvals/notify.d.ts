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
export declare const APPROVAL_EVENT: {
    readonly source: 'savepoint.approvals';
    readonly detailType: 'Approval Requested';
};
export interface ApprovalRequested {
    approvalId: string;
    runId: string;
    agent?: string;
    toolName: string;
    summary: string;
    amount?: {
        minor: number;
        currency: string;
    };
    decideBy: string;
    /** The approver this event is for (absent when there are no links: decided through the IAM API). */
    approver?: string;
    /** The signed links this event carries: the one of `approver` (all of them only in process, locally). */
    links: {
        approver: string;
        url: string;
    }[];
}
/**
 * The request as one event per approver, each with only that approver's link: a recipient of one
 * cannot decide as another (nor be the required second approver). Without links, the one event.
 */
export declare function perApprover(event: ApprovalRequested): ApprovalRequested[];
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
    readonly MessageAttributes?: Record<string, {
        DataType: 'String';
        StringValue: string;
    }>;
}
/**
 * The requests that tell the approvers of a request: its per-approver events in PutEvents batches,
 * then one message per approver on the topic, if there is one. What the AWS notifier sends
 * (adapters/aws-approvals.ts), and what the local twin checks against SNS's and EventBridge's
 * request rules and authorizes as the function's role (local/aws/iam/services.ts).
 */
export declare function notificationRequests(request: ApprovalRequested, options: {
    busName?: string;
    topicArn?: string;
}): {
    putEvents: EventEntry[][];
    publish: TopicMessage[];
};
/**
 * `text` as SNS takes a subject: printable ASCII on one line (line breaks, tabs and other control
 * characters become spaces, accents are dropped, any other character becomes `?`), shorter than
 * 100 characters (cut with `...`). A summary is the tool's text, often the model's words: SNS
 * refuses the whole Publish for a subject it does not take, and the approvers would not be told.
 */
export declare function snsSubject(text: string): string;
export interface ApprovalNotifier {
    approvalRequested(event: ApprovalRequested): Promise<void>;
}
export declare function approvalRequested(approval: ApprovalRecord, links: ApprovalRequested['links']): ApprovalRequested;
