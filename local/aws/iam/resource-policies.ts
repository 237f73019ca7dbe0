/**
 * The resource-based policies of a template that the twin enforces beside each role's identity
 * policies: KMS key policies (`AWS::KMS::Key` `KeyPolicy`) and secrets' resource policies
 * (`AWS::SecretsManager::ResourcePolicy`), each combined with the caller's identity decision as the
 * service combines them, for a request within one account:
 *
 *   KMS              the key policy decides first: a principal it names may use the key by it alone;
 *                    IAM policies count only when the key policy delegates to them through its
 *                    account statement (`Principal: {"AWS": "arn:aws:iam::<account>:root"}`) for
 *                    the action; an explicit Deny in either refuses.
 *                    https://docs.aws.amazon.com/kms/latest/developerguide/key-policies.html,
 *                    https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html#key-policy-default-allow-root-enable-iam
 *   Secrets Manager  an Allow in the identity policy OR in the secret's resource policy allows; an
 *                    explicit Deny in either refuses.
 *                    https://docs.aws.amazon.com/secretsmanager/latest/userguide/auth-and-access_resource-policies.html,
 *                    https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html
 *                    (identity-based and resource-based policies within one account)
 *
 * A key with no `KeyPolicy` has KMS's default (the account statement with `kms:*`): its decisions
 * are the identity policy's. A resource policy's statement applies to the caller when its Principal
 * is `*`, or names the caller's role ARN (or its session's assumed-role ARN), or names the account
 * (then only as delegation to IAM). The request's `aws:PrincipalArn` (a role's ARN, whichever
 * session) and `aws:PrincipalAccount` are given to every condition. A refusal throws
 * AccessDeniedException, worded as AWS words it ("… because no resource-based policy allows …",
 * "… with an explicit deny in a resource-based policy": authorizer.ts).
 */
import { resourcePolicyChars, secretPolicyProblem } from '../../../lambdas/shared/policy-quotas.js';
import { resolveTemplateValue, type CfnTemplateJson, type PhysicalNames } from '../../template/asl.js';
import { LOCAL_ACCOUNT } from './deployment.js';
import { evaluatePolicies, type AuthorizationRequest, type Decision, type OneOrMore, type PolicyDocument, type Statement } from './policy.js';

export type ResourceKind = 'kms-key' | 'secret';

export interface ResourcePolicy {
  readonly kind: ResourceKind;
  /** The resource's logical id in the template. */
  readonly id: string;
  readonly document: PolicyDocument;
}

/** Who calls, as a resource policy sees it. */
export interface Principal {
  /** The role's ARN (`aws:PrincipalArn`), or a user's. */
  readonly arn: string;
  /** The session's ARN (`arn:aws:sts::<account>:assumed-role/<role>/<session>`), when a role's. */
  readonly sessionArn?: string;
}

/** A decision with where it was made (for AWS's wording of a refusal). */
export interface Verdict {
  readonly decision: Decision;
  readonly by: 'identity' | 'resource';
}

/** Each key's and each secret's resource policy, by the resource's ARN in this deployment. */
export function resourcePolicies(template: CfnTemplateJson, physical: PhysicalNames): ReadonlyMap<string, ResourcePolicy> {
  const resources = template.Resources ?? {};
  const resolve = (value: unknown, where: string) => resolveTemplateValue(value, template, { physical, where });
  const policies = new Map<string, ResourcePolicy>();
  for (const [id, resource] of Object.entries(resources)) {
    const props = resource.Properties ?? {};
    if (resource.Type === 'AWS::KMS::Key' && props['KeyPolicy'] !== undefined) {
      const arn = physical.arn!(id, resource);
      if (arn) policies.set(arn, { kind: 'kms-key', id, document: resolve(props['KeyPolicy'], `key ${id}`) as PolicyDocument });
    }
    if (resource.Type === 'AWS::SecretsManager::ResourcePolicy') {
      const arn = resolve(props['SecretId'], `secret policy ${id}`) as string;
      const raw = props['ResourcePolicy'];
      const document = (typeof raw === 'string' ? JSON.parse(raw) : resolve(raw, `secret policy ${id}`)) as PolicyDocument;
      const secretId = (props['SecretId'] as { Ref?: string } | undefined)?.Ref ?? id;
      // Secrets Manager refuses a longer policy (PutResourcePolicy), and the deploy with it.
      const problem = secretPolicyProblem(secretId, resourcePolicyChars(document));
      if (problem) throw new Error(problem);
      policies.set(arn, { kind: 'secret', id: secretId, document });
    }
  }
  return policies;
}

