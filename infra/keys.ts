import { Duration, Lazy, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AccountRootPrincipal, AnyPrincipal, Effect, PolicyDocument, PolicyStatement, type IPrincipal } from 'aws-cdk-lib/aws-iam';
import { CfnKey, Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import type { ISecret, ResourcePolicy } from 'aws-cdk-lib/aws-secretsmanager';
import { resourcePolicyChars, secretPolicyProblem } from '../lambdas/shared/policy-quotas.js';
import { longestResolution } from './inline-policy-role.js';
import type { Construct } from 'constructs';

/**
 * Keys and secrets that AWS itself holds to their users, not only each user's IAM policy.
 *
 * A KMS key's policy decides first: an IAM policy allows a use of the key only when the key policy
 * delegates to IAM through its account statement
 * (https://docs.aws.amazon.com/kms/latest/developerguide/key-policies.html). CDK's default key
 * policy is that statement with `kms:*`, so any principal of the account whose IAM allows
 * `kms:GenerateMac` could sign. Here the account may only administer a key (KEY_ADMIN_ACTIONS: no
 * cryptographic operation, no grant), and each use is a statement naming the role that needs it:
 * nothing another IAM policy says can add a user. The policy is set on the CloudFormation resource
 * itself (`pinKeyPolicy`): it is the whole key policy, and a `key.grant(…)` made elsewhere adds
 * nothing to it. (CDK v2 fixed `@aws-cdk/aws-kms:defaultKeyPolicies` on: a `policy` prop replaces
 * the default `kms:*` statement, and a grant to a same-account principal goes to its IAM policy,
 * which this key policy never delegates to for a use.)
 *
 * A secret's resource policy denies `GetSecretValue` to every principal but its readers (a Deny
 * wins over any Allow: https://docs.aws.amazon.com/secretsmanager/latest/userguide/auth-and-access_resource-policies.html),
 * so an account administrator's `secretsmanager:*` does not read a signing key either.
 */

/** What the account may do with a key: administer it (policy, aliases, tags, deletion), never use it. */
export const KEY_ADMIN_ACTIONS = [
  'kms:CreateAlias',
  'kms:DeleteAlias',
  'kms:UpdateAlias',
  'kms:Describe*',
  'kms:List*',
  'kms:Get*',
  'kms:Put*',
  'kms:Update*',
  'kms:Enable*',
  'kms:Disable*',
  'kms:RevokeGrant',
  'kms:RetireGrant',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
] as const;

/** One use of a key: who (a role, or a service principal) may call which operations, on what condition. */
export interface KeyUse {
  readonly sid: string;
  readonly principals: readonly IPrincipal[];
  readonly actions: readonly string[];
  readonly conditions?: Record<string, Record<string, unknown>>;
}

/** The key policy: the account administers, each use names its principals. */
export function keyPolicy(uses: readonly KeyUse[]): PolicyDocument {
  const document = new PolicyDocument({
    statements: [new PolicyStatement({ sid: 'AccountAdministers', principals: [new AccountRootPrincipal()], actions: [...KEY_ADMIN_ACTIONS], resources: ['*'] })],
  });
  for (const use of uses) {
    if (use.principals.length === 0) continue;
    document.addStatements(new PolicyStatement({ sid: use.sid, principals: [...use.principals], actions: [...use.actions], resources: ['*'], ...(use.conditions && { conditions: use.conditions }) }));
  }
  return document;
}

/**
 * Sets `policy` as the key's whole policy, on the CloudFormation resource: a document of its own,
 * not the one `Key` keeps, so a `key.grant(…)` or `addToResourcePolicy` made later adds nothing to it.
 * A function producing it is called at synth: uses added until then are in it (infra/control-plane.ts).
 */
export function pinKeyPolicy(key: Key, policy: PolicyDocument | (() => PolicyDocument)): void {
  (key.node.defaultChild as CfnKey).keyPolicy = Lazy.any({ produce: () => Stack.of(key).resolve((typeof policy === 'function' ? policy() : policy).toJSON()) });
}

/** A KMS HMAC-SHA256 key whose policy lets only `uses` generate or verify MACs. KMS rotates no HMAC key (docs/approvals.md: rotation). */
export function macKey(scope: Construct, id: string, description: string, uses: readonly KeyUse[]): Key {
  const key = new Key(scope, id, {
    description,
    keySpec: KeySpec.HMAC_256,
    keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
    removalPolicy: RemovalPolicy.RETAIN,
    pendingWindow: Duration.days(30),
    // The key's own document, which a `grant` elsewhere may add to: the one pinned below is another.
    policy: keyPolicy(uses),
  });
  pinKeyPolicy(key, keyPolicy(uses));
  return key;
}

/**
 * Denies `secretsmanager:GetSecretValue` on `secret` to every principal whose ARN is not in (or
 * matched by a pattern of) `readers()` (worked out at synth, so readers added after this call count). For an IAM role the
 * condition key `aws:PrincipalArn` is the role's ARN, whichever session calls
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-principalarn).
 */
export function onlyReaders(secret: ISecret, readers: () => readonly string[]): void {
  // A Deny whose exception lists nobody would lock everyone out: the synth says so instead.
  secret.node.addValidation({ validate: () => (readers().length === 0 ? [`${secret.node.path}: no function or principal may read this secret (its resource policy would deny everyone)`] : []) });
  secret.addToResourcePolicy(
    new PolicyStatement({
      sid: 'OnlyItsReaders',
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['secretsmanager:GetSecretValue'],
      resources: ['*'],
      conditions: { ArnNotLike: { 'aws:PrincipalArn': Lazy.list({ produce: () => [...readers()] }) } },
    }),
  );
  // Secrets Manager refuses a longer policy mid-deploy (PutResourcePolicy): synth says so first.
  secret.node.addValidation({
    validate: () => {
      const policy = secret.node.tryFindChild('Policy') as ResourcePolicy | undefined;
      if (!policy) return [];
      const problem = secretPolicyProblem(secret.node.path, resourcePolicyChars(longestResolution(Stack.of(secret).resolve(policy.document))));
      return problem ? [`${problem}: name fewer readers (a pattern for many roles, as the ledger's seal key does)`] : [];
    },
  });
}

/** The ARNs a principal stands for in a policy (a role's or a user's), or a synth error naming `what`. */
export function principalArns(principal: IPrincipal, what: string): string[] {
  const arns = principal.policyFragment.principalJson['AWS'] ?? [];
  if (arns.length === 0) throw new Error(`${what}: grant to a role or a user (a principal with an ARN), got ${principal.toString()}`);
  return arns;
}
