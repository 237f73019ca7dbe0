/**
 * Least privilege per agent on a shared control plane (issue 34): agents of one stack share its
 * ledger table and its control-plane functions, yet each agent's roles reach only that agent's own
 * resources. Decided by the twin's IAM evaluator (local/aws/iam/policy.ts) over the roles of a
 * synthesized five-agent stack (the most one template holds, infra/stack.ts), agent 0 against
 * agent 4, with the requests AWS would authorize: Step Functions calls on the other agent's state
 * machine and executions, and ledger requests on its business-key effects and aggregates (their
 * partitions are named for the agent: `dynamodb:LeadingKeys`, infra/ledger-table.ts partitionsOf).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SavepointStack } from '../../cdk/index.js';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { deploy, physicalNames } from '../../local/aws/iam/deployment.js';
import { ledgerTableArn } from '../../local/aws/iam/dynamodb.js';
import { evaluatePolicies, type AuthorizationRequest } from '../../local/aws/iam/policy.js';
import { stackRoles, type Role } from '../../local/aws/iam/roles.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { assertionApp } from '../infra/example-template.js';

const AGENTS = 5;
let template: CfnTemplateJson;
let roles: ReadonlyMap<string, Role>;
let table: string;

beforeAll(() => {
  const app = assertionApp();
  const stack = new SavepointStack(app, 'Fleet');
  for (let index = 0; index < AGENTS; index++) stack.addAgent(`Agent${index}`, { agentName: `agent-${index}`, entry: EXAMPLE_AGENTS.refundReconciler });
  template = app.synth().getStackArtifact(stack.artifactId).template as CfnTemplateJson;
  const deployment = deploy(template);
  roles = stackRoles(template, deployment).roles;
  table = ledgerTableArn(template, physicalNames(template, deployment))!;
}, 120_000);

/** The roles of the functions whose logical ids start with `prefix` (an agent's, or the stack's control plane's). */
function functionRoles(prefix: string): Role[] {
  const ids = Object.entries(template.Resources ?? {})
    .filter(([id, resource]) => resource.Type === 'AWS::Lambda::Function' && id.startsWith(prefix) && resource.Properties?.['Environment'])
    .map(([, resource]) => (resource.Properties!['Role'] as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0]);
  expect(ids.length, prefix).toBeGreaterThan(0);
  return ids.map((id) => roles.get(id)!);
}

const machine = (agent: number) => `arn:aws:states:us-east-1:000000000000:stateMachine:Fleet-agent-${agent}`;
/** What AWS authorizes against another agent's state machine: starts, task answers, reads and stops of its executions. */
const stepFunctionsRequests = (agent: number): AuthorizationRequest[] => [
  { action: 'states:StartExecution', resource: machine(agent) },
  { action: 'states:SendTaskSuccess', resource: machine(agent) },
  { action: 'states:SendTaskFailure', resource: machine(agent) },
  { action: 'states:DescribeExecution', resource: `arn:aws:states:us-east-1:000000000000:execution:Fleet-agent-${agent}:run-1` },
  { action: 'states:StopExecution', resource: `arn:aws:states:us-east-1:000000000000:execution:Fleet-agent-${agent}:run-1` },
  { action: 'states:DeleteStateMachineVersion', resource: `${machine(agent)}:1` },
];
/** Ledger requests on an agent's business-key effect and aggregate (lambdas/tools/effects.ts keys them by the agent) and its fleet budget's day counter (lambdas/records/fleet.ts). */
const ledgerRequests = (agent: number): AuthorizationRequest[] =>
  ['GetItem', 'PutItem', 'BatchGetItem', 'ConditionCheckItem', 'Query'].flatMap((action) =>
    [`EFFECT#agent-${agent}:issue_refund:rf_1`, `AGG#agent-${agent}:issue_refund:cust_1`, `FLEET#agent-${agent}:2026-12-02`].map((pk) => ({ action: `dynamodb:${action}`, resource: table, context: { 'dynamodb:LeadingKeys': [pk] } })),
  );
const counterRequest = (pk: string, action = 'PutItem'): AuthorizationRequest => ({ action: `dynamodb:${action}`, resource: table, context: { 'dynamodb:LeadingKeys': [pk] } });
const allowedBy = (role: Role, request: AuthorizationRequest) => evaluatePolicies(role.policies, request) === 'Allowed';

describe('each agent of a shared stack reaches only its own', () => {
  it.each([
    [0, 4],
    [4, 0],
  ])("agent %i's functions may not touch agent %i's state machine or executions", (own, other) => {
    for (const role of functionRoles(`Agent${own}`)) {
      for (const request of stepFunctionsRequests(other)) expect(allowedBy(role, request), `${role.id} ${request.action} ${request.resource}`).toBe(false);
    }
  });

  it.each([
    [0, 4],
    [4, 0],
  ])("agent %i's functions may not read or write agent %i's business-key effects and aggregates", (own, other) => {
    for (const role of functionRoles(`Agent${own}`)) {
      for (const request of ledgerRequests(other)) expect(allowedBy(role, request), `${role.id} ${request.action} ${JSON.stringify(request.context)}`).toBe(false);
    }
  });

  it("lets each agent's model calls lease from its own day counter and its stack's, and from no other stack's", () => {
    for (const agent of [0, 4]) {
      const callModel = functionRoles(`Agent${agent}CallModelFunction`)[0]!;
      for (const pk of [`FLEET#agent-${agent}:2026-12-02`, 'STACKFLEET#Fleet:2026-12-02']) {
        for (const action of ['GetItem', 'PutItem']) expect(allowedBy(callModel, counterRequest(pk, action)), `${callModel.id} ${action} ${pk}`).toBe(true);
      }
      for (const pk of [`FLEET#agent-${4 - agent}:2026-12-02`, 'STACKFLEET#Other:2026-12-02', 'STACKFLEET#Fleet2:2026-12-02']) expect(allowedBy(callModel, counterRequest(pk)), `${callModel.id} ${pk}`).toBe(false);
    }
  });

  it('lets each agent use its own (the control: the requests above are ones its roles make)', () => {
    const callTool = functionRoles('Agent0CallToolFunction')[0]!;
    for (const request of ledgerRequests(0).filter((r) => r.action !== 'dynamodb:Query')) expect(allowedBy(callTool, request), `${request.action} ${JSON.stringify(request.context)}`).toBe(true);
    const handoff = functionRoles('Agent4HandoffFunction')[0]!;
    expect(allowedBy(handoff, stepFunctionsRequests(4)[0]!)).toBe(true);
  });

  it("lets the stack's shared functions act on every agent's state machine, and on no other", () => {
    const [expire] = functionRoles('ControlPlaneExpireApprovalsFunction');
    const [sweep] = functionRoles('ControlPlaneSweepFunction');
    for (let agent = 0; agent < AGENTS; agent++) {
      expect(allowedBy(expire!, { action: 'states:SendTaskFailure', resource: machine(agent) })).toBe(true);
      expect(allowedBy(sweep!, { action: 'states:StartExecution', resource: machine(agent) })).toBe(true);
    }
    expect(allowedBy(expire!, { action: 'states:SendTaskFailure', resource: 'arn:aws:states:us-east-1:000000000000:stateMachine:Other-agent' })).toBe(false);
    expect(allowedBy(sweep!, { action: 'states:StartExecution', resource: 'arn:aws:states:us-east-1:000000000000:stateMachine:Fleet-agent-5' })).toBe(false);
  });
});
