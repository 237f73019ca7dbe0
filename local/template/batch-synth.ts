/**
 * The batch state machine as CDK synthesizes it (infra/batch-state-machine.ts), for the twin to
 * run: the construct itself, synthesized in a stack of its own (its Tasks invoke the function each
 * execution names: nothing to bundle), granted the twin's manifest bucket: the template a
 * deployment's BatchStateMachine carries, with the policies the twin's IAM reads.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { BatchStateMachine } from '../../infra/batch-state-machine.js';
import type { CfnTemplateJson } from './asl.js';
import { LOCAL_MANIFEST_BUCKET } from '../../lambdas/runs/batch.js';

/** The batch state machine's template, synthesized (needs the CDK: a checkout, or bin/build.js shipping it). */
export function synthesizeBatchTemplate(): CfnTemplateJson {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Batch', { env: { account: '000000000000', region: 'us-east-1' } });
  new BatchStateMachine(stack, 'Batch').allowManifests(Bucket.fromBucketName(stack, 'LocalManifests', LOCAL_MANIFEST_BUCKET));
  return app.synth().getStackByName(stack.stackName).template as CfnTemplateJson;
}
