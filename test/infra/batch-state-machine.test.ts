import { createRequire } from 'node:module';
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { describe, expect, it } from 'vitest';
import { BatchStateMachine, batchStates, BatchStates } from '../../infra/batch-state-machine.js';
import { extractDefinition, type AslState, type CfnTemplateJson } from '../../local/template/asl.js';
import { batchAsl } from '../../local/template/batch.js';
import { assertSupported } from '../../local/engine/definition.js';
import { ErrorNames } from '../../lambdas/shared/errors.js';
import { assertionApp } from './example-template.js';

// asl-validator ships no type declarations.
const aslValidator = createRequire(import.meta.url)('asl-validator') as (definition: unknown) => { isValid: boolean; errorsText(sep?: string): string };

/** The batch state machine as a deployment synthesizes it, allowed one agent's item function and one manifest bucket. */
function synthesized() {
  const stack = new Stack(assertionApp(), 'Batches', { env: { account: '000000000000', region: 'us-east-1' } });
  const itemFunction = new LambdaFunction(stack, 'BatchItem', { runtime: Runtime.NODEJS_22_X, handler: 'index.handler', code: Code.fromInline('exports.handler = async () => ({})'), environment: { SAVEPOINT_STEP: 'batch-item' } });
  const batches = new BatchStateMachine(stack, 'Batch');
  batches.allowItemFunction(itemFunction);
  batches.allowManifests(new Bucket(stack, 'Manifests'));
  return Template.fromStack(stack);
}

