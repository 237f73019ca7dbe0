import { Stack } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { Template } from 'aws-cdk-lib/assertions';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { assertionApp } from './example-template.js';

/**
 * Issue 20, item 6. An agent is about 130 resources and CloudFormation takes at most 500 per stack
 * ("CloudFormation quotas": 500 resources per stack,
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html), so a
 * stack of agents puts each one in a nested stack of its own (`agentsInNestedStacks`), over the
 * ledger and parameters of the parent. `AWS::ApiGateway::Account` is a setting of the whole account
 * and region (the CloudWatch Logs role API Gateway logs with,
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-apigateway-account.html):
 * created at most once, or not at all when the deployer says it is set already.
 */
type Synthesized = { stack: Stack; template: Record<string, any> };
let stacks: Synthesized[];
let parent: SavepointStack;

const AGENTS = 10;

beforeAll(() => {
  const app = assertionApp();
  parent = new SavepointStack(app, 'Fleet', { agentsInNestedStacks: true });
  for (let i = 0; i < AGENTS; i++) parent.addAgent(`Agent${i}`, { agentName: `agent-${i}`, entry: EXAMPLE_AGENTS.refundReconciler });
  const assembly = app.synth();
  const all = [parent, ...parent.node.findAll().filter((c): c is Stack => Stack.isStack(c) && c !== parent)];
  stacks = all.map((stack) => ({ stack, template: JSON.parse(JSON.stringify(Template.fromStack(stack).toJSON())) }));
  expect(assembly.stacks.length).toBe(1);
});

const countOf = (template: Record<string, any>, type: string) => Object.values(template.Resources as Record<string, { Type: string }>).filter((r) => r.Type === type).length;

describe('an app of ten agents', () => {
  it('synthesizes, every stack under 500 resources', () => {
    expect(stacks.length).toBe(AGENTS + 1);
    for (const { stack, template } of stacks) expect(Object.keys(template.Resources).length, stack.node.path).toBeLessThan(500);
    expect(stacks.reduce((n, { template }) => n + countOf(template, 'AWS::StepFunctions::StateMachine'), 0)).toBe(AGENTS);
    // One ledger, in the parent.
    expect(countOf(stacks[0]!.template, 'AWS::DynamoDB::GlobalTable')).toBe(1);
    expect(stacks.slice(1).every(({ template }) => countOf(template, 'AWS::DynamoDB::GlobalTable') === 0)).toBe(true);
  });

  it('creates the account-wide AWS::ApiGateway::Account once', () => {
    expect(stacks.reduce((n, { template }) => n + countOf(template, 'AWS::ApiGateway::Account'), 0)).toBe(1);
  });

  it('keeps every agent\'s outputs on the parent stack, where the CLI finds them by description', () => {
    const descriptions = Object.values(stacks[0]!.template.Outputs as Record<string, { Description?: string }>).map((o) => o.Description);
    for (let i = 0; i < AGENTS; i++) {
      for (const output of ['StateMachineArn', 'StateMachineAliasArn', 'LedgerTableName', 'LedgerSealSecretArn', 'ApprovalApiUrl']) {
        expect(descriptions, `agent-${i} ${output}`).toContain(`savepoint:agent-${i}:${output}`);
      }
    }
  });
});

describe('the API Gateway account setting', () => {
  it('is created once for two agents in one stack', () => {
    const stack = new SavepointStack(assertionApp(), 'Two');
    stack.addAgent('A', { agentName: 'agent-a', entry: EXAMPLE_AGENTS.refundReconciler });
    stack.addAgent('B', { agentName: 'agent-b', entry: EXAMPLE_AGENTS.refundReconciler });
    expect(Object.keys(Template.fromStack(stack).findResources('AWS::ApiGateway::Account'))).toHaveLength(1);
  });

  it('is left to the deployer when they say it is set already', () => {
    const stack = new SavepointStack(assertionApp(), 'Mine', { apiGatewayAccount: false });
    stack.addAgent('A', { agentName: 'agent-a', entry: EXAMPLE_AGENTS.refundReconciler });
    expect(Object.keys(Template.fromStack(stack).findResources('AWS::ApiGateway::Account'))).toHaveLength(0);
  });
});

describe('agents packed into nested stacks (agentsInNestedStacks: n)', () => {
  it('puts n agents in each nested stack, named for its first agent, with each agent\'s outputs once on the parent', () => {
    const stack = new SavepointStack(assertionApp(), 'Packed', { agentsInNestedStacks: 2 });
    for (let i = 0; i < 5; i++) stack.addAgent(`Agent${i}`, { agentName: `agent-${i}`, entry: EXAMPLE_AGENTS.refundReconciler });
    const nested = stack.node.children.filter((child): child is Stack => Stack.isStack(child));
    expect(nested.map((child) => child.node.id)).toEqual(['Agent0Stack', 'Agent2Stack', 'Agent4Stack']);
    const machines = (child: Stack) => Object.keys(Template.fromStack(child).findResources('AWS::StepFunctions::StateMachine')).length;
    expect(nested.map(machines)).toEqual([2, 2, 1]);
    // The agents of a nested stack share its keys (one decision key each stack, not each agent).
    expect(nested.map((child) => Object.keys(Template.fromStack(child).findResources('AWS::KMS::Key')).length)).toEqual([2, 2, 2]);
    const descriptions = Object.values(Template.fromStack(stack).toJSON().Outputs as Record<string, { Description?: string }>).map((output) => output.Description);
    for (let i = 0; i < 5; i++) expect(descriptions.filter((description) => description === `savepoint:agent-${i}:StateMachineArn`), `agent-${i}`).toHaveLength(1);
  });

  it('fails when n is not a whole number of agents from 1 to 5, naming the prop', () => {
    for (const agentsInNestedStacks of [0, 6, 2.5]) {
      expect(() => new SavepointStack(assertionApp(), 'Bad', { agentsInNestedStacks })).toThrow(/agentsInNestedStacks must be true, false or a whole number of agents to a nested stack from 1 to 5/);
    }
  });
});
