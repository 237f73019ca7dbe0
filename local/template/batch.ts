/**
 * The batch state machine's definition as CDK synthesizes it (infra/batch-state-machine.ts), for
 * the twin to run: the same construct code, rendered in a stack of its own with the item function
 * imported by ARN (nothing to bundle), so the ASL is the one a deployment's BatchStateMachine carries.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { StateGraph } from 'aws-cdk-lib/aws-stepfunctions';
import { batchDefinition } from '../../infra/batch-state-machine.js';
import { resolveTemplateValue, type AslDefinition } from './asl.js';

/** The ARN the twin's batch Tasks name as their function (bound in process: local/runtime/batches.ts). */
export const LOCAL_BATCH_ITEM_FUNCTION = 'arn:aws:lambda:us-east-1:000000000000:function:savepoint-batch-item';

let rendered: AslDefinition | undefined;

/** The batch definition (rendered once per process: it does not depend on the agent). */
export function batchAsl(): AslDefinition {
  if (rendered) return structuredClone(rendered);
  const stack = new Stack(new App(), 'Batch', { env: { account: '000000000000', region: 'us-east-1' } });
  const item = LambdaFunction.fromFunctionArn(stack, 'Item', LOCAL_BATCH_ITEM_FUNCTION);
  const graph = new StateGraph(batchDefinition(stack, item).startState, 'batch');
  // Its intrinsics (the partition in each Task's resource) resolved as the twin resolves a template's.
  rendered = resolveTemplateValue(stack.resolve(graph.toGraphJson()), { Resources: {} }, { where: 'the batch definition' }) as AslDefinition;
  return structuredClone(rendered);
}
