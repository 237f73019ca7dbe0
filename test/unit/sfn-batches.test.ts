/**
 * A batch on AWS (lambdas/adapters/sfn.ts `sfnBatches`): its execution's DescribeExecution answers
 * how it stands, and a batch that ended without succeeding answers why, as Step Functions ended it
 * (its `error` and `cause`), through the runs API's `GET /v1/batches/{batchId}`.
 */
import type { SFNClient } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { sfnBatches } from '../../lambdas/adapters/sfn.js';
import { BATCH_CAUSE_MAX_CHARS, createBatchRoutes, type BatchExecutionInput } from '../../lambdas/runs/batch.js';
import { counterAgent } from '../support/counter-agent.js';

const machine = 'arn:aws:states:us-east-1:123456789012:stateMachine:payer-batches';
const batch: BatchExecutionInput = {
  batchId: 'nightly',
  agent: 'counter',
  runs: [{ runId: 'nightly-0', input: { id: 'a' } }],
  itemFunction: 'arn:aws:lambda:us-east-1:123456789012:function:counter-batch-item',
  concurrency: 1,
  pollSeconds: 30,
  caller: { id: 'alice', via: 'iam' },
  createdAt: '2026-12-01T00:00:00.000Z',
};

/** DescribeExecution answering `described` for the batch's execution, and nothing else. */
function describing(described: Record<string, unknown>) {
  const asked: string[] = [];
  const client = {
    send: async (command: { constructor: { name: string }; input: { executionArn?: string } }) => {
      if (command.constructor.name !== 'DescribeExecutionCommand') throw new Error(`unexpected ${command.constructor.name}`);
      asked.push(command.input.executionArn!);
      return { input: JSON.stringify(batch), ...described };
    },
  } as unknown as SFNClient;
  return { client, asked };
}

const routesOver = (client: SFNClient) =>
  createBatchRoutes({ agent: counterAgent({ calls: 1, perTurn: 1 }), batches: sfnBatches(client, machine), runs: { getRun: async () => undefined, prunedRun: async () => undefined }, clock: { now: () => new Date() }, itemFunction: batch.itemFunction });

describe('sfnBatches', () => {
  it('answers a failed batch’s error and cause as DescribeExecution gives them', async () => {
    const cause = "The state/task 'StartItemRun (json manifest)' was scheduled with an input with a size exceeding the maximum number of bytes service limit.";
    const { client, asked } = describing({ status: 'FAILED', error: 'States.DataLimitExceeded', cause });
    expect(await sfnBatches(client, machine).get('nightly')).toEqual({ batch, status: 'FAILED', error: 'States.DataLimitExceeded', cause });
    expect(asked).toEqual(['arn:aws:states:us-east-1:123456789012:execution:payer-batches:nightly']);
    expect(await routesOver(client).get('nightly')).toMatchObject({ batchId: 'nightly', status: 'FAILED', error: 'States.DataLimitExceeded', cause, counts: { pending: 1 } });
  });

  it('answers a cause up to Step Functions’ 32,768 characters whole, and cuts a longer one there', async () => {
    const whole = 'c'.repeat(BATCH_CAUSE_MAX_CHARS);
    expect((await routesOver(describing({ status: 'FAILED', error: 'States.ExceedToleratedFailureThreshold', cause: whole }).client).get('nightly')).cause).toBe(whole);
    const cut = (await routesOver(describing({ status: 'FAILED', error: 'States.ExceedToleratedFailureThreshold', cause: `${whole}more` }).client).get('nightly')).cause!;
    expect(cut).toHaveLength(BATCH_CAUSE_MAX_CHARS);
    expect(cut.endsWith('…')).toBe(true);
  });

  it.each(['RUNNING', 'SUCCEEDED'])('answers no error or cause for a batch %s', async (status) => {
    const answered = await routesOver(describing({ status, error: 'States.Whatever', cause: 'not a failure' }).client).get('nightly');
    expect(answered.status).toBe(status);
    expect(answered).not.toHaveProperty('error');
    expect(answered).not.toHaveProperty('cause');
  });

  it('answers a batch that timed out with the error it timed out with', async () => {
    expect(await routesOver(describing({ status: 'TIMED_OUT', error: 'States.Timeout' }).client).get('nightly')).toMatchObject({ status: 'TIMED_OUT', error: 'States.Timeout' });
  });
});
