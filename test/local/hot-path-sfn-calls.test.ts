import { afterEach, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';
import { counterAgent } from '../support/counter-agent.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { LIVE_ALIAS } from '../../infra/agent-state-machine.js';

/**
 * Issue 20 item 4: the steps make no Step Functions control-plane call per agent step. Every call
 * any function makes reaches the twin's quota check (local/aws/sfn-api-throttling.ts): at the endpoint, signed
 * by its own role, or BudgetCheck's in-process history read. The test starts its run on the engine
 * itself, so every call counted is a step's. Before the fix: one DescribeStateMachineForExecution
 * per start and one GetExecutionHistory per BudgetCheck; then (issue 34 item 5) one
 * GetExecutionHistory every ~70 steps, and a DescribeExecution per handoff.
 */
let stack: LocalStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

async function countedRun(calls: number, perTurn: number) {
  stack = await startLocalStack({ agent: counterAgent({ calls, perTurn }), retryDelayMs: 1, quotas: true });
  // On the alias, as the runs API and the CLI start runs: the execution runs a version.
  const { executionArn } = stack.engine.startExecution({ name: 'hot-path', input: { runId: 'hot-path', input: { id: 'a' } }, alias: LIVE_ALIAS });
  // The run's chain of executions (a handoff starts a successor), to its end.
  await waitForChain(stack.engine, stack.ledger, 'hot-path', executionArn);
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

  it('a 501-step run hands off before the limit with no GetExecutionHistory and no DescribeExecution: only its successors\' StartExecution', async () => {
    const { run, others, historyReads } = await countedRun(400, 4);
    expect(run).toMatchObject({ status: 'succeeded', steps: 501 });
    // The bound (~330 events a turn of 4 calls) reaches the 20,000 threshold near turn 60: one handoff at least.
    expect(run.executions.length).toBeGreaterThanOrEqual(2);
    expect(others).toEqual({ StartExecution: run.executions.length - 1 });
    expect(historyReads).toBe(0);
    for (const arn of run.executions) expect(stack!.engine.eventCount(arn)).toBeLessThan(20_000);
  });
});
