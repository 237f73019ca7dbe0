import { createRequire } from 'node:module';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { describe, expect, it } from 'vitest';
import { BatchStateMachine, BatchStates } from '../../infra/batch-state-machine.js';
import { extractStateMachine, type CfnTemplateJson } from '../../local/template/asl.js';
import { batchAsl } from '../../local/template/batch.js';
import { assertSupported } from '../../local/engine/definition.js';
import { ErrorNames } from '../../lambdas/shared/errors.js';

// asl-validator ships no type declarations.
const aslValidator = createRequire(import.meta.url)('asl-validator') as (definition: unknown) => { isValid: boolean; errorsText(sep?: string): string };

/** The batch state machine as a deployment synthesizes it, with a function of its own as the item function. */
function synthesized() {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Batches', { env: { account: '000000000000', region: 'us-east-1' } });
  const itemFunction = new LambdaFunction(stack, 'BatchItem', { runtime: Runtime.NODEJS_22_X, handler: 'index.handler', code: Code.fromInline('exports.handler = async () => ({})'), environment: { SAVEPOINT_STEP: 'batch-item' } });
  new BatchStateMachine(stack, 'Batch', { itemFunction });
  return Template.fromStack(stack);
}

describe('the batch state machine (a Distributed Map)', () => {
  const template = synthesized();
  const { definition } = extractStateMachine(template.toJSON() as CfnTemplateJson);
  const items = definition.States[BatchStates.Items]!;

  it('is valid ASL, and the twin runs it as it is', () => {
    const { isValid, errorsText } = aslValidator(definition);
    expect(isValid, errorsText('\n')).toBe(true);
    expect(() => assertSupported(definition)).not.toThrow();
  });

  it('runs one STANDARD child execution per run, at most the batch’s concurrency at once, and keeps no result', () => {
    expect(items).toMatchObject({
      Type: 'Map',
      ItemsPath: '$.runs',
      MaxConcurrencyPath: '$.concurrency',
      ResultPath: null,
      ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' }, StartAt: BatchStates.StartItemRun },
      ItemSelector: { 'runId.$': '$$.Map.Item.Value.runId', 'input.$': '$$.Map.Item.Value.input', 'caller.$': '$.caller' },
    });
    // Nothing the twin would not run, nor a tolerance that would hide a failed item's Task.
    for (const field of ['ItemReader', 'ItemBatcher', 'ResultWriter', 'ToleratedFailurePercentage', 'ToleratedFailureCount']) expect(items).not.toHaveProperty(field);
  });

  it('starts, then reads, each run until it has ended, waiting the batch’s pollSeconds between reads', () => {
    const states = items.ItemProcessor!.States;
    expect(states[BatchStates.StartItemRun]).toMatchObject({ Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Next: BatchStates.ItemEnded, Parameters: { Payload: { action: 'start' } } });
    expect(states[BatchStates.ItemEnded]).toMatchObject({ Type: 'Choice', Choices: [{ Variable: '$.run.ended', BooleanEquals: true, Next: BatchStates.ItemDone }], Default: BatchStates.WaitForItemRun });
    expect(states[BatchStates.WaitForItemRun]).toMatchObject({ Type: 'Wait', SecondsPath: '$.pollSeconds', Next: BatchStates.CheckItemRun });
    expect(states[BatchStates.CheckItemRun]).toMatchObject({ Type: 'Task', Next: BatchStates.ItemEnded, Parameters: { Payload: { action: 'check' } } });
    // Lambda's own faults and a lost invoke are retried; every Task has a timeout (none waits forever).
    for (const name of [BatchStates.StartItemRun, BatchStates.CheckItemRun]) {
      const task = states[name]!;
      expect(task.TimeoutSeconds).toBeGreaterThan(0);
      expect((task['Retry'] as { ErrorEquals: string[] }[]).flatMap((retry) => retry.ErrorEquals)).toEqual(expect.arrayContaining(['Lambda.ServiceException', 'Lambda.TooManyRequestsException', 'States.Timeout', ErrorNames.Transient]));
    }
  });

  it('may start its own child executions (what a Distributed Map needs) and invoke the item function', () => {
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'states:StartExecution', Effect: 'Allow' })]) },
    });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'lambda:InvokeFunction', Effect: 'Allow' })]) },
    });
  });

  it('is the definition the twin runs: the same states, the item function’s name aside', async () => {
    // JSONPath is every state's query language whether or not a render spells it out.
    const strip = (value: unknown) => JSON.parse(JSON.stringify(value).replace(/"FunctionName":"[^"]+"/g, '"FunctionName":"…"').replace(/,?"QueryLanguage":"JSONPath"/g, '')) as unknown;
    expect(strip(await batchAsl())).toEqual(strip(definition));
  });
});
