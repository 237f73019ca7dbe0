import { Stack } from 'aws-cdk-lib';
import { CfnRole, ManagedPolicy, PolicyDocument, Role, ServicePrincipal, type AddToPrincipalPolicyResult, type IRole, type PolicyStatement, type RoleProps } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { identityPolicyChars, rolePolicyProblem } from '../lambdas/shared/policy-quotas.js';

/** The name of the one inline policy every statement added to the role goes to. */
const POLICY_NAME = 'savepoint';

/**
 * A role whose statements are one inline policy of the role itself, not an `AWS::IAM::Policy`
 * resource of its own (CDK's default policy): one CloudFormation resource per role instead of two,
 * with the same statements (issue 34: an agent's 14 roles were 28 resources). IAM counts both kinds
 * against one quota, the role's inline policies together (IAM_ROLE_INLINE_POLICIES_MAX_CHARS), so
 * inlining changes no limit; synth checks it (below), as IAM would refuse the role mid-deploy.
 *
 * The function or state machine is created after its role, and the role with its inline policy is
 * one resource: nothing can run before its permissions exist (the default policy needed a
 * `DependsOn` for that).
 */
export class InlinePolicyRole extends Role {
  readonly #document: PolicyDocument;

  constructor(scope: Construct, id: string, props: RoleProps) {
    const document = new PolicyDocument();
    super(scope, id, { ...props, inlinePolicies: { ...props.inlinePolicies, [POLICY_NAME]: document } });
    this.#document = document;
    this.node.addValidation({
      validate: () => {
        const chars = estimatedPolicyChars(Stack.of(this), this.#document);
        const problem = rolePolicyProblem(this.node.path, chars);
        return problem ? [`${problem}: IAM would refuse the role at deploy; fewer agents on the shared functions, or agents in nested stacks of their own (agentsInNestedStacks)`] : [];
      },
    });
  }

  /**
   * Puts the role under the IAM path `path` (a role's ARN is `role/<path><name>`), so that a
   * resource policy can name every role under it with one ARN pattern (the ledger's seal key:
   * infra/ledger-table.ts). A role is under one path: another fails the synth.
   */
  placeUnder(path: string): void {
    const role = this.node.defaultChild as CfnRole;
    if (role.path !== undefined && role.path !== path) throw new Error(`${this.node.path}: the role is under ${role.path} already; it cannot also be under ${path}`);
    role.path = path;
  }

  override addToPrincipalPolicy(statement: PolicyStatement): AddToPrincipalPolicyResult {
    this.#document.addStatements(statement);
    return { statementAdded: true, policyDependable: this };
  }

  /**
   * A statement on a resource that itself waits for this role — a topic encrypted with a key whose
   * key policy names the role — goes to an `AWS::IAM::Policy` of its own (CDK's default policy):
   * inline, the role would wait for the resource and the resource for the role, a cycle
   * CloudFormation refuses.
   */
  addToSeparatePolicy(statement: PolicyStatement): AddToPrincipalPolicyResult {
    return super.addToPrincipalPolicy(statement);
  }
}

/** Adds `statement` to `fn`'s role in a policy of its own (`InlinePolicyRole.addToSeparatePolicy`), or its default policy. */
export function addToSeparatePolicy(fn: { readonly role?: IRole; addToRolePolicy(statement: PolicyStatement): void }, statement: PolicyStatement): void {
  if (fn.role instanceof InlinePolicyRole) fn.role.addToSeparatePolicy(statement);
  else fn.addToRolePolicy(statement);
}

/**
 * The characters a deployed policy will have, from its synthesized form: each reference to a
 * resource or a deploy-time value counts as the longest it may resolve to (a pseudo parameter its
 * longest value, anything else LONGEST_REFERENCE), so what passes here passes in IAM.
 */
export function estimatedPolicyChars(stack: Stack, document: PolicyDocument | object): number {
  return identityPolicyChars([longestResolution(stack.resolve(document))]);
}

/**
 * A name CloudFormation generates (`<stack>-<logical id>-<suffix>`, the stack's name up to 128
 * characters) within the ARN of its resource: longer than any this app references.
 */
const LONGEST_REFERENCE = 256;
/** The longest value of each pseudo parameter (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/pseudo-parameter-reference.html). */
const PSEUDO_PARAMETERS: Record<string, number> = { 'AWS::Partition': 10, 'AWS::Region': 16, 'AWS::AccountId': 12, 'AWS::URLSuffix': 16, 'AWS::StackName': 128 };

/** `value` (a synthesized template's) with every reference replaced by a string as long as the longest it may resolve to. */
export function longestResolution(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(longestResolution);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  const [key, argument] = entries[0] ?? [];
  if (entries.length === 1 && key !== undefined && (key === 'Ref' || key.startsWith('Fn::'))) {
    if (key === 'Fn::Join') {
      const [separator, parts] = argument as [string, unknown[]];
      return parts.map((part) => String(longestResolution(part))).join(separator);
    }
    const length = key === 'Ref' ? (PSEUDO_PARAMETERS[argument as string] ?? LONGEST_REFERENCE) : LONGEST_REFERENCE;
    return 'x'.repeat(length);
  }
  return Object.fromEntries(entries.map(([name, inner]) => [name, longestResolution(inner)]));
}

/** A step function's role: Lambda assumes it and it logs. */
export function functionRole(scope: Construct, id: string): InlinePolicyRole {
  return new InlinePolicyRole(scope, id, {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole')],
  });
}
