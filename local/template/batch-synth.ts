/**
 * The batch state machine's definition as CDK synthesizes it (infra/batch-state-machine.ts), for
 * the twin to run: the construct itself, synthesized in a stack of its own with an inline item
 * function (nothing to bundle), and its definition extracted as the agent's is
 * (local/template/asl.ts): the ASL a deployment's BatchStateMachine carries.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { BatchStateMachine } from '../../infra/batch-state-machine.js';
import { extractStateMachine, type AslDefinition, type CfnTemplateJson } from './asl.js';

/** The step name the twin's batch Tasks carry (bound in process by state name: local/runtime/batches.ts). */
const LOCAL_BATCH_ITEM_STEP = 'batch-item';

/** The batch definition, synthesized (needs the CDK: a checkout, or bin/build.js shipping it). */
export function synthesizeBatchAsl(): AslDefinition {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Batch', { env: { account: '000000000000', region: 'us-east-1' } });
  const itemFunction = new LambdaFunction(stack, 'BatchItem', {
    runtime: Runtime.NODEJS_22_X,
    handler: 'index.handler',
    code: Code.fromInline('exports.handler = async () => { throw new Error("served in process by the twin"); };'),
    environment: { SAVEPOINT_STEP: LOCAL_BATCH_ITEM_STEP },
  });
  new BatchStateMachine(stack, 'Batch', { itemFunction });
  const template = app.synth().getStackByName(stack.stackName).template as CfnTemplateJson;
  return extractStateMachine(template).definition;
}
