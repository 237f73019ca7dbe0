import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localBatches } from '../../local/runtime/batches.js';
import { startS3, type LocalS3 } from '../../local/services/s3.js';
import { batchTemplate } from '../../local/template/batch.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { deployBatchTemplate } from '../../local/template/batch-deploy.js';
import { twinIam } from '../../local/aws/iam/index.js';
import type { BatchExecutionInput } from '../../lambdas/runs/batch.js';

/**
 * The batch state machine's calls, decided by the twin's IAM as its role, from the batch template
 * CDK synthesizes (infra/batch-state-machine.ts, the construct a stack deploys): each child
 * execution's `states:StartExecution` on the state machine itself, as AWS's Distributed Map
 * policy grants it (https://docs.aws.amazon.com/step-functions/latest/dg/iam-policies-eg-dist-map.html),
 * and each item Task's `lambda:InvokeFunction` on the agent's item function. With either grant
 * taken out of the template, the batch fails as on AWS and its item function is never invoked:
 * no run starts, nothing is spent.
 */
/** Who started the batches, as the runs API would have authenticated them. */
const TESTER: BatchExecutionInput['caller'] = { id: 'local:tester', via: 'iam', principal: 'local:tester' };
let s3: LocalS3;
let synthesized: CfnTemplateJson;
beforeAll(async () => {
  s3 = await startS3();
  // CDK synthesizes it once per process (tens of seconds on a loaded machine).
  synthesized = await batchTemplate();
}, 180_000);
afterAll(() => s3?.close());

/** The template with `action` taken out of every policy of its role (the statement, or the action from a statement of several). */
function without(template: CfnTemplateJson, action: string): CfnTemplateJson {
  const copy = structuredClone(template);
  let removed = 0;
  for (const resource of Object.values(copy.Resources ?? {})) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const document = resource.Properties!['PolicyDocument'] as { Statement: { Action: string | string[] }[] };
    document.Statement = document.Statement.flatMap((statement) => {
      const actions = [statement.Action].flat();
      if (!actions.includes(action)) return [statement];
      removed += 1;
      const rest = actions.filter((named) => named !== action);
      return rest.length === 0 ? [] : [{ ...statement, Action: rest }];
    });
  }
  expect(removed, `the template grants ${action}`).toBeGreaterThan(0);
  return copy;
}

/** Runs a batch of `items` on `template` to its end, with an item function that records each call and ends each run at once. */
async function runBatch(template: CfnTemplateJson, items: number) {
  const calls: unknown[] = [];
  const batches = localBatches({
    agent: 'payer',
    template: async () => template,
    s3,
    item: async (event) => {
      calls.push(event);
      return { runId: (event as { runId: string }).runId, status: 'succeeded', ended: true };
    },
    pollWaitMs: 1,
    retryDelayMs: 1,
  });
  try {
    const batch: BatchExecutionInput = {
      batchId: 'b1',
      agent: 'payer',
      runs: Array.from({ length: items }, (_, index) => ({ runId: `b1-${index}`, input: { index } })),
      itemFunction: batches.itemFunction,
      concurrency: 2,
      pollSeconds: 1,
      caller: TESTER,
      createdAt: new Date(0).toISOString(),
    };
    await batches.store.start(batch);
    const engine = await batches.engine();
    const [execution] = engine.listExecutions().executions;
    const ended = await engine.waitForExecution(execution!.executionArn);
    return { ended, calls, decisions: engine.iamDecisions()!, status: (await batches.store.get('b1'))?.status };
  } finally {
    await batches.close();
  }
}

