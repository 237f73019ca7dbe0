/**
 * An IAM identity-policy evaluator for the statement shapes a synthesized savepoint app uses,
 * following AWS's documented evaluation logic for a request within one account
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html):
 *
 *   an explicit Deny in any statement that applies  → denied (it overrides every Allow)
 *   else an Allow in any statement that applies     → allowed
 *   else                                            → denied (implicit deny)
 *
 * A statement applies when its Action (or NotAction), its Resource (or NotResource) and every
 * condition of its Condition block match the request. Written here rather than taken from the
 * registry: the maintained simulator (`@cloud-copilot/iam-simulate`) is AGPL-3.0, which a user's
 * company cannot ship, and the MIT alternatives are unmaintained. The simulator is this module's
 * differential test oracle instead (test/iam/oracle.test.ts, a devDependency, never imported here).
 *
 * Not evaluated, because the twin's requests never meet them: resource-based policies,
 * permissions boundaries, session policies, SCPs/RCPs, Principal/NotPrincipal (trust policies are
 * not identity policies), and policy variables (`${aws:username}`).
 */
export type Effect = 'Allow' | 'Deny';
/** One value or a list of them, as IAM's JSON allows. */
export type OneOrMore<T> = T | readonly T[];
export interface Statement {
    readonly Sid?: string;
    readonly Effect: Effect;
    readonly Action?: OneOrMore<string>;
    readonly NotAction?: OneOrMore<string>;
    readonly Resource?: OneOrMore<string>;
    readonly NotResource?: OneOrMore<string>;
    /** operator → condition key → value(s) */
    readonly Condition?: Readonly<Record<string, Readonly<Record<string, OneOrMore<string | number | boolean>>>>>;
}
export interface PolicyDocument {
    readonly Version?: string;
    readonly Statement: OneOrMore<Statement>;
}
export interface AuthorizationRequest {
    /** `service:Operation`, e.g. `states:StartExecution`. */
    readonly action: string;
    /** The resource's ARN, as the service authorizes it. */
    readonly resource: string;
    /** Condition keys of the request (names case-insensitive); a multivalued key is an array. */
    readonly context?: Readonly<Record<string, string | readonly string[]>>;
}
export type Decision = 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';
/** The decision over all of a principal's identity policies (the union of their statements). */
export declare function evaluatePolicies(policies: readonly PolicyDocument[], request: AuthorizationRequest): Decision;
/**
 * The same decisions as `evaluatePolicies`, from policies that do not change: which statements
 * match an action on a resource is worked out once per (action, resource) and kept, so that a
 * request only evaluates the Condition blocks of the statements that can apply (in their order,
 * as `evaluatePolicies` does). The answer is still decided for every request, its context included.
 * `limit` bounds what is kept per action (resources name executions): the least recently used go first.
 */
export declare function policyEvaluator(policies: readonly PolicyDocument[], limit?: number): PolicyEvaluator;
/** A role's decisions (`policyEvaluator`), and how many (action, resource) matches it keeps. */
export type PolicyEvaluator = ((request: AuthorizationRequest) => Decision) & {
    kept(): number;
};
/**
 * ARN matching as IAM does it: `*` alone matches everything; otherwise the partition, service,
 * region and account segments match one by one (a wildcard does not cross their colons), and the
 * resource part — everything after the fifth colon — matches as a whole, so a `*` there spans
 * `:` and `/` (`execution:Machine:*` matches every execution of Machine). Case-sensitive.
 */
export declare function matchesArn(pattern: string, arn: string): boolean;
