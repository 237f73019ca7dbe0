import { Template } from 'aws-cdk-lib/assertions';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { assertionApp } from './example-template.js';
import { identityPolicies } from '../support/role-policies.js';

/** Two agents of different kinds deployed side by side in one app, on one ledger. */
let template: Template;

beforeAll(() => {
  const app = assertionApp();
  const stack = new SavepointStack(app, 'Agents');
  stack.addAgent('Refunds', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler, schedule: Schedule.cron({ hour: '2', minute: '0' }) });
  stack.addAgent('Triage', { agentName: 'support-triage', entry: EXAMPLE_AGENTS.supportTriage, approvalApi: false });
  template = Template.fromStack(stack);
});

const joined = (value: unknown) => JSON.stringify(value);

describe('an app with two agents', () => {
  it('has one state machine per agent, named for it, and one shared ledger table', () => {
    const machines = Object.values(template.findResources('AWS::StepFunctions::StateMachine')).map((machine) => machine.Properties.StateMachineName);
    expect(machines.sort()).toEqual(['Agents-refund-reconciler', 'Agents-support-triage']);
    expect(Object.keys(template.findResources('AWS::DynamoDB::GlobalTable'))).toHaveLength(1);
  });

  it('runs the same generic loop for both (the definitions differ only in their function versions, and so in their identity)', () => {
    const shapes = Object.values(template.findResources('AWS::StepFunctions::StateMachine')).map((machine) =>
      joined(machine.Properties.DefinitionString)
        .replace(/"Ref":"(Refunds|Triage)([A-Za-z]+)FunctionCurrentVersion[A-Za-z0-9]+"/g, '"Ref":"$2"')
        .replace(/\\"hash\\":\\"[0-9a-f]{16}\\"/, '"hash"'),
    );
    expect(shapes[0]).toBe(shapes[1]);
  });

  it('gives each agent its own functions, each answering only its own state machine\'s task tokens', () => {
    const policies = identityPolicies(template.toJSON().Resources).map((policy) => [policy.id, policy.document] as const).filter(([, policy]) => joined(policy).includes('states:SendTaskSuccess'));
    expect(policies.length).toBeGreaterThanOrEqual(3);
    for (const [id, policy] of policies.filter(([id]) => !id.startsWith('ControlPlane'))) {
      const own = id.startsWith('Refunds') ? 'Agents-refund-reconciler' : 'Agents-support-triage';
      const other = own === 'Agents-refund-reconciler' ? 'Agents-support-triage' : 'Agents-refund-reconciler';
      expect(joined(policy)).toContain(`:stateMachine:${own}`);
      expect(joined(policy)).not.toContain(`:stateMachine:${other}`);
    }
    // The stack's expiry sweep answers both agents' tokens (infra/control-plane.ts), and no other state machine's; the
    // stack's approval callback only the agents its API serves (the triage agent has none).
    const shared = policies.filter(([id]) => id.startsWith('ControlPlane')).sort(([a], [b]) => a.localeCompare(b));
    expect(shared.map(([id]) => id.replace(/ServiceRole.*/, ''))).toEqual(['ControlPlaneExpireApprovalsFunction', 'ControlPlaneStackApiApprovalCallbackFunction']);
    const machinesOf = (policy: unknown) => [...new Set([...joined(policy).matchAll(/:stateMachine:([\w-]+)/g)].map((match) => match[1]))].sort();
    expect(machinesOf(shared[0]![1])).toEqual(['Agents-refund-reconciler', 'Agents-support-triage']);
    expect(machinesOf(shared[1]![1])).toEqual(['Agents-refund-reconciler']);
  });

  it('schedules only the agent that asked for a schedule, and serves an approval API only where asked', () => {
    const scheduled = Object.values(template.findResources('AWS::Events::Rule')).filter((rule) => joined(rule).includes('cron('));
    expect(scheduled).toHaveLength(1);
    expect(joined(scheduled[0])).toContain(':stateMachine:Agents-refund-reconciler:live');
    const apis = Object.keys(template.findResources('AWS::ApiGateway::RestApi'));
    // The stack's one API (infra/stack-api.ts), serving the refund agent only.
    expect(apis).toHaveLength(1);
    expect(apis[0]).toMatch(/^ControlPlaneStackApi/);
  });

  it('gives each agent its own eight step functions (handoff and compaction too), and the stack one expiry sweep, sweeper, version pruner, recovery, ExecutionStopped and API (approval callback, runs, events)', () => {
    const functions = Object.entries(template.findResources('AWS::Lambda::Function')).filter(([, fn]) => joined(fn).includes('SAVEPOINT_STEP'));
    expect(functions.filter(([id]) => id.startsWith('Refunds')).length).toBe(8);
    expect(functions.filter(([id]) => id.startsWith('Triage')).length).toBe(8);
    // The API's three are the stack's (infra/stack-api.ts), whatever the number of agents it serves.
    expect(functions.filter(([id]) => id.startsWith('ControlPlane')).map(([, fn]) => fn.Properties.Environment.Variables.SAVEPOINT_STEP).sort()).toEqual(['approval-callback', 'execution-stopped', 'expire-approvals', 'prune-versions', 'recover-run', 'run-events', 'runs-api', 'sweep']);
  });
});

describe("the stack's one API", () => {
  it('fails the synth when an agent asks for another approval page than the stack\'s API has (one stage), naming the agent\'s construct id', () => {
    const stack = new SavepointStack(assertionApp(), 'Pages');
    stack.addAgent('A', { agentName: 'agent-a', entry: EXAMPLE_AGENTS.refundReconciler });
    expect(() => stack.addAgent('B', { agentName: 'agent-b', entry: EXAMPLE_AGENTS.refundReconciler, approvalPage: { throttle: { rateLimit: 1, burstLimit: 2 } } })).toThrow(
      /^DurableAgent B: approvalPage: the agents of a stack share its API/,
    );
  });

  it("gives every agent's ApprovalApiUrl output the stack's one API", () => {
    const stack = new SavepointStack(assertionApp(), 'Urls');
    for (const name of ['agent-a', 'agent-b']) stack.addAgent(name === 'agent-a' ? 'A' : 'B', { agentName: name, entry: EXAMPLE_AGENTS.refundReconciler });
    const outputs = Object.values(Template.fromStack(stack).toJSON().Outputs as Record<string, { Description?: string; Value: unknown }>).filter((output) => output.Description?.endsWith(':ApprovalApiUrl'));
    expect(outputs.map((output) => output.Description).sort()).toEqual(['savepoint:agent-a:ApprovalApiUrl', 'savepoint:agent-b:ApprovalApiUrl']);
    expect(JSON.stringify(outputs[0]!.Value)).toEqual(JSON.stringify(outputs[1]!.Value));
    expect(Object.keys(Template.fromStack(stack).findResources('AWS::ApiGateway::RestApi'))).toHaveLength(1);
  });
});
