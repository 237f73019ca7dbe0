import { afterEach, describe, expect, it } from 'vitest';
import { summarizeHistory } from '../../local/engine.js';
import { startLocalStack, type LocalStack } from '../../local/runtime.js';
import { executionChain } from '../../lambdas/guards/history.js';
import { loadReport } from '../../lambdas/agent/report.js';
import { waitForChain } from '../../local/chain.js';
import { counterAgent } from './counter-agent.js';

/**
 * The 10,000 steps are `LONGRUN_CALLS=8000 LONGRUN_THRESHOLD=20000` (8,000 calls + 2,001
 * turns, ~94,000 events, 5 executions). On this shared 2-core machine a step takes 220-320 ms
 * (load 16-20), so that run takes ~45 minutes; the default keeps the shape — several handoffs at
 * the same events per step — with the threshold scaled down with the steps: 301 steps, ~2,800
 * events, 5 executions at 600.
 */
const CALLS = Number(process.env.LONGRUN_CALLS ?? 240);
const PER_TURN = 4;
const THRESHOLD = Number(process.env.LONGRUN_THRESHOLD ?? 600);
const TIMEOUT_MS = Math.max(170_000, CALLS * 1.25 * 1_000);

let stack: LocalStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** Waits for the run's chain of executions to end (engine events, no polling), then reads the run. */
async function waitForRun(s: LocalStack, runId: string, executionArn: string) {
  await waitForChain(s.engine, s.ledger, runId, executionArn);
  return (await s.ledger.getRun(runId))!;
}

describe('continue-as-new', () => {
  it(`runs ${CALLS} tool calls through several executions, each under the history threshold`, async () => {
    stack = await startLocalStack({ agent: counterAgent({ calls: CALLS, perTurn: PER_TURN }), retryDelayMs: 1, sweepEveryMs: 1_000 });
    const started = Date.now();
    const { executionArn } = stack.engine.startExecution({ name: 'long-1', input: { runId: 'long-1', input: { id: 'a' }, config: { historyEventsBeforeHandoff: THRESHOLD } } });
    const run = await waitForRun(stack, 'long-1', executionArn);
    const ms = Date.now() - started;

    const chain = executionChain(run);
    const histories = run.executions.map((arn) => stack!.engine.getExecutionHistory(arn));
    const sizes = histories.map((events) => events.length);
    const turns = Math.ceil(CALLS / PER_TURN) + 1;
    console.log(`continue-as-new: ${run.steps} steps in ${ms} ms (${(ms / run.steps).toFixed(2)} ms/step), ${chain.length} executions, events per execution ${sizes.join(' ')}, threshold ${THRESHOLD}`);

    expect(run.status).toBe('succeeded');
    expect(run.toolCalls).toBe(CALLS);
    expect(run.modelTurns).toBe(turns);
    expect(run.steps).toBe(CALLS + turns);
    // Several executions, each handed the run to the next; the last one finished it.
    expect(chain.length).toBeGreaterThanOrEqual(3);
    expect(chain.slice(1).every((link) => link.via === 'handoff')).toBe(true);
    expect(chain.map((link) => link.name)).toEqual(chain.map((_, i) => (i === 0 ? 'long-1' : `long-1-c${i}`)));
    // At most one iteration (a turn, its 4 calls, the handoff: ~60 events) past the threshold.
    expect(Math.max(...sizes)).toBeLessThan(THRESHOLD + 100);
    for (const [i, arn] of run.executions.entries()) {
      const description = stack.engine.describeExecution(arn);
      expect(description.status).toBe('SUCCEEDED');
      if (i < run.executions.length - 1) expect(JSON.parse(description.output!)).toMatchObject({ continued: true, to: run.executions[i + 1] });
    }
    // Every model turn and tool call ran once, in all the executions together.
    const states = histories.map(summarizeHistory);
    const total = (state: string) => states.reduce((sum, s) => sum + (s[state]?.invocations ?? 0), 0);
    expect(total('CallModel')).toBe(turns);
    expect(total('CallTool')).toBe(CALLS);
    expect(total('Handoff')).toBe(chain.length - 1);
    // What the CLI waits for and reports: the last execution of the chain, and the chain in order.
    expect((await waitForChain(stack.engine, stack.ledger, 'long-1', run.executions[0]!)).executionArn).toBe(run.executions.at(-1));
    const report = (await loadReport(stack.ledger, 'long-1', new Date()))!;
    expect(report.chain.map((link) => link.executionArn)).toEqual(run.executions);
    const { calls } = await stack.ledger.listConversation('long-1');
    expect(calls.map((call) => call.args['n'])).toEqual(Array.from({ length: CALLS }, (_, i) => i + 1));
  }, TIMEOUT_MS + 10_000);
});
