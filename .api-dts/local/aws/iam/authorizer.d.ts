import { type AuthorizationRequest, type Decision } from './policy.js';
import type { StackRoles } from './roles.js';
export interface IamDecisions {
    allowed: number;
    denied: number;
}
/** What AWS answers a refused call: error code AccessDeniedException, HTTP 403. */
export declare class AccessDeniedError extends Error {
    readonly statusCode = 403;
    constructor(message: string);
}
/**
 * Who makes a call: a role of the template, with the session name AWS gives it (a Lambda
 * function's own name; a random one for Step Functions and EventBridge), or the account's
 * administrator — the person at the CLI, who on AWS would hold AdministratorAccess.
 */
export type Caller = {
    readonly role: string;
    readonly session: string;
} | {
    readonly administrator: true;
};
/**
 * What each role's evaluator keeps, per action: the statements that match the action on its
 * MEMO_LIMIT most recently used resources (policy.ts `policyEvaluator`). A run's requests name it
 * in their condition keys (`dynamodb:LeadingKeys` `RUN#<id>`), which nothing keeps, and some in
 * their resource (its execution's ARN), which is kept: a finished run's resources leave once
 * MEMO_LIMIT newer ones have taken their place, instead of staying.
 */
export declare const MEMO_LIMIT = 256;
export declare class IamAuthorizer {
    #private;
    constructor(roles: StackRoles);
    get roles(): StackRoles;
    /** A deploy: the new template's roles and policies replace the old ones, for every caller at once. */
    replace(roles: StackRoles): void;
    /** The decision, counted. */
    decide(caller: Caller, request: AuthorizationRequest): Decision;
    /** Throws AccessDeniedException, worded as AWS words it, unless the caller's policies allow the request. */
    authorize(caller: Caller, request: AuthorizationRequest): void;
    /** Tells `listener` of every decision from now on (what a test checks the requests themselves with); returns the unsubscribe. */
    onDecision(listener: (caller: Caller, request: AuthorizationRequest, decision: Decision) => void): () => void;
    /** How many (action, resource) matches are kept, over every role (at most MEMO_LIMIT per role and action, whatever the number of runs). */
    get remembered(): number;
    /** How many calls were allowed and denied since this authorizer was made. */
    decisions(): IamDecisions;
    /** The same, by action (`dynamodb:GetItem`, `kms:VerifyMac`, …), sorted by action. */
    decisionsByAction(): Record<string, IamDecisions>;
}
