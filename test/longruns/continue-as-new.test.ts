import { afterEach, describe, expect, it } from 'vitest';
import { summarizeHistory } from '../../local/engine/local-engine.js';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';
import { executionChain } from '../../lambdas/guards/history.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { counterAgent } from '../support/counter-agent.js';
import { inputTokensOf } from '../../lambdas/records/messages.js';

/**
 * The run: 8,000 tool calls and the turns that ask for them, 4 a turn (10,000+ steps,
 * ~84,000 history events) under the default handoff threshold of 20,000 events, so several
 * executions drive it, with context compaction on so that a turn costs the same at step 10 and at
 * step 10,000 (about 2.5 ms a step here). `LONGRUN_CALLS` / `LONGRUN_THRESHOLD` scale it.
 */
const CALLS = Number(process.env.LONGRUN_CALLS ?? 8_000);
const PER_TURN = 4;
const THRESHOLD = Number(process.env.LONGRUN_THRESHOLD ?? 20_000);
const WINDOW = 8_000;
const TIMEOUT_MS = Math.max(170_000, CALLS * 60);

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
    stack = await startLocalStack({ agent: counterAgent({ calls: CALLS, perTurn: PER_TURN, contextWindow: WINDOW, compaction: { share: 0.5, keepRecentTurns: 3 } }), retryDelayMs: 1 });
    const started = Date.now();
    const { executionArn } = stack.engine.startExecution({ name: 'long-1', input: { runId: 'long-1', input: { id: 'a' }, config: { historyEventsBeforeHandoff: THRESHOLD } } });
    const run = await waitForRun(stack, 'long-1', executionArn);
    const ms = Date.now() - started;

    const chain = executionChain(run);
    const histories = run.executions.map((arn) => stack!.engine.getExecutionHistory(arn));
    const sizes = histories.map((events) => events.length);
    const { turns: turnRecords, calls } = await stack.ledger.listConversation('long-1');
    const modelTurns = turnRecords.filter((turn) => !turn.compaction);
    const compactions = turnRecords.length - modelTurns.length;
    const turns = Math.ceil(CALLS / PER_TURN) + 1;
    console.log(`continue-as-new: ${run.steps} steps in ${ms} ms (${(ms / run.steps).toFixed(2)} ms/step), ${chain.length} executions, events per execution ${sizes.join(' ')}, threshold ${THRESHOLD}`);

    expect(run.status).toBe('succeeded');
    expect(run.toolCalls).toBe(CALLS);
    expect(run.modelTurns).toBe(turns + compactions); // a compaction is a model call like any other
    expect(run.steps).toBe(CALLS + turns + compactions);
    // Compaction keeps what a turn sends flat: after the first compaction no turn reads more than the window.
    const inputs = modelTurns.map((turn) => inputTokensOf(turn.usage));
    const firstCompaction = turnRecords.findIndex((turn) => turn.compaction);
    expect(compactions).toBeGreaterThan(1);
    expect(Math.max(...inputs.slice(firstCompaction))).toBeLessThanOrEqual(WINDOW);
    console.log(`continue-as-new: input tokens per turn, first ${inputs[0]}, max after compaction ${Math.max(...inputs.slice(firstCompaction))}, last ${inputs.at(-1)}; ${compactions} compactions`);
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
    // CallModel decides before each call: once a turn, and once for each decision that calls no
    // model (a compaction's, a handoff's); the run's end in the invocation of the final answer.
    expect(total('CallModel')).toBe(turns + compactions + (chain.length - 1));
    expect(total('Compact')).toBe(compactions);
    expect(total('CallTool')).toBe(CALLS);
    expect(total('Handoff')).toBe(chain.length - 1);
    // What the CLI waits for and reports: the last execution of the chain, and the chain in order.
    expect((await waitForChain(stack.engine, stack.ledger, 'long-1', run.executions[0]!)).executionArn).toBe(run.executions.at(-1));
    const report = (await loadReport(stack.ledger, 'long-1', new Date()))!;
    expect(report.chain.map((link) => link.executionArn)).toEqual(run.executions);
    expect(calls.map((call) => call.args['n'])).toEqual(Array.from({ length: CALLS }, (_, i) => i + 1));
  }, TIMEOUT_MS + 10_000);
});
