import { Template } from 'aws-cdk-lib/assertions';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { DurableAgent } from '../../infra/durable-agent.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { assertionApp } from './example-template.js';
import { roleOfFunction, roleStatements } from '../support/role-policies.js';
import { extractStateMachine, type CfnTemplateJson } from '../../local/template/asl.js';
import { twinIam } from '../../local/aws/iam/index.js';

/**
 * Fan-out on AWS through the public construct: two agents with `batches` and one without share
 * one batch state machine (the stack's); each agent's item function starts only its own agent's
 * runs, the batch state machine invokes only those item functions and reads only the manifest
 * bucket it was given, and each runs API is told where its batches start.
 */
let template: Template;
let resources: Record<string, any>;

beforeAll(() => {
  const app = assertionApp();
  const stack = new SavepointStack(app, 'Fleet');
  const manifests = new Bucket(stack, 'Manifests');
  stack.addAgent('Refunds', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler, batches: { manifestBuckets: [manifests] } });
  stack.addAgent('Triage', { agentName: 'support-triage', entry: EXAMPLE_AGENTS.supportTriage, batches: {} });
  stack.addAgent('Quiet', { agentName: 'quiet', entry: EXAMPLE_AGENTS.supportTriage });
  template = Template.fromStack(stack);
  resources = template.toJSON().Resources;
});

const joined = (value: unknown) => JSON.stringify(value);
const ids = (type: string, match: RegExp) => Object.keys(template.findResources(type)).filter((id) => match.test(id));
const variables = (functionId: string) => resources[functionId].Properties.Environment.Variables as Record<string, unknown>;
const statementsOf = (functionId: string) => roleStatements(resources, roleOfFunction(resources, functionId));
const resourcesOf = (statements: any[], action: string) => statements.filter((statement) => [statement.Action].flat().includes(action)).flatMap((statement) => [statement.Resource].flat());

