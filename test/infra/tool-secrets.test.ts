import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { assertionApp } from './example-template.js';
import { identityPolicies } from '../support/role-policies.js';

/** Issue 36 item 7: tool credentials are secrets only CallTool reads; no function's environment holds a value. */
const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:chat-webhook-AbCdEf';

describe('toolSecrets on the construct', () => {
  it("names each secret's ARN in CallTool's environment only, and lets CallTool's role only read it", () => {
    const stack = new SavepointStack(assertionApp(), 'Tools');
    stack.addAgent('Agent', { agentName: 'tools', entry: EXAMPLE_AGENTS.refundReconciler, toolSecrets: { CHAT_WEBHOOK_URL: ARN } });
    const resources = Template.fromStack(stack).toJSON().Resources as Record<string, { Type: string; Properties: Record<string, any> }>;
    const functions = Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.SAVEPOINT_STEP);
    const withVariable = functions.filter((fn) => fn.Properties.Environment.Variables.TOOL_SECRETS !== undefined).map((fn) => fn.Properties.Environment.Variables.SAVEPOINT_STEP);
    expect(withVariable).toEqual([Steps.CallTool]);
    const callTool = functions.find((fn) => fn.Properties.Environment.Variables.SAVEPOINT_STEP === Steps.CallTool)!;
    expect(JSON.parse(callTool.Properties.Environment.Variables.TOOL_SECRETS)).toEqual({ CHAT_WEBHOOK_URL: ARN });
    const readers = identityPolicies(resources)
      .filter((policy) => JSON.stringify(policy.document).includes(ARN))
      .flatMap((policy) => policy.roles);
    expect(readers).toEqual([callTool.Properties.Role['Fn::GetAtt'][0]]);
  });

  it('fails the synth for a name a tool could not ask for, naming it', () => {
    const stack = new SavepointStack(assertionApp(), 'BadTools');
    expect(() => stack.addAgent('Agent', { agentName: 'bad-tools', entry: EXAMPLE_AGENTS.refundReconciler, toolSecrets: { 'chat-webhook': ARN } })).toThrow(/^DurableAgent Agent: toolSecrets: "chat-webhook" is not a tool secret name/);
  });

  it("fails the synth for a secret's name or ARN Secrets Manager would refuse, naming the agent, the prop and the value", () => {
    const stack = new SavepointStack(assertionApp(), 'BadSecrets');
    const add = (id: string, given: string) => () => stack.addAgent(id, { agentName: id.toLowerCase(), entry: EXAMPLE_AGENTS.refundReconciler, toolSecrets: { CHAT_WEBHOOK_URL: given } });
    // The CDK's own ARN error named no prop; the name synthesized, and the tool's first read failed on AWS.
    expect(add('Arn', 'arn:nope')).toThrow('DurableAgent Arn: toolSecrets.CHAT_WEBHOOK_URL: "arn:nope" is no secret ARN (arn:<partition>:secretsmanager:<region>:<account>:secret:<name>)');
    expect(add('Name', 'has space!')).toThrow('DurableAgent Name: toolSecrets.CHAT_WEBHOOK_URL: "has space!" is no secret name Secrets Manager takes (1 to 512 letters, digits and /_+=.@-)');
    expect(add('Partial', 'arn:aws:secretsmanager:us-east-1:123456789012:secret:chat webhook')).toThrow(/^DurableAgent Partial: toolSecrets\.CHAT_WEBHOOK_URL: .* is no secret name/);
    expect(add('Fine', 'team/chat-webhook_url+1=@.')).not.toThrow();
  });
});
