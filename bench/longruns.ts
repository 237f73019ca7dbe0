import { inputTokensOf } from '../lambdas/agent/messages.js';
/**
 * Long runs on the local pipeline: input tokens per turn with and without context compaction, and
 * events per execution with continue-as-new. `node --import tsx bench/longruns.ts [calls] [threshold]`
 * (defaults 120 calls, one a turn; handoff threshold 600 events).
 */
import { executionChain } from '../lambdas/guards/history.js';
import { waitForChain } from '../local/chain.js';
import { startLocalStack } from '../local/runtime.js';
import { counterAgent } from '../test/support/counter-agent.js';

const calls = Number(process.argv[2] ?? 120);
const threshold = Number(process.argv[3] ?? 600);
const WINDOW = 4_000;

for (const compaction of [false, true]) {
  const agent = counterAgent({ calls, perTurn: 1, ...(compaction && { contextWindow: WINDOW, compaction: { share: 0.5, keepRecentTurns: 3 } }) });
  const stack = await startLocalStack({ agent, retryDelayMs: 1 });
  try {
    const started = Date.now();
    const runId = `bench-${compaction ? 'compact' : 'plain'}`;
    const { executionArn } = stack.engine.startExecution({ name: runId, input: { runId, input: { id: runId }, config: { historyEventsBeforeHandoff: threshold } } });
    await waitForChain(stack.engine, stack.ledger, runId, executionArn);
    const run = (await stack.ledger.getRun(runId))!;
    const { turns } = await stack.ledger.listConversation(runId);
    const inputs = turns.filter((turn) => !turn.compaction).map((turn) => inputTokensOf(turn.usage));
    const every = Math.max(1, Math.floor(inputs.length / 12));
    const events = run.executions.map((arn) => stack.engine.getExecutionHistory(arn).length);
    console.log(`\n${compaction ? `with compaction (window ${WINDOW}, share 0.5, keep 3 turns)` : 'without compaction'}: ${run.status}, ${run.steps} steps in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    console.log(`  input tokens per turn (every ${every}th): ${inputs.filter((_, i) => i % every === 0).join(' ')}`);
    console.log(`  input tokens: last turn ${inputs.at(-1)}, max ${Math.max(...inputs)}, total ${run.inputTokens}; compactions ${turns.length - inputs.length}`);
    console.log(`  executions ${executionChain(run).map((link) => `${link.name}(${link.via})`).join(' → ')}; events per execution ${events.join(' ')} (threshold ${threshold})`);
  } finally {
    await stack.close();
  }
}
