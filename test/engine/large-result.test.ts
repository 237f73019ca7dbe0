import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, withDev, type ModelPolicy } from '../../lambdas/index.js';
import { replayRun } from '../../local/replay/index.js';
import { createTestEnvironment, type TestEnvironment } from '../../testing/index.js';

/**
 * A tool that declares no `maxResultTokens` and answers far more than the run can carry (200 KB
 * against a 100,000-token budget): the run goes on. A read's result is answered to the model as an
 * error naming `maxResultTokens`; a write's (its effect happened) is cut to what fits. Before, the
 * next model call's reservation did not fit and the whole run stopped on its token budget.
 */
const HUGE = 'r'.repeat(200_000);
let read: string[] = [];

const policy: ModelPolicy = (request) => {
  const turns = request.messages.filter((message) => message.role === 'assistant').length;
  if (turns === 0) return { content: [{ type: 'tool_use', id: 'd1', name: 'dump', input: {} }, { type: 'tool_use', id: 'w1', name: 'export', input: {} }], stop_reason: 'tool_use' };
  const last = request.messages.at(-1)!;
  read = Array.isArray(last.content) ? last.content.flatMap((block) => (block.type === 'tool_result' ? [String(block.content)] : [])) : [];
  return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
};

const agent = defineAgent({
  name: 'large-result',
  model: 'sim:savepoint-sim-1',
  system: 'Read the dump.',
  input: z.object({}).strict(),
  prompt: () => 'Dump everything and export it.',
  budgets: { maxTokens: 100_000 },
  tools: [
    defineTool({ name: 'dump', description: 'Reads everything.', input: z.object({}).strict(), effect: 'read', execute: async () => ({ rows: HUGE }) }),
    defineTool({ name: 'export', description: 'Exports everything.', input: z.object({}).strict(), effect: 'write', idempotencyKeys: true, execute: async () => ({ exported: HUGE }) }),
  ],
});

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
  read = [];
});

describe('a tool result larger than the run can carry', () => {
  it('is answered to the model (a read as an error naming maxResultTokens, a write cut), and the run goes on to succeed', async () => {
    env = await createTestEnvironment({ agent: withDev(agent, { policy }) });
    const run = await env.run({});
    expect(run.report.stopReason).toBe('done');
    expect(run.status).toBe('succeeded');
    expect(read).toHaveLength(2);
    expect(JSON.parse(read[0]!)).toEqual({
      error: 'result_too_large',
      message: expect.stringMatching(/^the result of dump is 200\d{3} bytes, more than the next model call could carry in what is left of this run's token budget \(9\d{4} of its maxTokens, 100000\): .*maxResultTokens/),
    });
    const cut = JSON.parse(read[1]!) as { truncated: boolean; bytes: number; head: string };
    expect(cut).toMatchObject({ truncated: true, bytes: expect.any(Number) });
    expect(read[1]!.length).toBeLessThan(100_000);

    // Replayed on the same code, it comes out the same.
    const replayed = await replayRun({ agent: withDev(agent, { policy }), source: env.ledger, runId: run.runId });
    expect(replayed.divergence, JSON.stringify(replayed.divergence)).toBeUndefined();
  }, 60_000);
});
