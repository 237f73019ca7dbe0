import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { exampleStack } from '../../infra/example.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { assertionApp } from './example-template.js';
import { Stack } from 'aws-cdk-lib';
import { DurableAgent } from '../../infra/durable-agent.js';
import { DEFAULT_KEEP_VERSIONS } from '../../lambdas/steps/prune-versions.js';
import { STACK_TAG } from '../../infra/step-function.js';
import { roleStatements } from '../support/role-policies.js';

/**
 * Pinned versions (issue 14): each deploy's state machine version invokes that deploy's Lambda
 * versions and sits behind the alias new runs start on; old versions stay for the runs that drain
 * on them.
 */
type Resources = Record<string, { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; UpdateReplacePolicy?: string }>;

const synth = (codeVersion: string) => Template.fromStack(exampleStack(assertionApp(), { codeVersion }));
const joined = (value: unknown) => JSON.stringify(value);

let template: Template;
let resources: Resources;
let taskTargets: string[];

beforeAll(() => {
  template = synth('build-1');
  resources = template.toJSON().Resources as Resources;
  const [machine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
  const parts = (machine!.Properties.DefinitionString as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
  // What each Task's FunctionName is: the parts of the definition that are not text.
  taskTargets = parts.filter((part): part is { Ref: string } => typeof part === 'object' && part !== null && 'Ref' in part && (part as { Ref: string }).Ref !== 'AWS::Partition').map((part) => part.Ref);
});

/** A function's ARN as AWS would resolve it: its logical id stands for its generated name. */
const functionArnOf = (functionId: string) => `arn:aws:lambda:us-east-1:123456789012:function:${functionId}`;
/** The ARN (or ARN pattern) a policy's Resource resolves to, for the shapes the template uses. */
function arnOf(value: unknown, all: Resources): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, any>;
  if (v['Fn::GetAtt']?.[1] === 'Arn' && all[v['Fn::GetAtt'][0]]?.Type === 'AWS::Lambda::Function') return functionArnOf(v['Fn::GetAtt'][0]);
  if (v['Fn::Join']) return (v['Fn::Join'][1] as unknown[]).map((part) => arnOf(part, all)).join(v['Fn::Join'][0]);
  // A version's Ref is its ARN: this deploy's version, whatever its number — never an older one.
  if (v['Ref'] && all[v['Ref']]?.Type === 'AWS::Lambda::Version') return `${functionArnOf(all[v['Ref']]!.Properties.FunctionName.Ref)}:<this deploy's version>`;
  return JSON.stringify(value);
}
/** IAM's ARN matching: `*` any run of characters, `?` one. */
/** The function ARN patterns the state machine's role may invoke (`lambda:InvokeFunction`), in `synthesized`. */
const invocableByStateMachine = (synthesized: Template) => {
  const all = synthesized.toJSON().Resources as Resources;
  const role = Object.values(synthesized.findResources('AWS::StepFunctions::StateMachine'))[0]!.Properties.RoleArn['Fn::GetAtt'][0] as string;
  return (roleStatements(all, role) as { Effect: string; Action: string | string[]; Resource: unknown }[])
    .filter((statement) => statement.Effect === 'Allow' && [statement.Action].flat().includes('lambda:InvokeFunction'))
    .flatMap((statement) => [statement.Resource].flat().map((resource) => arnOf(resource, all)));
};
const globMatches = (pattern: string, arn: string) => new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`).test(arn);

const stepOf = (functionId: string) => resources[functionId]!.Properties.Environment.Variables.SAVEPOINT_STEP as string;
const functionOf = (step: string) => Object.entries(resources).find(([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Environment?.Variables?.SAVEPOINT_STEP === step)!;
const policyOf = (functionId: string) => {
  const role = (resources[functionId]!.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  return roleStatements(resources, role) as { Action: string | string[]; Resource: unknown }[];
};

describe('pinned Lambda versions', () => {
  it('every Task invokes a published version of its step function, never $LATEST', () => {
    expect(taskTargets.length).toBeGreaterThanOrEqual(9);
    const steps = new Set<string>();
    for (const target of taskTargets) {
      const version = resources[target]!;
      expect(version.Type).toBe('AWS::Lambda::Version');
      steps.add(stepOf(version.Properties.FunctionName.Ref));
    }
    expect([...steps].sort()).toEqual([Steps.CallModel, Steps.CallTool, Steps.Compact, Steps.Finalize, Steps.Handoff, Steps.RequestApproval, Steps.StartRun].sort());
  });

  /**
   * 0.8.0 dropped the BudgetCheck state (CallModel makes an execution's first decision), but an
   * execution started on an older version still invokes that version's BudgetCheck Task — at its
   * start, and at the start of each successor it hands off to on the same version (0.6.x: between
   * turns too). Removing the function from the template would delete it with all its versions
   * (CloudFormation deletes a function's versions with it), and those executions would fail with
   * Lambda.ResourceNotFoundException. So the function stays, publishes no new version (no Task of
   * this deploy invokes one), its versions stay invocable by the state machine's role, and it
   * keeps the tag that lets the pruner delete its versions no remaining state machine version pins.
   */
  it("keeps BudgetCheck's function for the executions of older versions: invocable, tagged, with no version of this deploy", () => {
    const [fnId, fn] = functionOf(Steps.BudgetCheck);
    expect(fn.Type).toBe('AWS::Lambda::Function');
    expect(Object.values(resources).filter((resource) => resource.Type === 'AWS::Lambda::Version' && resource.Properties.FunctionName.Ref === fnId)).toEqual([]);
    expect(fn.Properties.Tags).toContainEqual({ Key: STACK_TAG, Value: 'Savepoint' });
    const allowed = invocableByStateMachine(template);
    const olderVersion = `${functionArnOf(fnId)}:3`;
    expect(allowed.some((pattern) => globMatches(pattern, olderVersion)), `${olderVersion} is invocable`).toBe(true);
    expect(allowed.some((pattern) => globMatches(pattern, functionArnOf(fnId))), 'never $LATEST unqualified').toBe(false);
  });

  it('keeps every version after the next deploy (retained), so draining runs keep working', () => {
    for (const target of new Set(taskTargets)) expect(resources[target]).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });

  /**
   * Issue 20, item 1. The state machine role has one policy, rewritten by every deploy; an
   * execution pinned to an older state machine version still invokes the Lambda versions of its
   * own deploy. So the role must allow every retained version, not only this deploy's: a grant on
   * the function's qualified ARNs (`function:NAME:*`). Lambda authorizes an invoke of a version
   * against that version's ARN ("Fine-tuning the Resources and Conditions sections of policies":
   * function actions are restricted by function, version or alias ARN,
   * https://docs.aws.amazon.com/lambda/latest/dg/lambda-api-permissions-ref.html).
   */
  it('lets the state machine invoke the versions an older deploy\'s Tasks invoke, after the next code-changing deploy', () => {
    const allowed = invocableByStateMachine(synth('build-2'));
    for (const target of new Set(taskTargets)) {
      // What build-1's Task invokes: its function's version (published as version 1 by that deploy).
      const invoked = `${functionArnOf(resources[target]!.Properties.FunctionName.Ref)}:1`;
      expect(allowed.some((pattern) => globMatches(pattern, invoked)), `${invoked} is invocable after the next deploy`).toBe(true);
    }
  });

  it('publishes new versions when the code changes: the next deploy invokes others', () => {
    const next = synth('build-2').toJSON().Resources as Resources;
    const versions = (all: Resources) => Object.entries(all).filter(([, resource]) => resource.Type === 'AWS::Lambda::Version').map(([id]) => id);
    const before = new Set(versions(resources));
    expect(versions(next).filter((id) => before.has(id))).toEqual([]);
  });
});

describe('the state machine version and its alias', () => {
  it('publishes the definition as a version, retained across deploys, described with the agent and code version', () => {
    const versions = Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::StepFunctions::StateMachineVersion');
    expect(versions).toHaveLength(1);
    const [, version] = versions[0]!;
    expect(version).toMatchObject({ DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    const machineId = Object.keys(template.findResources('AWS::StepFunctions::StateMachine'))[0]!;
    expect(version.Properties).toEqual({
      StateMachineArn: { Ref: machineId },
      StateMachineRevisionId: { 'Fn::GetAtt': [machineId, 'StateMachineRevisionId'] },
      Description: 'savepoint agent refund-reconciler; code build-1',
    });
  });

  it('routes all new executions through the alias `live` to that version', () => {
    const [versionId] = Object.keys(template.findResources('AWS::StepFunctions::StateMachineVersion'));
    template.hasResourceProperties('AWS::StepFunctions::StateMachineAlias', {
      Name: 'live',
      RoutingConfiguration: [{ StateMachineVersionArn: { 'Fn::GetAtt': [versionId, 'Arn'] }, Weight: 100 }],
    });
  });

  it('starts new runs on the alias: the schedule, and the CLI through the alias output', () => {
    const schedule = Object.values(template.findResources('AWS::Events::Rule')).find((rule) => joined(rule).includes('cron('));
    expect(joined(schedule!.Properties.Targets)).toContain(':stateMachine:Savepoint-refund-reconciler:live');
    const role = schedule!.Properties.Targets[0].RoleArn['Fn::GetAtt'][0] as string;
    const grants = (roleStatements(resources, role) as { Effect: string; Action: string | string[]; Resource: unknown }[])
      .filter((statement) => statement.Effect === 'Allow' && [statement.Action].flat().includes('states:StartExecution'));
    // Issue 20, item 2: a start on an alias is authorized against the state machine's own ARN
    // ("Authorization for versions and aliases in Step Functions workflows": "Step Functions uses
    // the state machine's ARN instead of using the version ARN or alias ARN",
    // https://docs.aws.amazon.com/step-functions/latest/dg/auth-version-alias.html). A grant on the
    // alias ARN alone is refused: the nightly run never starts.
    expect(grants.flatMap((statement) => [statement.Resource].flat()).map(joined)).toContainEqual(expect.stringMatching(/:stateMachine:Savepoint-refund-reconciler"\]\]\}$/));
    template.hasOutput('*', { Description: 'savepoint:refund-reconciler:StateMachineAliasArn', Value: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([':stateMachine:Savepoint-refund-reconciler:live'])] }) });
  });

  it('the stack\'s sweeper starts runs of the agent\'s state machine only: on their own version, else the alias of their execution\'s machine', () => {
    const [id, fn] = functionOf(Steps.Sweep);
    // No alias in its environment: it serves every agent of the stack (lambdas/adapters/control-plane-handlers.ts aliasStarter).
    expect(fn.Properties.Environment.Variables.STATE_MACHINE_ARN).toBeUndefined();
    const start = policyOf(id).find((statement) => statement.Action === 'states:StartExecution');
    expect(joined(start?.Resource)).toMatch(/:stateMachine:Savepoint-refund-reconciler"\]\]\}$/);
  });

  it('the stack\'s recovery continues runs on the version their ended execution\'s event names, with no DescribeExecution, on the agents\' state machines only', () => {
    const [id, fn] = functionOf(Steps.RecoverRun);
    expect(fn.Properties.Environment.Variables.STATE_MACHINE_ARN).toBeUndefined();
    const statements = policyOf(id);
    const start = statements.find((statement) => statement.Action === 'states:StartExecution');
    expect(joined(start?.Resource)).toMatch(/:stateMachine:Savepoint-refund-reconciler"\]\]\}$/);
    expect(statements.some((statement) => joined(statement.Action).includes('states:DescribeExecution'))).toBe(false);
  });

  it.each([Steps.Handoff])('%s continues runs on their own version and falls back on the alias', (step) => {
    const [id, fn] = functionOf(step);
    expect(joined(fn.Properties.Environment.Variables.STATE_MACHINE_ARN)).toContain(':stateMachine:Savepoint-refund-reconciler:live');
    const statements = policyOf(id);
    // Starting on a version or an alias is authorized on the machine's own ARN.
    const start = statements.find((statement) => statement.Action === 'states:StartExecution');
    expect(joined(start?.Resource)).toMatch(/:stateMachine:Savepoint-refund-reconciler"\]\]\}$/);
    expect(statements.some((statement) => joined(statement.Action).includes('states:DescribeExecution'))).toBe(true);
  });

  it('lets StartRun stop the execution a migration takes the run from, the runs API a cancelled run\'s, and no other function, each only its agent\'s executions', () => {
    const stoppers = Object.entries(resources)
      .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Environment?.Variables?.SAVEPOINT_STEP)
      .filter(([id]) => joined(policyOf(id).map((statement) => statement.Action)).includes('states:StopExecution'))
      .map(([id]) => stepOf(id));
    expect(stoppers.sort()).toEqual([Steps.StartRun, Steps.RunsApi].sort());
    for (const step of [Steps.StartRun, Steps.RunsApi]) {
      const stop = policyOf(functionOf(step)[0]).find((statement) => joined(statement.Action).includes('states:StopExecution'));
      expect(joined(stop?.Resource), step).toContain(':execution:Savepoint-refund-reconciler:*');
    }
  });
});

// Issue 20 item 9: retained versions grow toward the 1,000-version quota; the pruner deletes what nothing needs.
describe('the version pruner', () => {
  it('runs every 6 hours with the keep count, allowed only the version calls, on the state machine\'s own ARN', () => {
    const [id, fn] = functionOf(Steps.PruneVersions);
    // The stack's pruner (infra/control-plane.ts): each agent's machine by the rest of its name, with its keep count.
    expect(JSON.parse(fn.Properties.Environment.Variables.PRUNE_VERSIONS)).toEqual({ 'refund-reconciler': DEFAULT_KEEP_VERSIONS });
    expect(joined(fn.Properties.Environment.Variables.STATE_MACHINE_ARN_PREFIX)).toMatch(/:stateMachine:Savepoint-"\]\]\}$/);
    const states = policyOf(id).filter((statement) => joined(statement.Action).includes('states:'));
    expect(states.flatMap((statement) => [statement.Action].flat()).sort()).toEqual(
      ['states:DeleteStateMachineVersion', 'states:DescribeStateMachine', 'states:DescribeStateMachineAlias', 'states:ListExecutions', 'states:ListStateMachineAliases', 'states:ListStateMachineVersions'].sort(),
    );
    for (const statement of states) expect(joined(statement.Resource)).toMatch(/:stateMachine:Savepoint-refund-reconciler"\]\]\}$/);
    const rule = Object.values(template.findResources('AWS::Events::Rule')).find((candidate) => joined(candidate.Properties.Targets).includes(id));
    expect(rule!.Properties.ScheduleExpression).toBe('rate(6 hours)');
    // Nothing else may delete a version.
    const deleters = Object.entries(resources)
      .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Environment?.Variables?.SAVEPOINT_STEP)
      .filter(([fnId]) => joined(policyOf(fnId).map((statement) => statement.Action)).includes('states:DeleteStateMachineVersion'))
      .map(([fnId]) => stepOf(fnId));
    expect(deleters).toEqual([Steps.PruneVersions]);
  });

  it("may delete Lambda versions only of the functions tagged with the stack (one ABAC statement, no list of function ARNs), and every versioned function carries the tag", () => {
    const [id] = functionOf(Steps.PruneVersions);
    const lambda = policyOf(id).filter((statement) => joined(statement.Action).includes('lambda:'));
    expect(lambda).toHaveLength(1);
    expect([lambda[0]!.Action].flat().sort()).toEqual(['lambda:DeleteFunction', 'lambda:ListVersionsByFunction']);
    // One resource, every function of the account and Region: the tag, not the ARN, says which.
    expect([lambda[0]!.Resource].flat()).toHaveLength(1);
    expect(joined(lambda[0]!.Resource)).toMatch(/:lambda:.*:function:\*"\]\]\}$/);
    expect((lambda[0] as { Condition?: unknown }).Condition).toEqual({ StringEquals: { [`aws:ResourceTag/${STACK_TAG}`]: 'Savepoint' } });
    // No other statement of the pruner's names a function.
    expect(joined(policyOf(id).filter((statement) => statement !== lambda[0]))).not.toMatch(/:function:|lambda:/);
    // Every function a state machine version pins carries the tag (BudgetCheck's too, whose older versions only older state machine versions pin); no shared function does.
    const versioned = new Set(Object.values(resources).filter((r) => r.Type === 'AWS::Lambda::Version').map((r) => r.Properties.FunctionName.Ref as string));
    expect(versioned.size).toBeGreaterThanOrEqual(7);
    versioned.add(functionOf(Steps.BudgetCheck)[0]);
    for (const fnId of versioned) expect(resources[fnId]!.Properties.Tags).toContainEqual({ Key: STACK_TAG, Value: 'Savepoint' });
    for (const step of [Steps.PruneVersions, Steps.Sweep, Steps.ExpireApprovals]) expect(joined(resources[functionOf(step)[0]]!.Properties.Tags ?? [])).not.toContain(STACK_TAG);
    // Nothing else may delete a Lambda function or version.
    const deleters = Object.entries(resources)
      .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Environment?.Variables?.SAVEPOINT_STEP)
      .filter(([fnId]) => joined(policyOf(fnId).map((statement) => statement.Action)).includes('lambda:DeleteFunction'))
      .map(([fnId]) => stepOf(fnId));
    expect(deleters).toEqual([Steps.PruneVersions]);
  });

  it('fails at synth time for a keep count outside 1-999, naming the prop', () => {
    for (const keepVersions of [0, 1000, 2.5]) {
      const app = assertionApp();
      expect(() => new DurableAgent(new Stack(app, 'S'), 'A', { agentName: 'a', entry: 'agents/refund-reconciler/agent.ts', keepVersions })).toThrow(/keepVersions must be a whole number of versions from 1 to 999, got/);
    }
  });
});
