import { describe, expect, it } from 'vitest';
import { extractStateMachine, type CfnResource, type CfnTemplateJson } from '../../local/template/asl.js';

const lambdaFn = (step?: string): CfnResource => ({
  Type: 'AWS::Lambda::Function',
  Properties: step === undefined ? {} : { Environment: { Variables: { SAVEPOINT_STEP: step } } },
});

const task = (functionName: unknown, extra: object = {}) => ({
  Type: 'Task',
  Resource: 'arn:aws:states:::lambda:invoke',
  Parameters: { FunctionName: functionName, 'Payload.$': '$' },
  End: true,
  ...extra,
});

/** A template whose DefinitionString is CDK-style Fn::Join over the given definition's JSON pieces. */
function template(definitionString: unknown, resources: Record<string, CfnResource> = {}): CfnTemplateJson {
  return {
    Resources: {
      Fn: lambdaFn('plan'),
      Table: { Type: 'AWS::DynamoDB::Table' },
      Machine: { Type: 'AWS::StepFunctions::StateMachine', Properties: { DefinitionString: definitionString } },
      ...resources,
    },
  };
}

describe('extractStateMachine', () => {
  it('resolves Fn::Join / Fn::GetAtt / Ref / pseudo parameters and maps nested Tasks', () => {
    const definitionString = {
      'Fn::Join': [
        '',
        [
          '{"StartAt":"Fan","States":{"Fan":{"Type":"Map","End":true,"ItemProcessor":{"StartAt":"Each","States":{"Each":',
          '{"Type":"Task","Resource":"arn:',
          { Ref: 'AWS::Partition' },
          ':states:::lambda:invoke","Parameters":{"FunctionName":"',
          { 'Fn::GetAtt': ['Fn', 'Arn'] },
          ':$LATEST","Payload":{"table":"',
          { Ref: 'Table' },
          '","where":"',
          { 'Fn::Sub': '${AWS::Region}/${AWS::AccountId}' },
          '"}},"TimeoutSeconds":5,"HeartbeatSeconds":2,"End":true}}}}}}',
        ],
      ],
    };
    const { definition, tasks, stateMachineArn, name } = extractStateMachine(template(definitionString));
    expect(name).toBe('Machine');
    expect(stateMachineArn).toBe('arn:aws:states:us-east-1:000000000000:stateMachine:Machine');
    const each = definition.States.Fan!.ItemProcessor!.States.Each!;
    expect(each.Resource).toBe('arn:aws:states:::lambda:invoke');
    expect(each.Parameters).toEqual({
      FunctionName: 'arn:aws:lambda:us-east-1:000000000000:function:Fn:$LATEST',
      Payload: { table: 'Table', where: 'us-east-1/000000000000' },
    });
    expect(tasks).toEqual({ Each: { step: 'plan', functionLogicalId: 'Fn', waitForTaskToken: false, timeoutSeconds: 5, heartbeatSeconds: 2 } });
  });

  it('accepts a plain string definition, DefinitionSubstitutions and function names', () => {
    const def = JSON.stringify({
      StartAt: 'A',
      States: {
        A: task('${fn}', { Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken', End: undefined, Next: 'B' }),
        B: task('named-fn'),
      },
    });
    const t = template(def, { Named: { Type: 'AWS::Lambda::Function', Properties: { FunctionName: 'named-fn', Environment: { Variables: { SAVEPOINT_STEP: 'act' } } } } });
    t.Resources!.Machine!.Properties!.DefinitionSubstitutions = { fn: { 'Fn::GetAtt': ['Fn', 'Arn'] } };
    const { tasks } = extractStateMachine(t);
    expect(tasks.A).toMatchObject({ step: 'plan', functionLogicalId: 'Fn', waitForTaskToken: true });
    expect(tasks.B).toMatchObject({ step: 'act', functionLogicalId: 'Named' });
  });

  it('explains what is wrong with a template it cannot run', () => {
    const ok = JSON.stringify({ StartAt: 'A', States: { A: task('Fn') } });
    expect(() => extractStateMachine({ Resources: { Fn: lambdaFn('a') } })).toThrow(/no AWS::StepFunctions::StateMachine/);

    const two = template(ok, { Other: { Type: 'AWS::StepFunctions::StateMachine', Properties: { DefinitionString: ok } } });
    expect(() => extractStateMachine(two)).toThrow(/2 state machines \(Machine, Other\)/);
    expect(extractStateMachine(two, { stateMachineLogicalId: 'Other' }).logicalId).toBe('Other');

    expect(() => extractStateMachine(template({ 'Fn::ImportValue': 'shared-arn' }))).toThrow(/Unsupported intrinsic Fn::ImportValue/);
    expect(() => extractStateMachine(template({ 'Fn::Join': ['', [{ Ref: 'Nope' }]] }))).toThrow(/unknown resource or parameter Nope/);

    const dynamo = JSON.stringify({ StartAt: 'Put', States: { Put: { ...task('Fn'), Resource: 'arn:aws:states:::dynamodb:putItem' } } });
    expect(() => extractStateMachine(template(dynamo))).toThrow(/Task Put uses resource arn:aws:states:::dynamodb:putItem/);

    const noStep = template(ok, { Fn: lambdaFn() });
    expect(() => extractStateMachine(noStep)).toThrow(/Lambda function Fn \(Task A\) has no Environment.Variables.SAVEPOINT_STEP/);

    const unknownFn = JSON.stringify({ StartAt: 'A', States: { A: task('arn:aws:lambda:us-east-1:000000000000:function:Ghost') } });
    expect(() => extractStateMachine(template(unknownFn))).toThrow(/Task A invokes .*Ghost, which is not a Lambda function/);
  });
});
