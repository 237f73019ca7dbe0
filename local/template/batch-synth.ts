/**
 * The batch state machine as CDK synthesizes it (infra/batch-state-machine.ts), for the twin to
 * run: the construct itself, synthesized in a stack of its own (its Tasks invoke the function each
 * execution names: nothing to bundle), granted the twin's manifest bucket and the item function of
 * the agent its `AgentName` parameter names (given at deploy: local/template/batch-deploy.ts): the
 * template a deployment's BatchStateMachine carries, with the policies the twin's IAM reads.
 */
import { App, ArnFormat, CfnParameter, Stack } from 'aws-cdk-lib';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { BatchStateMachine } from '../../infra/batch-state-machine.js';
import type { CfnTemplateJson } from './asl.js';
import { LOCAL_MANIFEST_BUCKET } from '../../lambdas/runs/batch.js';
import { BATCH_AGENT_PARAMETER, batchItemFunctionName } from './batch-deploy.js';
import { synthesizedInProcess } from './synthesize.js';

/** The batch state machine's template, synthesized (needs the CDK: a checkout, or bin/build.js shipping it). */
export function synthesizeBatchTemplate(): CfnTemplateJson {
  // Without the CDK's built-in CloudFormation validation, as the agents' templates: its engine was
  // 3 of the 3.3 s of CPU this took, in every process of a checkout that runs a batch.
  return synthesizedInProcess(App, (app) => {
    const stack = new Stack(app, 'Batch', { env: { account: '000000000000', region: 'us-east-1' } });
    const batches = new BatchStateMachine(stack, 'Batch');
    batches.allowManifests(Bucket.fromBucketName(stack, 'LocalManifests', LOCAL_MANIFEST_BUCKET));
    const agent = new CfnParameter(stack, BATCH_AGENT_PARAMETER, { type: 'String', default: 'agent', description: 'The agent whose batch item function the batches invoke' });
    const itemFunction = stack.formatArn({ service: 'lambda', resource: 'function', resourceName: batchItemFunctionName(agent.valueAsString), arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    batches.allowItemFunction(LambdaFunction.fromFunctionAttributes(stack, 'LocalItemFunction', { functionArn: itemFunction, sameEnvironment: true }));
    return app.synth().getStackByName(stack.stackName).template as CfnTemplateJson;
  });
}
