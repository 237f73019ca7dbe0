/**
 * What Step Functions authorizes each API call against: the action `states:<Operation>`, the
 * resource the Service Authorization Reference names for it, and its condition keys.
 *
 * The documented special case (AWS Step Functions Developer Guide, "Authorization for versions
 * and aliases", https://docs.aws.amazon.com/step-functions/latest/dg/auth-version-alias.html):
 * "To authorize a version or an alias to invoke an API action, Step Functions uses the state
 * machine's ARN instead of using the version ARN or alias ARN"; a policy can scope down to a
 * version or alias with the `states:StateMachineQualifier` condition key. So StartExecution on
 * `…:stateMachine:M:live` is decided on `…:stateMachine:M`, with the qualifier `live` in the
 * request context, and a grant on the alias ARN alone allows nothing.
 */
import type { AuthorizationRequest } from './policy.js';
/** `arn:…:stateMachine:NAME[:QUALIFIER]` → the unqualified ARN and the qualifier (a version number or an alias name). */
export declare function splitQualifier(stateMachineArn: string): {
    stateMachineArn: string;
    qualifier?: string;
};
/**
 * The authorization request of one Step Functions API call, or `undefined` when its resource is
 * not known yet (a task token this endpoint does not hold: the call fails with the service's own
 * error instead). `stateMachineOfToken` answers which state machine a live token's execution runs.
 */
export declare function sfnAuthorizationRequest(operation: string, body: Record<string, unknown>, stateMachineOfToken: (token: string) => string | undefined): AuthorizationRequest | undefined;
