import { afterEach, describe, expect, it } from 'vitest';
import { MAX_EVENTS_PER_CHECK, MAX_EVENTS_PER_STEP } from '../../lambdas/guards/history.js';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';
import { counterAgent } from '../support/counter-agent.js';

/**
 * Issue 20 item 4: the steps make no Step Functions control-plane call per agent step. Every call
 * any function makes reaches the twin's quota check (local/aws/sfn-api-throttling.ts): at the endpoint, signed
 * by its own role, or BudgetCheck's in-process history read. The test starts its run on the engine
 * itself, so every call counted is a step's. Before the fix: one DescribeStateMachineForExecution
 * per start and one GetExecutionHistory per BudgetCheck.
 */
let stack: LocalStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function countedRun(calls: number, perTurn: number) {
  stack = await startLocalStack({ agent: counterAgent({ calls, perTurn }), retryDelayMs: 1, quotas: true });
  const { executionArn } = stack.engine.startExecution({ name: 'hot-path', input: { runId: 'hot-path', input: { id: 'a' } } });
  expect(await stack.engine.waitForExecution(executionArn)).toMatchObject({ status: 'SUCCEEDED' });
  const run = (await stack.ledger.getRun('hot-path'))!;
  const { GetExecutionHistory: historyReads = 0, ...others } = stack.quotas!.admitted();
  return { run, others, historyReads };
}

describe('Step Functions API calls on the hot path', () => {
  it('makes none in a 51-step run: no DescribeStateMachineForExecution at the start, no GetExecutionHistory per BudgetCheck', async () => {
    const { run, others, historyReads } = await countedRun(40, 4);
    expect(run).toMatchObject({ status: 'succeeded', steps: 51 });
    expect(others).toEqual({});
    expect(historyReads).toBe(0);
  });

  it('counts the history of a longer run only when it could be near its limit (at most once every ~60 steps)', async () => {
    const { run, others, historyReads } = await countedRun(400, 4);
    expect(run).toMatchObject({ status: 'succeeded', steps: 501 });
    expect(others).toEqual({});
    expect(historyReads).toBeGreaterThan(0);
    // The estimate grows by at most MAX_EVENTS_PER_STEP a step (and MAX_EVENTS_PER_CHECK a check): a
    // count is due at most once in 20,000 / (250 + 300/5) steps.
    expect(historyReads).toBeLessThanOrEqual(Math.ceil(run.steps / Math.floor(20_000 / (MAX_EVENTS_PER_STEP + MAX_EVENTS_PER_CHECK / 5))) + 1);
  });
});
