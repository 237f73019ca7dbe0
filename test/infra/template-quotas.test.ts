import { CfnOutput, CfnParameter } from 'aws-cdk-lib';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { templateQuotaProblems } from '../../lambdas/shared/cloudformation-quotas.js';
import { STACK_OUTPUT_QUOTA, STACK_PARAMETER_QUOTA, STACK_RESOURCE_QUOTA } from '../../lambdas/shared/limits.js';
import { assertDeployable } from '../../local/aws/cloudformation-template.js';
import { assertionApp } from './example-template.js';

/**
 * CloudFormation's quotas on a template's outputs and parameters (200 each) and resources (500),
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html: a
 * stack of many agents repeats every agent's outputs on its parent, so it reached 208 outputs at 26
 * agents and synth said nothing. Now synth says it, naming the stack, and the twin refuses it.
 */
/** A stack of one agent, with outputs and parameters added until it declares `outputs` and `parameters`. */
function stackWith(outputs: number, parameters: number) {
  const stack = new SavepointStack(assertionApp(), 'Quotas');
  stack.addAgent('Agent', { agentName: 'quotas', entry: EXAMPLE_AGENTS.refundReconciler });
  const had = (type: typeof CfnOutput | typeof CfnParameter) => stack.node.findAll().filter((node) => node instanceof type).length;
  for (let index = had(CfnOutput); index < outputs; index++) new CfnOutput(stack, `Out${index}`, { value: 'x' });
  for (let index = had(CfnParameter); index < parameters; index++) new CfnParameter(stack, `Param${index}`, { type: 'String' });
  return stack;
}

describe("CloudFormation's template quotas", () => {
  it('words each refusal as CloudFormation does', () => {
    expect(templateQuotaProblems({ resources: STACK_RESOURCE_QUOTA, outputs: STACK_OUTPUT_QUOTA, parameters: STACK_PARAMETER_QUOTA })).toEqual([]);
    expect(templateQuotaProblems({ resources: 501, outputs: 201, parameters: 201 })).toEqual([
      'Template format error: Number of resources, 501, is greater than maximum allowed, 500',
      'Template format error: Number of outputs, 201, is greater than maximum allowed, 200',
      'Template format error: Number of parameters, 201, is greater than maximum allowed, 200',
    ]);
  });

  it('fails the synth of a stack with 201 outputs or 201 parameters, naming the stack; passes at 200', () => {
    expect(() => Template.fromStack(stackWith(STACK_OUTPUT_QUOTA, STACK_PARAMETER_QUOTA))).not.toThrow();
    expect(() => Template.fromStack(stackWith(STACK_OUTPUT_QUOTA + 1, 1))).toThrow(/Quotas: Template format error: Number of outputs, 201, is greater than maximum allowed, 200/);
    expect(() => Template.fromStack(stackWith(1, STACK_PARAMETER_QUOTA + 1))).toThrow(/Quotas: Template format error: Number of parameters, 201, is greater than maximum allowed, 200/);
  });

  it('is refused by the twin as CloudFormation refuses it', () => {
    const outputs = Object.fromEntries(Array.from({ length: STACK_OUTPUT_QUOTA + 1 }, (_, index) => [`Out${index}`, { Value: 'x' }]));
    expect(() => assertDeployable({ Resources: {}, Outputs: outputs })).toThrow(expect.objectContaining({ name: 'ValidationError', message: 'Template format error: Number of outputs, 201, is greater than maximum allowed, 200' }));
    const parameters = Object.fromEntries(Array.from({ length: STACK_PARAMETER_QUOTA + 1 }, (_, index) => [`P${index}`, { Type: 'String' }]));
    expect(() => assertDeployable({ Resources: {}, Parameters: parameters })).toThrow(/Number of parameters, 201/);
    expect(() => assertDeployable({ Resources: {}, Outputs: { One: { Value: 'x' } } })).not.toThrow();
  });

  it("refuses, as Step Functions and EventBridge refuse them at deploy, a state machine's name over 80 characters and a schedule EventBridge does not take; a synthesized stack's pass", () => {
    const stack = new SavepointStack(assertionApp(), 'Names');
    stack.addAgent('Agent', { agentName: 'names', entry: EXAMPLE_AGENTS.refundReconciler, schedule: Schedule.cron({ hour: '2', minute: '0' }) });
    const template = Template.fromStack(stack).toJSON() as { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
    expect(() => assertDeployable(template)).not.toThrow();
    // Edited past what synth lets through (it refuses both, naming the prop: test/infra/stack.test.ts).
    const edited = (type: string, property: string, value: string) => {
      const copy = structuredClone(template);
      const [logicalId] = Object.entries(copy.Resources).find(([, resource]) => resource.Type === type && property in resource.Properties)!;
      copy.Resources[logicalId]!.Properties[property] = value;
      return copy;
    };
    expect(() => assertDeployable(edited('AWS::StepFunctions::StateMachine', 'StateMachineName', 'n'.repeat(81)))).toThrow(
      expect.objectContaining({ name: 'ValidationError', message: expect.stringMatching(/\(AWS::StepFunctions::StateMachine\): Value 'n{81}' at 'name' failed to satisfy constraint: Member must have length less than or equal to 80$/) }),
    );
    expect(() => assertDeployable(edited('AWS::StepFunctions::StateMachine', 'StateMachineName', 'n'.repeat(80)))).not.toThrow();
    for (const expression of ['rate(5 minute)', 'rate(1 hours)', 'cron(0 2 * * *)', 'cron(0 2 * * * *)', 'at noon']) {
      expect(() => assertDeployable(edited('AWS::Events::Rule', 'ScheduleExpression', expression)), expression).toThrow(expect.objectContaining({ name: 'ValidationError', message: expect.stringContaining('(AWS::Events::Rule): Parameter ScheduleExpression is not valid') }));
    }
    for (const expression of ['rate(5 minutes)', 'rate(1 hour)', 'cron(0 2 * * ? *)']) expect(() => assertDeployable(edited('AWS::Events::Rule', 'ScheduleExpression', expression)), expression).not.toThrow();
  });
});
