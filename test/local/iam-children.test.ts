/**
 * Child runs (issue 34 item 2) under the twin's IAM: a parent agent deployed with `children` may
 * start its child agent's state machine (on its alias: authorized against the machine's own ARN)
 * and nothing else of the child's — no stop, no task answer, no read of its executions — and no
 * other agent's; its ExecutionStopped may stop the child's executions (a killed parent's
 * children), nothing of another agent's, and settles an ended child's budget in its parent's run item, and the stack's runs function its agents' executions; it answers its own waits' tokens; the child's roles gain nothing on the parent.
 * Decided by the twin's IAM evaluator over the roles of a synthesized three-agent stack.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SavepointStack } from '../../cdk/index.js';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { evaluatePolicies, type AuthorizationRequest } from '../../local/aws/iam/policy.js';
import type { Role } from '../../local/aws/iam/roles.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { assertionApp, deployedStack } from '../infra/example-template.js';

let template: CfnTemplateJson;
let roles: ReadonlyMap<string, Role>;
let table: string;

beforeAll(async () => {
  ({ template, roles, table } = await deployedStack('Fleet', (stack) => {
    stack.addAgent('Parent', { agentName: 'parent', entry: EXAMPLE_AGENTS.refundReconciler, children: ['child'] });
    stack.addAgent('Child', { agentName: 'child', entry: EXAMPLE_AGENTS.refundReconciler });
    stack.addAgent('Other', { agentName: 'other', entry: EXAMPLE_AGENTS.refundReconciler });
  }));
}, 120_000);

const machine = (agent: string) => `arn:aws:states:us-east-1:000000000000:stateMachine:Fleet-${agent}`;
const execution = (agent: string) => `arn:aws:states:us-east-1:000000000000:execution:Fleet-${agent}:run-1`;
const allowed = (role: Role, request: AuthorizationRequest) => evaluatePolicies(role.policies, request) === 'Allowed';
function roleOf(functionPrefix: string): Role {
  const [id] = Object.entries(template.Resources ?? {}).filter(([logical, resource]) => resource.Type === 'AWS::Lambda::Function' && logical.startsWith(functionPrefix) && resource.Properties?.['Environment']);
  expect(id, functionPrefix).toBeDefined();
  return roles.get((id![1].Properties!['Role'] as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0])!;
}
const wait = (action: string, runId = 'p1') => ({ action: `dynamodb:${action}`, resource: table, context: { 'dynamodb:LeadingKeys': [`WAIT#${runId}`] } });

describe('a parent agent and its child agent', () => {
  it("lets the parent's CallTool start the child's state machine, and nothing else of the child's or another agent's", () => {
    const callTool = roleOf('ParentCallToolFunction');
    expect(allowed(callTool, { action: 'states:StartExecution', resource: machine('child') })).toBe(true);
    for (const request of [
      { action: 'states:StartExecution', resource: machine('other') },
      { action: 'states:StopExecution', resource: execution('child') },
      { action: 'states:DescribeExecution', resource: execution('child') },
      { action: 'states:SendTaskSuccess', resource: machine('child') },
    ]) expect(allowed(callTool, request), `${request.action} ${request.resource}`).toBe(false);
    // It answers its own wait's token (a child that finished before the wait began).
    expect(allowed(callTool, { action: 'states:SendTaskSuccess', resource: machine('parent') })).toBe(true);
  });

  it("lets the stack's ExecutionStopped settle an ended child's budget into its parent's run item, and up the tree (a read and a conditional put of each)", () => {
    const stopped = roleOf('ControlPlaneExecutionStoppedFunction');
    const runItem = (action: string, runId: string) => ({ action: `dynamodb:${action}`, resource: table, context: { 'dynamodb:LeadingKeys': [`RUN#${runId}`] } });
    for (const runId of ['p1', 'p1-t1-call_1']) for (const action of ['GetItem', 'PutItem']) expect(allowed(stopped, runItem(action, runId)), `${action} RUN#${runId}`).toBe(true);
    // A put only: no update, no delete of a run's item.
    for (const action of ['UpdateItem', 'DeleteItem']) expect(allowed(stopped, runItem(action, 'p1')), action).toBe(false);
  });

  it("lets the parent's CallTool store its waits' tokens and the stack's ExecutionStopped read them; no other function", () => {
    expect(allowed(roleOf('ParentCallToolFunction'), wait('PutItem'))).toBe(true);
    expect(allowed(roleOf('ControlPlaneExecutionStoppedFunction'), wait('GetItem'))).toBe(true);
    expect(allowed(roleOf('ControlPlaneExecutionStoppedFunction'), wait('PutItem'))).toBe(false);
    for (const fn of ['ParentCallModelFunction', 'ParentFinalizeFunction', 'ParentStartRunFunction', 'ChildCallToolFunction', 'ControlPlaneRecoveryFunction', 'OtherCallToolFunction']) {
      expect(allowed(roleOf(fn), wait('GetItem')), fn).toBe(false);
    }
  });

  it("lets the stack's ExecutionStopped stop the executions of its agents' child agents (a killed parent's children), and no other agent's", () => {
    // One ExecutionStopped serves the stack (infra/recovery.ts): granted the child agents of each agent that has them.
    const stopped = roleOf('ControlPlaneExecutionStoppedFunction');
    expect(allowed(stopped, { action: 'states:StopExecution', resource: execution('child') })).toBe(true);
    for (const agent of ['parent', 'other']) expect(allowed(stopped, { action: 'states:StopExecution', resource: execution(agent) }), agent).toBe(false);
    expect(allowed(stopped, { action: 'states:StartExecution', resource: machine('child') })).toBe(false);
  });

  it("lets the stack's runs function stop its agents' executions (a cancel, and a cancelled parent's children), and no other stack's", () => {
    // One runs function serves every agent of the stack (infra/stack-api.ts): it cancels any of their runs.
    const runs = roleOf('ControlPlaneStackApiRunsApiFunction');
    for (const agent of ['parent', 'child', 'other']) expect(allowed(runs, { action: 'states:StopExecution', resource: execution(agent) }), agent).toBe(true);
    expect(allowed(runs, { action: 'states:StopExecution', resource: 'arn:aws:states:us-east-1:000000000000:execution:Elsewhere-child:run-1' })).toBe(false);
  });

  it("gives the child's roles nothing on the parent's state machine", () => {
    for (const fn of ['ChildCallToolFunction', 'ChildFinalizeFunction']) {
      expect(allowed(roleOf(fn), { action: 'states:SendTaskSuccess', resource: machine('parent') }), fn).toBe(false);
      expect(allowed(roleOf(fn), { action: 'states:StartExecution', resource: machine('parent') }), fn).toBe(false);
    }
  });

  it("lets the stack's ExecutionStopped answer the tokens of the agents that run children, and no other's", () => {
    const stopped = roleOf('ControlPlaneExecutionStoppedFunction');
    expect(allowed(stopped, { action: 'states:SendTaskSuccess', resource: machine('parent') })).toBe(true);
    for (const agent of ['child', 'other']) expect(allowed(stopped, { action: 'states:SendTaskSuccess', resource: machine(agent) }), agent).toBe(false);
  });

  it("routes the child's execution ends to the stack's ExecutionStopped (the rule that wakes the waits)", () => {
    const rules = Object.values(template.Resources ?? {}).filter((resource) => resource.Type === 'AWS::Events::Rule' && JSON.stringify(resource.Properties?.['EventPattern'] ?? {}).includes('SUCCEEDED'));
    expect(rules).toHaveLength(1);
    expect(JSON.stringify(rules[0]!.Properties!['EventPattern'])).toContain('Fleet-child');
    expect(JSON.stringify(rules[0]!.Properties!['EventPattern'])).not.toContain('Fleet-other');
    expect(JSON.stringify(rules[0]!.Properties!['Targets'])).toContain('ControlPlaneExecutionStoppedFunction');
  });

  it('fails at synth when a child is not an agent name', () => {
    const stack = new SavepointStack(assertionApp(), 'Bad');
    expect(() => stack.addAgent('Parent', { agentName: 'parent', entry: EXAMPLE_AGENTS.refundReconciler, children: ['Not An Agent'] })).toThrow(/children: "Not An Agent" is not an agent name/);
  });

  it('fails at synth when a child is no agent of the stack, and takes one added after its parent', () => {
    const app = assertionApp();
    const stack = new SavepointStack(app, 'Typo');
    stack.addAgent('Parent', { agentName: 'parent', entry: EXAMPLE_AGENTS.refundReconciler, children: ['chld'] });
    stack.addAgent('Child', { agentName: 'child', entry: EXAMPLE_AGENTS.refundReconciler });
    expect(() => app.synth()).toThrow(/DurableAgent Parent: children: chld is no agent of this stack \(its agents: parent, child\)/);
    // The one held above (beforeAll) names its child before the child is added, and synthesizes.
    expect(template.Resources).toBeDefined();
  });
});