describe('the batch state machine under the twin’s IAM', () => {
  it('runs a batch as the role the template deploys: a StartExecution and an item invoke allowed per item, none denied', async () => {
    const { ended, calls, decisions, status } = await runBatch(synthesized, 3);
    expect(ended.status).toBe('SUCCEEDED');
    expect(status).toBe('SUCCEEDED');
    expect(calls).toHaveLength(3);
    // Each item: its child execution's start, and StartItemRun's invoke (its run ends at once: no CheckItemRun).
    expect(decisions).toEqual({ allowed: 6, denied: 0 });
  }, 60_000);

  it('fails the batch’s Map Run (States.ExceedToleratedFailureThreshold) when its role may not invoke the item function, invoking it never', async () => {
    const { ended, calls, decisions, status } = await runBatch(without(synthesized, 'lambda:InvokeFunction'), 3);
    // The item's Lambda.AWSLambdaException fails its child; one failed child is over the Map's default threshold (0%).
    expect(ended).toMatchObject({ status: 'FAILED', error: 'States.ExceedToleratedFailureThreshold' });
    expect(ended.cause).toMatch(/Lambda\.AWSLambdaException/);
    expect(ended.cause).toMatch(/is not authorized to perform: lambda:InvokeFunction on resource: arn:aws:lambda:us-east-1:000000000000:function:payer-batch-item .*Status Code: 403; Error Code: AccessDeniedException/);
    expect(status).toBe('FAILED');
    expect(calls).toEqual([]);
    expect(decisions.denied).toBeGreaterThan(0);
  }, 60_000);

  it('fails the batch with States.Runtime when its role may not start its child executions, starting none', async () => {
    const { ended, calls, decisions, status } = await runBatch(without(synthesized, 'states:StartExecution'), 3);
    expect(ended).toMatchObject({ status: 'FAILED', error: 'States.Runtime' });
    expect(ended.cause).toMatch(/could not start a child execution: AccessDeniedException: .*is not authorized to perform: states:StartExecution on resource: arn:aws:states:us-east-1:000000000000:stateMachine:payer-batches/);
    expect(status).toBe('FAILED');
    expect(calls).toEqual([]);
    // No item's invoke was asked for: every decision made was a refused start.
    expect(decisions.allowed).toBe(0);
    expect(decisions.denied).toBeGreaterThan(0);
  }, 60_000);

  it('resolves its role’s policies to the ARNs the twin runs it under, as AWS’s Distributed Map policy names them', () => {
    const iam = twinIam(deployBatchTemplate(synthesized, 'payer'));
    const statements = iam.roles.roles.get(iam.roles.stateMachineRole!)!.policies.flatMap((policy) => policy.Statement);
    const resourcesOf = (action: string) => statements.filter((statement) => [statement.Action].flat().includes(action)).flatMap((statement) => [statement.Resource].flat());
    expect(resourcesOf('states:StartExecution')).toEqual(['arn:aws:states:us-east-1:000000000000:stateMachine:payer-batches']);
    // Its child executions (execution:<name>/<map run label>:<id>), by the statement infra/batch-state-machine.ts adds.
    expect(resourcesOf('states:StopExecution')).toContain('arn:aws:states:us-east-1:000000000000:execution:payer-batches/*');
    expect(resourcesOf('lambda:InvokeFunction')).toEqual(['arn:aws:lambda:us-east-1:000000000000:function:payer-batch-item', 'arn:aws:lambda:us-east-1:000000000000:function:payer-batch-item:*']);
  });

  it('allows the item function of its own agent only (the template names it at deploy)', async () => {
    const calls: unknown[] = [];
    const batches = localBatches({ agent: 'payer', template: async () => synthesized, s3, item: async (event) => (calls.push(event), { runId: 'x', status: 'succeeded', ended: true }), retryDelayMs: 1 });
    try {
      await batches.store.start({ batchId: 'other', agent: 'payer', runs: [{ runId: 'other-0', input: {} }], itemFunction: 'arn:aws:lambda:us-east-1:000000000000:function:someone-else-batch-item', concurrency: 1, pollSeconds: 1, caller: TESTER, createdAt: new Date(0).toISOString() });
      const engine = await batches.engine();
      const ended = await engine.waitForExecution(engine.listExecutions().executions[0]!.executionArn);
      expect(ended).toMatchObject({ status: 'FAILED', error: 'States.ExceedToleratedFailureThreshold' });
      expect(ended.cause).toMatch(/Lambda\.AWSLambdaException: .*someone-else-batch-item/);
      expect(calls).toEqual([]);
    } finally {
      await batches.close();
    }
  }, 60_000);
});
