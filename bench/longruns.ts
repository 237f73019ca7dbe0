/**
 * `npm run bench -- --longruns [--calls 120] [--threshold 600] [--json]`: long runs on the local
 * pipeline — input tokens per turn with and without context compaction, and events per execution
 * with continue-as-new (`calls` tool calls, one a turn; a handoff once an execution's history
 * reaches `threshold` events).
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { inputTokensOf } from '../lambdas/records/messages.js';
import { executionChain } from '../lambdas/guards/history.js';
import { HISTORY_EVENT_LIMIT } from '../lambdas/shared/limits.js';
import { parseOrThrow } from '../lambdas/shared/validation.js';
import { waitForChain } from '../local/runtime/chain.js';
import { startLocalStack } from '../local/runtime/local-stack.js';
import { counterAgent } from '../test/support/counter-agent.js';

const { values } = parseArgs({
  options: {
    longruns: { type: 'boolean', default: true },
    calls: { type: 'string', default: '120' },
    threshold: { type: 'string', default: '600' },
    json: { type: 'boolean', default: false },
  },
});
const { calls, threshold, json } = parseOrThrow(
  z.object({ calls: z.coerce.number().int().min(1).max(10_000), threshold: z.coerce.number().int().min(100).max(HISTORY_EVENT_LIMIT), json: z.boolean() }),
  values,
  'options',
);
const WINDOW = 4_000;

const results = [];
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
    results.push({
      compaction: compaction ? { window: WINDOW, share: 0.5, keepRecentTurns: 3 } : null,
      status: run.status,
      steps: run.steps,
      seconds: (Date.now() - started) / 1000,
      inputTokensPerTurn: inputs,
      inputTokens: { lastTurn: inputs.at(-1), maxTurn: Math.max(...inputs), total: run.inputTokens },
      compactions: turns.length - inputs.length,
      executions: executionChain(run).map((link) => ({ name: link.name, via: link.via })),
      eventsPerExecution: run.executions.map((arn) => stack.engine.getExecutionHistory(arn).length),
    });
  } finally {
    await stack.close();
  }
}

if (json) {
  process.stdout.write(`${JSON.stringify({ calls, threshold, results }, null, 2)}\n`);
} else {
  for (const result of results) {
    const every = Math.max(1, Math.floor(result.inputTokensPerTurn.length / 12));
    const heading = result.compaction ? `with compaction (window ${WINDOW}, share 0.5, keep 3 turns)` : 'without compaction';
    console.log(`\n${heading}: ${result.status}, ${result.steps} steps in ${result.seconds.toFixed(1)} s`);
    console.log(`  input tokens per turn (every ${every}th): ${result.inputTokensPerTurn.filter((_, i) => i % every === 0).join(' ')}`);
    console.log(`  input tokens: last turn ${result.inputTokens.lastTurn}, max ${result.inputTokens.maxTurn}, total ${result.inputTokens.total}; compactions ${result.compactions}`);
    console.log(`  executions ${result.executions.map((link) => `${link.name}(${link.via})`).join(' → ')}; events per execution ${result.eventsPerExecution.join(' ')} (threshold ${threshold})`);
  }
}
