/**
 * The roles of a synthesized template and their identity policies, with every intrinsic resolved
 * to the deployment's ARNs: which role each Lambda function (by its SAVEPOINT_STEP) runs as, the
 * state machine's role, and the roles EventBridge targets assume (the schedule's).
 */
import { agentStateMachineIds, functionsOfStateMachine, resolveTemplateValue, type CfnTemplateJson } from '../../template/asl.js';
import { physicalNames, type DeploymentState } from './deployment.js';
import type { PolicyDocument } from './policy.js';
import { resourcePolicies, type ResourcePolicy } from './resource-policies.js';
import { identityPolicyChars, rolePolicyProblem } from '../../../lambdas/shared/policy-quotas.js';

export interface Role {
  /** The role's logical id; locally also its name. */
  readonly id: string;
  readonly arn: string;
  /** Its identity policies: inline, attached `AWS::IAM::Policy` resources, and the AWS managed ones this module knows. */
  readonly policies: readonly PolicyDocument[];
}

export interface StackRoles {
  readonly roles: ReadonlyMap<string, Role>;
  /**
   * A Lambda function's SAVEPOINT_STEP → the function, the role it runs as, and the ARNs its
   * environment names for the services it calls besides Step Functions (SERVICE_VARIABLES).
   */
  readonly stepRoles: ReadonlyMap<string, { readonly role: string; readonly functionId: string; readonly services: ServiceVariables }>;
  /** The state machine's role (what its Task states invoke Lambda functions as). */
  readonly stateMachineRole?: string;
  /** EventBridge targets that assume a role to call their target (e.g. the schedule's StartExecution). */
  readonly ruleTargets: readonly { readonly ruleId: string; readonly roleId: string; readonly targetArn: string }[];
  /** The KMS key policies and secrets' resource policies, by the resource's ARN (resource-policies.ts). */
  readonly resourcePolicies?: ReadonlyMap<string, ResourcePolicy>;
}

/**
 * The variables through which a function is told the resources it calls (lambdas/adapters/aws-deps.ts),
 * resolved to this deployment's values: what the twin authorizes those calls against.
 */
export const SERVICE_VARIABLES = ['LEDGER_SEAL_SECRET_ARN', 'APPROVAL_LINK_SECRET_ARN', 'DECISION_KEY_ID', 'STARTER_KEY_ID', 'APPROVAL_EVENT_BUS', 'APPROVAL_TOPIC_ARN', 'TOOL_SECRETS'] as const;
export type ServiceVariables = Readonly<Partial<Record<(typeof SERVICE_VARIABLES)[number], string>>>;

/**
 * AWS managed policies the template attaches, by name, as AWS publishes them. Only those CDK
 * attaches to this app's roles; an unknown one is left out (it would grant nothing the twin checks).
 */
