import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { LedgerTable } from '../../infra/ledger-table.js';
import { RunRecovery } from '../../infra/recovery.js';
import { exampleTemplate } from './example-template.js';
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
  it('matches failed and timed-out executions of the agent state machine only — aborted ones are kills', () => {
    const rules = template.findResources('AWS::Events::Rule', { Properties: { EventPattern: { detail: { status: Match.arrayWith(['FAILED']) } } } });
    expect(Object.keys(rules)).toHaveLength(1);
    const pattern = Object.values(rules)[0]!.Properties.EventPattern;
    expect(pattern).toMatchObject({ source: ['aws.states'], 'detail-type': ['Step Functions Execution Status Change'] });
    expect(pattern.detail.status.sort()).toEqual(['FAILED', 'TIMED_OUT']);
    expect(JSON.stringify(pattern.detail.stateMachineArn)).toContain(':stateMachine:Savepoint-refund-reconciler');
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
  it('knows the state machine it restarts and the bound of recoveries without progress', () => {
    const fn = template.toJSON().Resources[functionOf(Steps.RecoverRun)].Properties.Environment.Variables;
    expect(fn.MAX_RECOVERIES).toBe('3');
    expect(JSON.stringify(fn.STATE_MACHINE_ARN)).toContain(':stateMachine:Savepoint-refund-reconciler');
    expect(fn.TABLE_NAME).toBeDefined();
  });

  it('may start executions of the agent state machine (on the version the ended one ran) and read how they ended, nothing else in Step Functions', () => {
    const states = actionsOf(functionOf(Steps.RecoverRun)).filter((action) => action.startsWith('states:'));
    expect(states.sort()).toEqual(['states:DescribeExecution', 'states:StartExecution']);
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

  it('fails at synth time for a bound that is not a small positive integer', () => {
    const stack = new Stack(new App(), 'Bound');
    const ledger = new LedgerTable(stack, 'Ledger');
    expect(() => new RunRecovery(stack, 'Recovery', { ledger, stateMachine: { stateMachine: 'arn:aws:states:::stateMachine:x', executions: 'arn:aws:states:::execution:x:*', alias: 'arn:aws:states:::stateMachine:x:live' }, maxRecoveries: 0, agentEntry: 'agent.ts' })).toThrow(
      /maxRecoveries must be an integer from 1 to 20, got 0/,
    );
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