/** The request as a resource policy's conditions see it: the principal's keys added to its context. */
export function withPrincipalContext(request: AuthorizationRequest, principal: Principal): AuthorizationRequest {
  return { ...request, context: { 'aws:PrincipalArn': principal.arn, 'aws:PrincipalAccount': LOCAL_ACCOUNT, ...request.context } };
}

/**
 * The decision on a request to a resource with a resource policy, from the caller's identity
 * decision (already made) and the resource policy, as KMS or Secrets Manager combine them (above).
 */
export function combine(policy: ResourcePolicy, identity: Decision, principal: Principal, request: AuthorizationRequest): Verdict {
  const seen = withPrincipalContext(request, principal);
  const direct = statementsFor(policy.document, principal, 'direct');
  const delegating = statementsFor(policy.document, principal, 'account');
  const directDecision = evaluatePolicies([{ Statement: direct }], seen);
  const accountDecision = evaluatePolicies([{ Statement: delegating }], seen);
  if (identity === 'ExplicitlyDenied') return { decision: 'ExplicitlyDenied', by: 'identity' };
  if (directDecision === 'ExplicitlyDenied' || accountDecision === 'ExplicitlyDenied') return { decision: 'ExplicitlyDenied', by: 'resource' };
  if (directDecision === 'Allowed') return { decision: 'Allowed', by: 'resource' };
  if (policy.kind === 'kms-key') {
    // Without the key policy's Allow (direct, or delegated to IAM), no IAM policy allows the key's use.
    if (accountDecision !== 'Allowed') return { decision: 'ImplicitlyDenied', by: 'resource' };
    return { decision: identity, by: 'identity' };
  }
  return { decision: identity, by: 'identity' };
}

/**
 * The statements of `document` whose Principal is the caller (`direct`: `*` or its ARN) or its
 * account (`account`: delegation to IAM), with the Principal taken off (the evaluator matches
 * actions, resources and conditions). NotPrincipal is refused: nothing savepoint synthesizes uses it.
 */
function statementsFor(document: PolicyDocument, principal: Principal, which: 'direct' | 'account'): Statement[] {
  const statements = list(document.Statement) as (Statement & { Principal?: unknown; NotPrincipal?: unknown })[];
  return statements.flatMap((statement) => {
    if (statement.NotPrincipal !== undefined) throw new Error(`resource policy statement ${statement.Sid ?? ''}: NotPrincipal is not supported by the local evaluator`);
    const match = principalMatch(statement.Principal, principal);
    if (match !== which) return [];
    const { Principal: _principal, ...rest } = statement;
    return [rest];
  });
}

function principalMatch(value: unknown, principal: Principal): 'direct' | 'account' | undefined {
  if (value === '*') return 'direct';
  const aws = (value as { AWS?: OneOrMore<string> } | undefined)?.AWS;
  if (aws === undefined) return undefined; // a service principal: not a role's call
  let match: 'direct' | 'account' | undefined;
  for (const name of list(aws)) {
    if (name === '*' || name === principal.arn || name === principal.sessionArn) return 'direct';
    if (name === LOCAL_ACCOUNT || name === `arn:aws:iam::${LOCAL_ACCOUNT}:root`) match = 'account';
  }
  return match;
}

function list<T>(value: OneOrMore<T>): readonly T[] {
  return Array.isArray(value) ? (value as readonly T[]) : [value as T];
}