describe('batches on AWS', () => {
  const batchMachine = () => ids('AWS::StepFunctions::StateMachine', /^ControlPlaneBatches/);
  const itemFunction = (agent: string) => ids('AWS::Lambda::Function', new RegExp(`^${agent}BatchItemFunction`))[0]!;

  it('is one batch state machine for the stack, and an item function per agent with batches', () => {
    expect(batchMachine()).toHaveLength(1);
    expect(ids('AWS::StepFunctions::StateMachine', /./)).toHaveLength(4);
    for (const agent of ['Refunds', 'Triage']) expect(variables(itemFunction(agent))['SAVEPOINT_STEP']).toBe(Steps.BatchItem);
    expect(ids('AWS::Lambda::Function', /^QuietBatchItemFunction/)).toEqual([]);
  });

  it('lets the batch state machine invoke only the item functions, and read only the manifest bucket', () => {
    const role = resources[batchMachine()[0]!].Properties.RoleArn['Fn::GetAtt'][0] as string;
    const statements = roleStatements(resources, role);
    const invoked = resourcesOf(statements, 'lambda:InvokeFunction');
    expect(invoked).toHaveLength(4);
    for (const agent of ['Refunds', 'Triage']) {
      expect(invoked).toContainEqual({ 'Fn::GetAtt': [itemFunction(agent), 'Arn'] });
      expect(joined(invoked)).toContain(`{"Fn::GetAtt":["${itemFunction(agent)}","Arn"]},":*"`);
    }
    expect(joined(resourcesOf(statements, 's3:GetObject'))).toMatch(/^\[\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["Manifests[0-9A-F]+","Arn"\]\},"\/\*"\]\]\}\]$/);
    // What a Distributed Map needs: its own child executions.
    expect(joined(resourcesOf(statements, 'states:StartExecution'))).toContain(batchMachine()[0]);
    expect(joined(resourcesOf(statements, 'states:DescribeExecution'))).toContain(':execution:Fleet-batches/*"');
    expect(joined(resourcesOf(statements, 'states:StopExecution'))).toContain(':execution:Fleet-batches/*"');
  });

  it('lets each item function start only its own agent’s runs, and sign their starter as the runs API does', () => {
    for (const [agent, machine, other] of [['Refunds', 'Fleet-refund-reconciler', 'Fleet-support-triage'], ['Triage', 'Fleet-support-triage', 'Fleet-refund-reconciler']] as const) {
      const started = joined(resourcesOf(statementsOf(itemFunction(agent)), 'states:StartExecution'));
      expect(started).toContain(`:stateMachine:${machine}"`);
      expect(started).not.toContain(other);
      expect(variables(itemFunction(agent))).toMatchObject({ STARTER_KEY_ID: expect.anything(), STATE_MACHINE_ARN: expect.anything() });
    }
    const starterKey = Object.values(template.findResources('AWS::KMS::Key')).find((key) => joined(key).includes('RunsApiSignsStarters'))!;
    const signers = joined((starterKey.Properties.KeyPolicy.Statement as { Sid: string }[]).find((statement) => statement.Sid === 'RunsApiSignsStarters'));
    for (const agent of ['Refunds', 'Triage']) expect(signers).toContain(roleOfFunction(resources, itemFunction(agent)));
  });

  it('tells the stack’s runs function where its batches start and, in each agent’s settings, which item function they invoke, and lets it start and read them', () => {
    // One runs function serves the stack (infra/stack-api.ts).
    const [runs, ...others] = Object.keys(resources).filter((id) => resources[id].Type === 'AWS::Lambda::Function' && variables(id)['SAVEPOINT_STEP'] === Steps.RunsApi);
    expect(others).toEqual([]);
    // By ARNs built from its name (Fleet-batches), as the agents' state machines are named.
    expect(joined(variables(runs!)['BATCH_STATE_MACHINE_ARN'])).toMatch(/:stateMachine:Fleet-batches"\]\]\}$/);
    const settings = joined(variables(runs!)['AGENT_SETTINGS']);
    for (const agent of ['Refunds', 'Triage']) expect(settings).toContain(JSON.stringify({ 'Fn::GetAtt': [itemFunction(agent), 'Arn'] }));
    expect(settings.match(/batchItemFunction/g)).toHaveLength(2);
    const statements = statementsOf(runs!);
    expect(joined(resourcesOf(statements, 'states:StartExecution'))).toContain(':stateMachine:Fleet-batches"');
    expect(joined(resourcesOf(statements, 'states:DescribeExecution'))).toContain(':execution:Fleet-batches:*"');
  });

  it('lets the stack’s runs function read the manifest bucket’s objects, and no other S3 (a manifest batch’s progress lists its runs)', () => {
    const [runs] = Object.keys(resources).filter((id) => resources[id].Type === 'AWS::Lambda::Function' && variables(id)['SAVEPOINT_STEP'] === Steps.RunsApi);
    const statements = statementsOf(runs!);
    expect(joined(resourcesOf(statements, 's3:GetObject'))).toMatch(/^\[\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["Manifests[0-9A-F]+","Arn"\]\},"\/\*"\]\]\}\]$/);
    const s3Actions = statements.flatMap((statement) => [statement.Action].flat()).filter((action: string) => action.startsWith('s3:'));
    expect(s3Actions).toEqual(['s3:GetObject']);
  });

  it('leaves the twin running an agent’s template its agent’s state machine, the batch state machine beside it marked as the stack’s', () => {
    const stack = new SavepointStack(assertionApp(), 'Solo');
    stack.addAgent('Refunds', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler, batches: {} });
    const solo = Template.fromStack(stack).toJSON() as CfnTemplateJson;
    const extracted = extractStateMachine(solo);
    expect(extracted.name).toBe('Solo-refund-reconciler');
    expect(twinIam(solo).roles.stateMachineRole).toBe((solo.Resources![extracted.logicalId]!.Properties!['RoleArn'] as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0]);
  });

  it('fails at synth for batches without the runs API, naming the prop', () => {
    const stack = new SavepointStack(assertionApp(), 'NoApi');
    expect(() => new DurableAgent(stack, 'Lonely', { agentName: 'lonely', entry: EXAMPLE_AGENTS.supportTriage, approvalApi: false, batches: {} })).toThrow('DurableAgent Lonely: batches need the runs API (approvalApi: false has none)');
  });

  it('fails at synth for a manifest bucket S3 would refuse the name of, naming the agent, the prop and the name', () => {
    const stack = new SavepointStack(assertionApp(), 'BadBucket');
    // This synthesized; each batch on it failed at run time, reading its manifest.
    const buckets = [Bucket.fromBucketName(stack, 'Fine', 'acme-batches.eu-1'), Bucket.fromBucketName(stack, 'Bad', 'My_Bucket')];
    expect(() => stack.addAgent('Refunds', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler, batches: { manifestBuckets: buckets } })).toThrow(
      'DurableAgent Refunds: batches.manifestBuckets[1]: "My_Bucket" is no S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit)',
    );
  });
});
