import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { assertionApp, exampleTemplate } from './example-template.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { roleStatements } from '../support/role-policies.js';

let template: Template;

beforeAll(() => {
  template = exampleTemplate();
});

/** The logical id of the one Lambda function that runs `step`. */
function functionOf(step: string): string {
  const found = Object.keys(template.findResources('AWS::Lambda::Function', { Properties: { Environment: { Variables: { SAVEPOINT_STEP: step } } } }));
  expect(found, step).toHaveLength(1);
  return found[0]!;
}

/** Every IAM action granted to a function's role, as `action` strings. */
function actionsOf(functionId: string): string[] {
  const role = (template.toJSON().Resources[functionId].Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  return (roleStatements(template.toJSON().Resources, role) as { Action: string | string[]; Resource: unknown }[]).flatMap((statement) => [statement.Action].flat());
}

describe('the recovery rule', () => {
  it('matches failed and timed-out executions of the stack\'s agents\' state machines, by the prefix of their ARN — aborted ones are kills', () => {
    const rules = template.findResources('AWS::Events::Rule', { Properties: { EventPattern: { detail: { status: Match.arrayWith(['FAILED']) } } } });
    expect(Object.keys(rules)).toHaveLength(1);
    const pattern = Object.values(rules)[0]!.Properties.EventPattern;
    expect(pattern).toMatchObject({ source: ['aws.states'], 'detail-type': ['Step Functions Execution Status Change'] });
    expect(pattern.detail.status.sort()).toEqual(['FAILED', 'TIMED_OUT']);
    expect(pattern.detail.stateMachineArn).toHaveLength(1);
    expect(JSON.stringify(pattern.detail.stateMachineArn[0].prefix)).toContain(':stateMachine:Savepoint-');
  });

  it('sends them to the recovery function, retried by EventBridge, with a dead-letter queue for what still fails', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: Match.objectLike({ detail: Match.objectLike({ status: Match.arrayWith(['TIMED_OUT']) }) }),
      Targets: [
        Match.objectLike({
          Arn: { 'Fn::GetAtt': [functionOf(Steps.RecoverRun), 'Arn'] },
          RetryPolicy: Match.objectLike({ MaximumRetryAttempts: 4 }),
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('RecoveryDeadLetters'), 'Arn'] } },
        }),
      ],
    });
  });
});

describe('the recovery function', () => {
  it('knows each agent\'s bound of recoveries without progress, and no agent\'s code', () => {
    const fn = template.toJSON().Resources[functionOf(Steps.RecoverRun)].Properties.Environment.Variables;
    expect(JSON.parse(fn.RECOVERY_BOUNDS)).toEqual({ 'refund-reconciler': 3 });
    expect(fn.STATE_MACHINE_ARN).toBeUndefined();
    expect(fn.TABLE_NAME).toBeDefined();
  });

  it('may start executions of the agents\' state machines (on the version the event names) and nothing else in Step Functions: no DescribeExecution', () => {
    const states = actionsOf(functionOf(Steps.RecoverRun)).filter((action) => action.startsWith('states:'));
    expect(states.sort()).toEqual(['states:StartExecution']);
    template.hasResourceProperties('AWS::IAM::Role', {
      Policies: Match.arrayWith([
        Match.objectLike({
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({ Action: 'states:StartExecution', Resource: { 'Fn::Join': ['', Match.arrayWith([':stateMachine:Savepoint-refund-reconciler'])] } }),
            ]),
          },
        }),
      ]),
    });
  });

  it('fails at synth time for a bound that is not a small positive integer, naming it', () => {
    const stack = new SavepointStack(assertionApp(), 'Bound');
    expect(() => stack.addAgent('Agent', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler, maxRecoveries: 0 })).toThrow('DurableAgent Agent: maxRecoveries must be an integer from 1 to 20, got 0');
  });
});

describe('recovery and the kill by StopExecution, shared by the stack\'s agents (issue 34)', () => {
  let two: Record<string, any>;
  beforeAll(() => {
    const stack = new SavepointStack(assertionApp(), 'Two');
    stack.addAgent('AgentA', { agentName: 'agent-a', entry: EXAMPLE_AGENTS.refundReconciler, maxRecoveries: 2 });
    stack.addAgent('AgentB', { agentName: 'agent-b', entry: EXAMPLE_AGENTS.refundReconciler });
    two = Template.fromStack(stack).toJSON().Resources;
  });
  const withStep = (step: string) => Object.entries(two).filter(([, r]) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.SAVEPOINT_STEP === step);

  it('is one function each and one rule each for the whole stack, not one per agent', () => {
    expect(withStep(Steps.RecoverRun)).toHaveLength(1);
    expect(withStep(Steps.ExecutionStopped)).toHaveLength(1);
    const rules = Object.values(two).filter((r) => r.Type === 'AWS::Events::Rule' && r.Properties.EventPattern?.source?.[0] === 'aws.states');
    expect(rules.map((r) => r.Properties.EventPattern.detail.status.sort().join(',')).sort()).toEqual(['ABORTED', 'FAILED,TIMED_OUT']);
    expect(JSON.parse(withStep(Steps.RecoverRun)[0]![1].Properties.Environment.Variables.RECOVERY_BOUNDS)).toEqual({ 'agent-a': 2, 'agent-b': 3 });
  });

  it('grants the shared functions each agent\'s state machine by ARN, and reads which run an execution drives from the EXEC# partition only', () => {
    const [[, recover]] = withStep(Steps.RecoverRun) as [[string, any]];
    const statements = roleStatements(two, recover.Properties.Role['Fn::GetAtt'][0]) as { Action: string | string[]; Resource: unknown; Condition?: unknown }[];
    const start = statements.find((statement) => statement.Action === 'states:StartExecution')!;
    expect(JSON.stringify(start.Resource)).toContain(':stateMachine:Two-agent-a');
    expect(JSON.stringify(start.Resource)).toContain(':stateMachine:Two-agent-b');
    expect(statements.find((statement) => JSON.stringify(statement.Condition ?? {}).includes('EXEC#'))).toMatchObject({ Action: 'dynamodb:GetItem' });
  });

  it('leaves each agent\'s own StartRun to note only its executions\' runs, and no agent a rule of its own on its executions\' status', () => {
    for (const agent of ['AgentA', 'AgentB']) {
      const own = Object.keys(two).filter((id) => id.startsWith(agent));
      expect(own.filter((id) => two[id].Type === 'AWS::Events::Rule')).toEqual([]);
      expect(own.filter((id) => /Recovery|ExecutionStopped/.test(id))).toEqual([]);
    }
  });
});

describe('what a resume relies on', () => {
  it('gives StartRun the definition it runs in its payload, not a DescribeStateMachineForExecution grant (1 call/s per account)', () => {
    expect(actionsOf(functionOf(Steps.StartRun))).toEqual(expect.arrayContaining(['states:DescribeExecution']));
    expect(actionsOf(functionOf(Steps.StartRun))).not.toContain('states:DescribeStateMachineForExecution');
  });

  it('leases a claimed tool call for longer than the CallTool function may run, so a live call is never taken over', () => {
    const callTool = template.toJSON().Resources[functionOf(Steps.CallTool)].Properties;
    expect(Number(callTool.Environment.Variables.TOOL_LEASE_MS)).toBeGreaterThan(callTool.Timeout * 1000);
  });
});
