import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.js';
import { supportTriage } from '../../agents/support-triage/agent.js';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { assertionApp } from './example-template.js';

/**
 * An agent's `env` (what its `deps` read) checked at synth (issue 39, item 6): deployed without
 * one of them, its first tool call on AWS would fail; the construct fails first, naming the
 * variable and the prop that sets it.
 */
describe('DurableAgent given the agent', () => {
  it('fails when the environment lacks a variable the agent declares, naming it and the environment prop', () => {
    const stack = new SavepointStack(assertionApp(), 'Agents');
    expect(() => stack.addAgent('Refunds', { agentName: 'refund-reconciler', agent: refundReconciler, entry: EXAMPLE_AGENTS.refundReconciler })).toThrow(
      'DurableAgent Refunds: agent refund-reconciler reads PAYMENTS_API_URL (its env), which its functions would not get: set it in the environment prop (environment: { PAYMENTS_API_URL: … }, e.g. from stack.parameter(…))',
    );
  });

  it('names every missing variable, and not the ones that are set', () => {
    const stack = new SavepointStack(assertionApp(), 'Agents');
    expect(() =>
      stack.addAgent('Triage', { agentName: 'support-triage', agent: supportTriage, entry: EXAMPLE_AGENTS.supportTriage, environment: { MAIL_API_URL: 'https://mail.example.com' } }),
    ).toThrow(/reads HELPDESK_API_URL \(its env\)/);
    expect(() => stack.addAgent('Triage2', { agentName: 'support-triage', agent: supportTriage, entry: EXAMPLE_AGENTS.supportTriage })).toThrow(/reads HELPDESK_API_URL, MAIL_API_URL \(its env\).*set them in the environment prop/);
  });

  it('fails when agent and agentName name different agents', () => {
    const stack = new SavepointStack(assertionApp(), 'Agents');
    expect(() => stack.addAgent('Refunds', { agentName: 'refunds', agent: refundReconciler, entry: EXAMPLE_AGENTS.refundReconciler })).toThrow('agent is "refund-reconciler" but agentName is "refunds"');
  });

  it('synthesizes when every declared variable is set, a deploy-time parameter counting as set; Lambda\'s own variables need no setting', () => {
    const stack = new SavepointStack(assertionApp(), 'Agents');
    stack.addAgent('Refunds', {
      agentName: 'refund-reconciler',
      agent: { name: 'refund-reconciler', env: [...refundReconciler.env!, 'AWS_REGION'] },
      entry: EXAMPLE_AGENTS.refundReconciler,
      environment: { PAYMENTS_API_URL: stack.parameter('PaymentsApiUrl', 'Base URL of the payments provider.') },
    });
    const functions = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function'));
    expect(functions.some((fn) => JSON.stringify(fn).includes('PAYMENTS_API_URL'))).toBe(true);
  });
});

describe("DurableAgent's environment", () => {
  it("fails when it sets a variable savepoint sets on the agent's functions itself, naming the prop and the variable (either would silently replace the other)", () => {
    const stack = new SavepointStack(assertionApp(), 'Shared');
    const add = (id: string, environment: Record<string, string>) => () => stack.addAgent(id, { agentName: id.toLowerCase(), entry: EXAMPLE_AGENTS.refundReconciler, environment });
    const shared = (id: string, key: string) => `DurableAgent ${id}: environment.${key}: savepoint sets ${key} on the agent's functions itself`;
    // The agent's own table, named as most apps name it: the ledger's name would replace it (set later, by the ledger's grant).
    expect(add('Orders', { TABLE_NAME: 'orders' })).toThrow(shared('Orders', 'TABLE_NAME'));
    // One the harness sets as it makes the function: the agent's would replace savepoint's.
    expect(add('Step', { SAVEPOINT_STEP: 'mine' })).toThrow(shared('Step', 'SAVEPOINT_STEP'));
    expect(add('Version', { CODE_VERSION: 'v2' })).toThrow(shared('Version', 'CODE_VERSION'));
    expect(add('Fine', { ORDERS_TABLE: 'orders', PAYMENTS_API_URL: 'https://payments.example.com' })).not.toThrow();
    // A library's own setting (Powertools, OpenTelemetry) is the agent's to set: its value is the one the functions get.
    expect(add('Named', { POWERTOOLS_SERVICE_NAME: 'billing' })).not.toThrow();
    const services = Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function')).map((fn) => (fn as { Properties: { Environment?: { Variables?: Record<string, unknown> } } }).Properties.Environment?.Variables?.['POWERTOOLS_SERVICE_NAME']);
    expect(services).toContain('billing');
    expect(services).not.toContain('named');
  });

  it('fails when a variable has a name Lambda refuses or a value that is no string, naming the prop and the variable', () => {
    const stack = new SavepointStack(assertionApp(), 'Names');
    const add = (id: string, environment: Record<string, unknown>) => () => stack.addAgent(id, { agentName: id.toLowerCase(), entry: EXAMPLE_AGENTS.refundReconciler, environment: environment as Record<string, string> });
    // CloudFormation's schema of a function takes [a-zA-Z][a-zA-Z0-9_]+ only: these synthesized, and failed the deploy.
    expect(add('Dash', { 'PAYMENTS-URL': 'https://payments.example.com' })).toThrow('DurableAgent Dash: environment: "PAYMENTS-URL" is no name Lambda takes for a variable (a letter, then at least one letter, digit or _)');
    expect(add('Short', { X: '1' })).toThrow(/^DurableAgent Short: environment: "X" is no name Lambda takes/);
    expect(add('Digit', { '1ST': '1' })).toThrow(/^DurableAgent Digit: environment: "1ST" is no name/);
    // A number failed the synth deep in the CDK ("Supplied properties not correct for CfnFunctionProps"), naming no prop.
    expect(add('Number', { RETRIES: 3 })).toThrow('DurableAgent Number: environment.RETRIES: expected a string, got 3');
  });
});