describe('the batch state machine (a Distributed Map)', () => {
  const template = synthesized();
  const definition = extractDefinition(template.toJSON() as CfnTemplateJson);
  const map = (source: 'items' | 'json' | 'csv') => definition.States[batchStates(source).Items]!;

  it('is valid ASL, and the twin runs it as it is', () => {
    const { isValid, errorsText } = aslValidator(definition);
    expect(isValid, errorsText('\n')).toBe(true);
    expect(() => assertSupported(definition)).not.toThrow();
  });

  it('takes its items from the request’s list, or from the manifest the request names, in its format', () => {
    expect(definition.StartAt).toBe(BatchStates.ItemSource);
    expect(definition.States[BatchStates.ItemSource]).toMatchObject({ Type: 'Choice', Choices: [{ Variable: '$.manifest', IsPresent: true, Next: BatchStates.ManifestFormat }], Default: BatchStates.Items });
    expect(definition.States[BatchStates.ManifestFormat]).toMatchObject({ Type: 'Choice', Choices: [{ Variable: '$.manifest.format', StringEquals: 'csv', Next: batchStates('csv').Items }], Default: batchStates('json').Items });
    expect(map('items')).toMatchObject({ ItemsPath: '$.runs', ItemSelector: { 'runId.$': '$$.Map.Item.Value.runId', 'input.$': '$$.Map.Item.Value.input', 'caller.$': '$.caller', 'itemFunction.$': '$.itemFunction' } });
    expect(map('items')).not.toHaveProperty('ItemReader');
    // A manifest is read by the Map itself (S3 GetObject), each item with its index: the item step names its run.
    const reader = (inputType: string, extra: object = {}) => ({ Resource: 'arn:aws:states:::s3:getObject', ReaderConfig: { InputType: inputType, ...extra }, Parameters: { 'Bucket.$': '$.manifest.bucket', 'Key.$': '$.manifest.key' } });
    expect(map('json')).toMatchObject({ ItemReader: reader('JSON'), ItemSelector: { 'item.$': '$$.Map.Item.Value', 'index.$': '$$.Map.Item.Index', 'manifest.$': '$.manifest' } });
    expect(map('csv')).toMatchObject({ ItemReader: reader('CSV', { CSVHeaderLocation: 'FIRST_ROW' }) });
  });

  it('runs one STANDARD child execution per item, at most the batch’s concurrency at once, and keeps no result', () => {
    for (const source of ['items', 'json', 'csv'] as const) {
      expect(map(source)).toMatchObject({ Type: 'Map', MaxConcurrencyPath: '$.concurrency', ResultPath: null, ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' }, StartAt: batchStates(source).StartItemRun } });
      // Nothing the twin would not run, nor a tolerance that would hide a failed item's Task.
      for (const field of ['ItemBatcher', 'ResultWriter', 'ToleratedFailurePercentage', 'ToleratedFailureCount']) expect(map(source)).not.toHaveProperty(field);
    }
  });

  it('starts, then reads, each run until it has ended, through the function the execution names', () => {
    for (const source of ['items', 'json', 'csv'] as const) {
      const names = batchStates(source);
      const states = map(source).ItemProcessor!.States;
      expect(states[names.StartItemRun]).toMatchObject({ Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Next: names.ItemEnded, Parameters: { 'FunctionName.$': '$.itemFunction', Payload: { action: 'start' } } });
      expect(states[names.ItemEnded]).toMatchObject({ Type: 'Choice', Choices: [{ Variable: '$.run.ended', BooleanEquals: true, Next: names.ItemDone }], Default: names.WaitForItemRun });
      expect(states[names.WaitForItemRun]).toMatchObject({ Type: 'Wait', SecondsPath: '$.pollSeconds', Next: names.CheckItemRun });
      expect(states[names.CheckItemRun]).toMatchObject({ Type: 'Task', Next: names.ItemEnded, Parameters: { 'FunctionName.$': '$.itemFunction', Payload: { action: 'check', 'runId.$': '$.run.runId' } } });
      // Lambda's own faults and a lost invoke are retried; every Task has a timeout (none waits forever).
      for (const name of [names.StartItemRun, names.CheckItemRun]) {
        const task = states[name] as AslState;
        expect(task.TimeoutSeconds).toBeGreaterThan(0);
        expect((task['Retry'] as { ErrorEquals: string[] }[]).flatMap((retry) => retry.ErrorEquals)).toEqual(expect.arrayContaining(['Lambda.ServiceException', 'Lambda.TooManyRequestsException', 'States.Timeout', ErrorNames.Transient]));
      }
    }
  });

  it('may run its own child executions, as AWS documents a Distributed Map’s role, invoke only the item functions allowed, and read only the manifest buckets allowed', () => {
    const statements = Object.values(template.findResources('AWS::IAM::Policy')).flatMap((policy) => (policy as { Properties: { PolicyDocument: { Statement: { Action: string | string[]; Resource: unknown }[] } } }).Properties.PolicyDocument.Statement);
    const actions = (statement: { Action: string | string[] }) => [statement.Action].flat();
    const of = (action: string) => statements.filter((statement) => actions(statement).includes(action)).map((statement) => JSON.stringify(statement.Resource));
    // StartExecution on itself; DescribeExecution and StopExecution on its own executions (the children).
    expect(of('states:StartExecution')).toEqual([expect.stringContaining('"Ref":"BatchStateMachine')]);
    // (CDK's `execution:<name>:*`, and the child executions' `execution:<name>/*` AWS's example names.)
    for (const action of ['states:DescribeExecution', 'states:StopExecution']) expect(of(action)).toContainEqual(expect.stringMatching(/:execution:",\{"Fn::GetAtt":\["BatchStateMachine[0-9A-F]+","Name"\]\},"\/\*"\]\]\}$/));
    // The item function and its versions, nothing else; the bucket's objects, nothing else.
    expect(of('lambda:InvokeFunction')).toEqual([expect.stringMatching(/^\[\{"Fn::GetAtt":\["BatchItem[0-9A-F]+","Arn"\]\},\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["BatchItem[0-9A-F]+","Arn"\]\},":\*"\]\]\}\]$/)]);
    expect(of('s3:GetObject')).toEqual([expect.stringMatching(/^\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["Manifests[0-9A-F]+","Arn"\]\},"\/\*"\]\]\}$/)]);
    expect(statements.flatMap(actions).filter((action) => action.includes('*'))).toEqual([]);
  });

  it('is the definition the twin runs', async () => {
    // JSONPath is every state's query language whether or not a render spells it out.
    const strip = (value: unknown) => JSON.parse(JSON.stringify(value).replace(/,?"QueryLanguage":"JSONPath"/g, '')) as unknown;
    expect(strip(await batchAsl())).toEqual(strip(definition));
  });
});
