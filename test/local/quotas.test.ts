/**
 * Step Functions' API throttling at the local endpoint: the published per-account token buckets
 * (https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html, "Quotas related to API
 * action throttling"; us-east-1), on an injected clock, answering ThrottlingException as AWS does.
 */
import { DescribeExecutionCommand, DescribeStateMachineForExecutionCommand, GetExecutionHistoryCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AslDefinition } from '../../local/template/asl.js';
import { localAwsConfig } from '../../local/services/aws-config.js';
import { LocalEngine } from '../../local/engine/local-engine.js';
import { startSfnEndpoint, type SfnEndpoint } from '../../local/services/step-functions.js';
import { SfnQuotas, STEP_FUNCTIONS_API_QUOTAS, TokenBucket } from '../../local/aws/sfn-api-throttling.js';
import { waitFor } from '../support/agent-harness.js';
import { sampleInput, startHarness } from '../support/refund-harness.js';

const definition: AslDefinition = { StartAt: 'Done', States: { Done: { Type: 'Pass', End: true } } };

describe('a token bucket', () => {
  it('starts full, refills at its rate, never above its size', () => {
    let now = 0;
    const bucket = new TokenBucket({ bucket: 3, refillPerSecond: 2 }, () => now);
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, true, false]);
    now += 499; // 0.998 of a token
    expect(bucket.tryTake()).toBe(false);
    now += 1;
    expect(bucket.tryTake()).toBe(true);
    now += 60_000; // a long pause fills it to 3, not 120
    expect([bucket.tryTake(), bucket.tryTake(), bucket.tryTake(), bucket.tryTake()]).toEqual([true, true, true, false]);
  });
});

describe('API throttling at the local endpoint', () => {
  let now = Date.parse('2026-12-01T00:00:00Z');
  let engine: LocalEngine;
  let endpoint: SfnEndpoint;
  let client: SFNClient;
  let quotas: SfnQuotas;
  let executionArn: string;

  beforeAll(async () => {
    engine = new LocalEngine({ definition, stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:quota', tasks: {}, now: () => new Date(now) });
    quotas = new SfnQuotas(() => now);
    endpoint = await startSfnEndpoint(engine, { quotas });
    // One attempt: the SDK would otherwise retry a throttled call after a real backoff.
    client = new SFNClient({ ...localAwsConfig, endpoint: endpoint.url, requestHandler: endpoint.requestHandler, maxAttempts: 1 });
    ({ executionArn } = engine.startExecution({ name: 'one' }));
    await engine.waitForExecution(executionArn);
  });
  afterAll(async () => {
    client.destroy();
    await endpoint.close();
    await engine.close();
  });

  it('answers DescribeStateMachineForExecution past its bucket of 200 with ThrottlingException, then one more per second', async () => {
    const call = () => client.send(new DescribeStateMachineForExecutionCommand({ executionArn }));
    // The endpoint's count of what it throttled is the file's: this test's is what it adds.
    const before = quotas.throttled();
    for (let i = 0; i < 200; i++) await call();
    await expect(call()).rejects.toMatchObject({ name: 'ThrottlingException', message: 'Rate exceeded', $metadata: { httpStatusCode: 400 } });
    now += 1000;
    await call();
    await expect(call()).rejects.toMatchObject({ name: 'ThrottlingException' });
    // Its own bucket: other actions are not throttled by it.
    await client.send(new DescribeExecutionCommand({ executionArn }));
    expect(quotas.throttled()).toEqual({ ...before, DescribeStateMachineForExecution: (before['DescribeStateMachineForExecution'] ?? 0) + 2 });
  });

  it('refills GetExecutionHistory at 20 a second after its burst of 400', async () => {
    const call = () => client.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1, reverseOrder: true }));
    const { bucket, refillPerSecond } = STEP_FUNCTIONS_API_QUOTAS['GetExecutionHistory']!;
    expect({ bucket, refillPerSecond }).toEqual({ bucket: 400, refillPerSecond: 20 });
    for (let i = 0; i < 400; i++) await call();
    await expect(call()).rejects.toMatchObject({ name: 'ThrottlingException' });
    now += 1000;
    for (let i = 0; i < 20; i++) await call();
    await expect(call()).rejects.toMatchObject({ name: 'ThrottlingException' });
  });
});

describe('API throttling on the local stack (quotas: true)', () => {
  it("counts the steps' own calls against the account's buckets: StartRun no longer spends a DescribeStateMachineForExecution token (all 200 left; issue 20 item 4)", async () => {
    const at = Date.parse('2026-12-01T00:00:00Z');
    const h = await startHarness({ quotas: true, recovery: false, clock: { now: () => new Date(at) } });
    try {
      const { executionArn } = h.stack.engine.startExecution({ name: 'throttled', input: { runId: 'throttled', input: sampleInput, config: { approvalTimeoutSeconds: 3600 } } });
      // StartRun has run once the first decision (CallModel's) is entered.
      await waitFor(() => h.stack.engine.getExecutionHistory(executionArn).some((event) => event.stateEnteredEventDetails?.name === 'CallModel'));
      // One attempt: the SDK would otherwise retry a throttled call after a real backoff.
      const operator = new SFNClient({ ...localAwsConfig, endpoint: h.stack.endpoints.sfn, maxAttempts: 1 });
      let allowed = 0;
      for (;;) {
        try {
          await operator.send(new DescribeStateMachineForExecutionCommand({ executionArn }));
          allowed++;
        } catch (error) {
          expect(error).toMatchObject({ name: 'ThrottlingException' });
          break;
        }
        if (allowed > 200) break;
      }
      operator.destroy();
      expect(allowed).toBe(200);
      expect(h.stack.quotas!.throttled()).toMatchObject({ DescribeStateMachineForExecution: expect.any(Number) });
      await h.stack.engine.stopExecution(executionArn);
    } finally {
      await h.stack.close();
    }
  });
});