const MANAGED_POLICIES: Record<string, PolicyDocument> = {
  'service-role/AWSLambdaBasicExecutionRole': {
    Version: '2012-10-17',
    Statement: [{ Effect: 'Allow', Action: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'], Resource: '*' }],
  },
};

/**
 * `agentMachine`: in a template of several agents (one stack's), the logical id of the state
 * machine of the agent whose steps `stepRoles` and `stateMachineRole` are: its own functions (those
 * its state machine invokes) and the stack's shared ones (those no agent's state machine invokes),
 * never another agent's. @default the template's first agent state machine
 */
export function stackRoles(template: CfnTemplateJson, deployment: DeploymentState, agentMachine?: string): StackRoles {
  const resources = template.Resources ?? {};
  const physical = physicalNames(template, deployment);
  const resolve = (value: unknown, where: string) => resolveTemplateValue(value, template, { physical, where });

  const policies = new Map<string, PolicyDocument[]>();
  const add = (roleId: string, doc: unknown) => policies.get(roleId)?.push(doc as PolicyDocument);
  /** Each role's inline policies: its own `Policies` and the `AWS::IAM::Policy` resources attached to it (IAM counts them together). */
  const inlinePolicies = new Map<string, unknown[]>();
  const addInline = (roleId: string, doc: unknown) => {
    add(roleId, doc);
    if (policies.has(roleId)) inlinePolicies.set(roleId, [...(inlinePolicies.get(roleId) ?? []), doc]);
  };
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type !== 'AWS::IAM::Role') continue;
    policies.set(id, []);
    const props = resource.Properties ?? {};
    for (const inline of (props['Policies'] as { PolicyDocument: unknown }[] | undefined) ?? []) addInline(id, resolve(inline.PolicyDocument, `role ${id}`));
    for (const managed of (resolve(props['ManagedPolicyArns'] ?? [], `role ${id}`) as string[])) {
      const known = MANAGED_POLICIES[managed.replace(/^arn:[^:]+:iam::aws:policy\//, '')];
      if (known) add(id, known);
    }
  }
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type !== 'AWS::IAM::Policy' && resource.Type !== 'AWS::IAM::ManagedPolicy') continue;
    const doc = resolve(resource.Properties?.['PolicyDocument'], `policy ${id}`);
    for (const role of (resource.Properties?.['Roles'] as unknown[] | undefined) ?? []) {
      const roleId = (role as { Ref?: string }).Ref;
      if (roleId) (resource.Type === 'AWS::IAM::Policy' ? addInline : add)(roleId, doc);
    }
  }
  const roles = new Map<string, Role>();
  for (const [id, docs] of policies) {
    // IAM refuses a role whose inline policies (AWS::IAM::Policy resources included) are over its quota, and the deploy with it.
    const problem = rolePolicyProblem(id, identityPolicyChars(inlinePolicies.get(id) ?? []));
    if (problem) throw new Error(problem);
    roles.set(id, { id, arn: physical.arn!(id, resources[id]!)!, policies: docs });
  }

  const roleIdOf = (value: unknown): string | undefined => {
    const getAtt = (value as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt'];
    return getAtt && roles.has(getAtt[0]) ? getAtt[0] : undefined;
  };
  const stepRoles = new Map<string, { role: string; functionId: string; services: ServiceVariables }>();
  let stateMachineRole: string | undefined;
  const agents = agentStateMachineIds(resources);
  const ours = agentMachine ?? agents[0];
  // Another agent's functions: its step names are this agent's too, but not its roles.
  const others = new Set(agents.filter((id) => id !== ours).flatMap((id) => [...functionsOfStateMachine(resources, id)]));
  const ruleTargets: { ruleId: string; roleId: string; targetArn: string }[] = [];
  for (const [id, resource] of Object.entries(resources)) {
    const props = resource.Properties ?? {};
    if (resource.Type === 'AWS::Lambda::Function') {
      const variables = (props['Environment'] as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
      const step = variables['SAVEPOINT_STEP'];
      const roleId = roleIdOf(props['Role']);
      const services = Object.fromEntries(SERVICE_VARIABLES.flatMap((name) => (variables[name] === undefined ? [] : [[name, String(resolve(variables[name], `function ${id} ${name}`))]])));
      if (typeof step === 'string' && roleId && !others.has(id)) stepRoles.set(step, { role: roleId, functionId: id, services });
    }
    // The agent's state machine's role (the stack's batch state machine, when there is one, is not the agent's).
    if (resource.Type === 'AWS::StepFunctions::StateMachine' && id === ours) stateMachineRole = roleIdOf(props['RoleArn']);
    if (resource.Type === 'AWS::Events::Rule') {
      for (const target of (props['Targets'] as { Arn: unknown; RoleArn?: unknown }[] | undefined) ?? []) {
        const roleId = roleIdOf(target.RoleArn);
        if (roleId) ruleTargets.push({ ruleId: id, roleId, targetArn: resolve(target.Arn, `rule ${id}`) as string });
      }
    }
  }
  return { roles, stepRoles, ...(stateMachineRole && { stateMachineRole }), ruleTargets, resourcePolicies: resourcePolicies(template, physical) };
}
