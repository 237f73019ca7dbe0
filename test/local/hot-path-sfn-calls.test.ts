import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_EVENTS_PER_CHECK, MAX_EVENTS_PER_STEP } from '../../lambdas/guards/history.js';
import { startLocalStack, type LocalStack } from '../../local/runtime.js';
import { counterAgent } from '../support/counter-agent.js';

/**
 * Issue 20 item 4: the steps make no Step Functions control-plane call per agent step. Every call
 * the steps make goes through the stack's SDK client (counted by a middleware on it) or, for
 * BudgetCheck's history count, through the engine's `eventCount` (what GetExecutionHistory serves).
 * Before the fix: one DescribeStateMachineForExecution per start and one history read per BudgetCheck.
 */
let stack: LocalStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function countedRun(calls: number, perTurn: number) {
  stack = await startLocalStack({ agent: counterAgent({ calls, perTurn }), retryDelayMs: 1 });
  const sdkCalls: string[] = [];
  stack.sfn.middlewareStack.add((next, context) => async (args) => {
    sdkCalls.push(String(context.commandName));
    return next(args);
  }, { step: 'initialize', name: 'countSfnCalls' });
  const historyReads = vi.spyOn(stack.engine, 'eventCount');
  const { executionArn } = stack.engine.startExecution({ name: 'hot-path', input: { runId: 'hot-path', input: { id: 'a' } } });
  expect(await stack.engine.waitForExecution(executionArn)).toMatchObject({ status: 'SUCCEEDED' });
  const run = (await stack.ledger.getRun('hot-path'))!;
  return { run, sdkCalls, historyReads: historyReads.mock.calls.length };
}

describe('Step Functions API calls on the hot path', () => {
  it('makes none in a 51-step run: no DescribeStateMachineForExecution at the start, no GetExecutionHistory per BudgetCheck', async () => {
    const { run, sdkCalls, historyReads } = await countedRun(40, 4);
    expect(run).toMatchObject({ status: 'succeeded', steps: 51 });
    expect(sdkCalls).toEqual([]);
    expect(historyReads).toBe(0);
  });

  it('counts the history of a longer run only when it could be near its limit (at most once every ~60 steps)', async () => {
    const { run, sdkCalls, historyReads } = await countedRun(400, 4);
    expect(run).toMatchObject({ status: 'succeeded', steps: 501 });
    expect(sdkCalls).toEqual([]);
    expect(historyReads).toBeGreaterThan(0);
    // The estimate grows by at most MAX_EVENTS_PER_STEP a step (and MAX_EVENTS_PER_CHECK a check): a
    // count is due at most once in 20,000 / (250 + 300/5) steps.
    expect(historyReads).toBeLessThanOrEqual(Math.ceil(run.steps / Math.floor(20_000 / (MAX_EVENTS_PER_STEP + MAX_EVENTS_PER_CHECK / 5))) + 1);
  });
});
