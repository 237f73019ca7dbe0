/**
 * What IAM and Secrets Manager refuse of a policy by its size (lambdas/shared/limits.ts). One
 * measure and one wording for the two places that check it: savepoint/cdk at synth (infra/inline-policy-role.ts,
 * infra/keys.ts), where an app of many agents would otherwise pass synth and fail mid-deploy, and the
 * local twin when it deploys a template (local/aws/iam/roles.ts, local/aws/iam/resource-policies.ts).
 * IAM's message is its own ("Maximum policy size of 10240 bytes exceeded for role …"); the secret's
 * follows PutResourcePolicy's length constraint.
 */
import { IAM_ROLE_INLINE_POLICIES_MAX_CHARS, SECRET_RESOURCE_POLICY_MAX_CHARS } from './limits.js';

/** A policy's size as IAM counts it: its JSON, white space left out. */
export function identityPolicyChars(documents: readonly unknown[]): number {
  return documents.reduce<number>((sum, document) => sum + JSON.stringify(document).replace(/\s/g, '').length, 0);
}

/** A resource policy's length as Secrets Manager counts it: the JSON string it is sent as. */
export function resourcePolicyChars(document: unknown): number {
  return JSON.stringify(document).length;
}

/** IAM's refusal of role `role` whose inline policies (together) are `chars` characters, or none. */
export function rolePolicyProblem(role: string, chars: number): string | undefined {
  return chars > IAM_ROLE_INLINE_POLICIES_MAX_CHARS
    ? `LimitExceeded: Maximum policy size of ${IAM_ROLE_INLINE_POLICIES_MAX_CHARS} bytes exceeded for role ${role} (its inline policies are ${chars} characters without white space)`
    : undefined;
}

/** Secrets Manager's refusal of secret `secret`'s resource policy of `chars` characters, or none. */
export function secretPolicyProblem(secret: string, chars: number): string | undefined {
  return chars > SECRET_RESOURCE_POLICY_MAX_CHARS
    ? `ValidationException: the resource policy of secret ${secret} is ${chars} characters; PutResourcePolicy takes at most ${SECRET_RESOURCE_POLICY_MAX_CHARS}`
    : undefined;
}
