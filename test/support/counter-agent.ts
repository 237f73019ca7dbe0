import { z } from 'zod';
import type { MessageRequest } from '../../lambdas/records/messages.js';
import { defineAgent, defineTool, type ModelPolicy } from '../../lambdas/define.js';
import type { CompactionOptions } from '../../lambdas/define.js';

/**
 * A cheap scripted agent for long runs: one read tool that echoes a counter, and a policy that
 * asks for `perTurn` calls a turn until it has made `calls` calls. The policy reads only the last
 * message (the newest tool results), so a turn costs the same at step 10 and at step 10,000.
 */
export function counterAgent(options: {
  calls: number;
  perTurn: number;
  contextWindow?: number;
  compaction?: CompactionOptions;
  /** Sees every request the model gets, in order. */
  onRequest?: (request: MessageRequest) => void;
  /** Runs before each tick (a test holds the run at a tick by returning a promise it resolves later). */
  beforeTick?: (n: number) => Promise<void> | void;
}) {
  const tick = defineTool({
    name: 'tick',
    description: 'Counts one step.',
    input: z.object({ n: z.number().int() }),
    effect: 'read',
    execute: async ({ n }) => {
      await options.beforeTick?.(n);
      return { n };
    },
  });
  return defineAgent({
    name: 'counter',
    model: 'sim:savepoint-sim-1',
    system: 'Count.',
    input: z.object({ id: z.string() }),
    prompt: () => `Call tick ${options.calls} times.`,
    tools: [tick],
    // As long as a run may live within the execution timeout (10 days) with a day of approval wait.
    budgets: { maxSteps: 1_000_000, maxTokens: 2_000_000_000, maxDollars: 10_000, maxWallSeconds: 7 * 24 * 3600 },
    ...(options.contextWindow && { contextWindow: options.contextWindow, compaction: options.compaction }),
    dev: {
      policy: (request) => {
        options.onRequest?.(request);
        return isCompactionRequest(request) ? { content: [{ type: 'text', text: 'Summary: counting ticks.' }], stop_reason: 'end_turn' } : nextTurn(request, options);
      },
    },
  });
}

type Turn = ReturnType<ModelPolicy>;

/** The harness's compaction request ends with its instructions. */
export function isCompactionRequest(request: MessageRequest): boolean {
  const last = request.messages.at(-1)!;
  const text = typeof last.content === 'string' ? last.content : last.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  return text.includes('[harness] Context compaction');
}

function nextTurn(request: MessageRequest, options: { calls: number; perTurn: number }): Turn {
  const last = request.messages.at(-1)!;
  let done = 0;
  if (Array.isArray(last.content)) {
    for (const block of last.content) {
      if (block.type === 'tool_result') done = Math.max(done, (JSON.parse(String(block.content)) as { n: number }).n);
    }
  }
  if (done >= options.calls) return { content: [{ type: 'text', text: `Counted ${done}.` }], stop_reason: 'end_turn' };
  const content: Turn['content'] = [];
  for (let n = done + 1; n <= Math.min(done + options.perTurn, options.calls); n++) content.push({ type: 'tool_use', id: `t${n}`, name: 'tick', input: { n } });
  return { content, stop_reason: 'tool_use' };
}
