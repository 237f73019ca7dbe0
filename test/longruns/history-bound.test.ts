import { afterEach, describe, expect, it } from 'vitest';
import { LIVE_ALIAS } from '../../infra/agent-state-machine.js';
import { summarizeHistory, type HistoryEvent } from '../../local/engine/local-engine.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';
import { counterAgent } from '../support/counter-agent.js';

/**
 * Issue 34 item 5: the history bound each decision carries (lambdas/guards/history.ts) is never below
 * the events the execution really has. The synthesized definition runs in the twin with the
 * failures a fleet meets: the model overloaded or rate-limited (Agent.ModelThrottled, each recorded
 * by its step; the breaker opening: Agent.CircuitOpen), Lambda throttled by the account's
 * concurrency (Lambda.TooManyRequestsException, counted by MaxAttempts), and compactions; a low
 * threshold makes the run hand off several times. At every decision of every execution (BudgetCheck,
 * and CallModel before each model call), the bound in its output is compared with the id of its own
 * TaskStateExited event (ids run 1, 2, 3, …).
 */
let stack: LocalStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** Each decision's exit (BudgetCheck's, CallModel's): its event id and the bound it wrote. */
function checks(events: readonly HistoryEvent[]): { id: number; bound: number }[] {
  return events
    .filter((event) => event.type === 'TaskStateExited' && ['BudgetCheck', 'CallModel'].includes(event.stateExitedEventDetails?.name ?? ''))
    .map((event) => ({ id: event.id, bound: (JSON.parse(event.stateExitedEventDetails!.output) as { budget: { result: { history: { events: number } } } }).budget.result.history.events }));
}

describe('the history bound against the twin\'s count', () => {
  it('is never below the events an execution has, with injected model failures, Lambda throttles, compactions and handoffs', async () => {
    stack = await startLocalStack({
      // A tick yields to the event loop once, so that a turn's four calls run at once.
      agent: counterAgent({ calls: 240, perTurn: 4, contextWindow: 3_000, compaction: { share: 0.5, keepRecentTurns: 2 }, beforeTick: () => new Promise<void>((resolve) => setImmediate(resolve)) }),
      retryDelayMs: 1,
      failRate: 0.12,
      seed: 7,
      // Four tool calls of a turn at once, and the account's concurrency at 2: Lambda throttles them.
      lambdaConcurrency: 2,
      quotas: true,
    });
    const { executionArn } = stack.engine.startExecution({ name: 'bound', input: { runId: 'bound', input: { id: 'a' }, config: { historyEventsBeforeHandoff: 3_000 } }, alias: LIVE_ALIAS });
    await waitForChain(stack.engine, stack.ledger, 'bound', executionArn);
    const run = (await stack.ledger.getRun('bound'))!;
    expect(run).toMatchObject({ status: 'succeeded', toolCalls: 240 });

    const histories = run.executions.map((arn) => stack!.engine.getExecutionHistory(arn));
    const seen = histories.flatMap(checks);
    for (const { id, bound } of seen) expect(bound).toBeGreaterThanOrEqual(id);
    // The failures happened (else the test proves nothing): model errors retried, Lambda throttled, compactions made.
    const errors = histories.map(summarizeHistory).flatMap((states) => Object.values(states).flatMap((state) => Object.entries(state.errors)));
    const count = (name: string) => errors.filter(([error]) => error === name).reduce((sum, [, n]) => sum + n, 0);
    expect(count('Agent.ModelThrottled')).toBeGreaterThan(0);
    expect(count('Lambda.TooManyRequestsException')).toBeGreaterThan(0);
    expect(histories.some((events) => checks(events).length > 0 && events.some((event) => event.stateEnteredEventDetails?.name === 'Compact'))).toBe(true);
    expect(run.historyEvents).toBeGreaterThan(0);
    expect(run.executions.length).toBeGreaterThanOrEqual(3);

    // Every execution handed off before the threshold plus one iteration, and none near 25,000.
    for (const events of histories) expect(events.length).toBeLessThan(3_000 + 1_000);
    // No Step Functions call but the successors' starts: no GetExecutionHistory, no DescribeExecution.
    expect(stack.quotas!.admitted()).toEqual({ StartExecution: run.executions.length - 1 });
    const slack = seen.map(({ id, bound }) => bound / id);
    console.log(`history bound: ${seen.length} decisions in ${run.executions.length} executions, ${count('Agent.ModelThrottled')} model throttles, ${count('Lambda.TooManyRequestsException')} Lambda throttles; bound ÷ real events ${Math.min(...slack).toFixed(2)}–${Math.max(...slack).toFixed(2)}`);
  }, 120_000);
});
