import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { ApprovalRecord } from '../records/ledger-records.js';
import type { Identity } from '../approvals/policy.js';
import { type ApprovalDeps } from '../approvals/decision.js';
/** What a caller may see of an approval (the task token is never on it: ledger getTaskToken). */
export declare function publicApproval(approval: ApprovalRecord): {
    approvalId: string;
    runId: string;
    agent?: string;
    turn: number;
    call: number;
    toolName: string;
    summary: string;
    amount?: {
        minor: number;
        currency: string;
    };
    details?: Record<string, string | number | boolean>;
    description?: string;
    status: import("../records/ledger-records.js").ApprovalStatus;
    decideBy: string;
    createdAt: string;
    reason?: string;
    decidedBy?: string;
    decidedAt?: string;
    decidedVia?: import("../records/ledger-records.js").DecisionChannel;
    decisionMac?: string;
    waitedMs?: number;
    firstApproval?: {
        by: string;
        via: import("../records/ledger-records.js").DecisionChannel;
        at: string;
        reason?: string;
    };
    usedLinks?: string[];
    budget?: {
        guard: import("../records/ledger-records.js").ExtendableGuard;
        extension: number;
        limit: number;
    };
};
export declare const json: (statusCode: number, body: unknown) => APIGatewayProxyResult;
/**
 * A request refused for what it is, not for its content: the status (4xx) and a message that
 * names the problem reach the caller. Content errors stay `Agent.InvalidInput` (400).
 */
export declare class HttpRequestError extends Error {
    readonly statusCode: 413 | 415 | 400;
    constructor(statusCode: 413 | 415 | 400, message: string);
}
/**
 * A decision is JSON: `application/json` (any parameters, e.g. charset) or a `+json` type. A form
 * or `text/plain` is refused before the body is read — it is what a cross-site form can send
 * without a preflight, and never what the CLI or the console sends.
 */
export declare function assertJsonContentType(event: APIGatewayProxyEvent): void;
export declare function parseBody(event: APIGatewayProxyEvent, example?: string): unknown;
/**
 * Who called, as the transport proved it: on AWS the IAM principal API Gateway verified (SigV4),
 * locally the loopback server's user (local/services/approval-api.ts). Never a field of the body.
 */
export declare function callerOf(event: APIGatewayProxyEvent): Identity | undefined;
/**
 * The person an IAM principal stands for, by what its caller cannot choose — what separation of
 * duties and "a second approver" compare. An assumed role's session name is chosen by whoever
 * calls AssumeRole, so it tells nobody apart:
 *   arn:aws:iam::<acct>:user/<name>                                   → itself (one IAM user, one person)
 *   arn:aws:sts::<acct>:assumed-role/AWSReservedSSO_<set>_<id>/<user> → identity-center:<acct>:<user>
 *       (IAM Identity Center names the session after its user, and only it can assume these roles;
 *        the same user under two permission sets is one person)
 *   arn:aws:sts::<acct>:assumed-role/<role>/<session>                 → arn:aws:iam::<acct>:role/<role>
 *       (every session of one role is one person)
 *   arn:aws:sts::<acct>:federated-user/<name>                         → arn:aws:sts::<acct>:federated-user
 *       (GetFederationToken's caller names it: all of them are one person)
 *   anything else (the account's root)                                → itself
 */
export declare function personOf(arn: string): string;
/**
 * The approval API behind API Gateway (REST, proxy integration):
 *   GET  /approvals                  pending approvals                        (IAM)
 *   GET  /approvals/{approvalId}     one approval                             (IAM)
 *   POST /approvals/{approvalId}     {"decision":"approve"|"reject","reason"?,"runId"?}   (IAM: the caller decides)
 *   GET  /decide/{approvalId}?link=… the approval page (HTML; never decides)  (the signed link)
 *   POST /decide/{approvalId}        {"decision", "reason"?, "link"}          (the link's approver decides)
 */
export declare function createApprovalApi(deps: ApprovalDeps): (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;
/**
 * middy's http-error-handler shape: invalid input becomes a 400 whose message names the field, a
 * refused request (HttpRequestError) its own 4xx; anything else is a 500 whose details stay in
 * the logs.
 */
export declare const httpErrors: () => middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult>;
export declare function approvalApiHandler(deps: ApprovalDeps, middlewares?: readonly middy.MiddlewareObj[]): middy.MiddyfiedHandler<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context, {}>;
