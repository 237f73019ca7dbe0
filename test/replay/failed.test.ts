import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, TerminalError, withDev, type ModelPolicy } from '../../lambdas/index.js';
import { createTestEnvironment, type TestEnvironment } from '../../testing/index.js';

/**
 * The replay of a run that failed. A failure from outside the harness is answered from the record
 * as a model's answer is: the replay fails where the recorded run failed, and ends failed for the
 * same reason — identical, not "this code calls the model where the recorded run had stopped".
 * Here a model provider down past every retry and recovery (the run given up), and a tool's
 * terminal refusal (recorded as the call's result); the model provider's refusal of a key, through
 * the CLI and Anthropic's SDK: test/cli/model.test.ts; runs given up on the engine's harness while
 * the model or a tool stayed down: test/engine/recovery.test.ts.
 */
/** Looks the invoice up, then pays it, then ends. */
const policy: ModelPolicy = (request) => {
  const turns = request.messages.filter((message) => message.role === 'assistant').length;
  if (turns > 1) return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
  return { content: [{ type: 'tool_use', id: `c${turns}`, name: turns === 0 ? 'look' : 'pay', input: { invoice: 'inv_1' } }], stop_reason: 'tool_use' };
};
const input = z.object({ invoice: z.string() }).strict();
const look = defineTool({ name: 'look', description: 'Looks an invoice up.', input, effect: 'read', execute: async (args) => ({ due: args.invoice }) });
const pays = (execute: () => Promise<unknown>) => defineTool({ name: 'pay', description: 'Pays an invoice.', input, effect: 'write', idempotencyKey: (args) => args.invoice, execute });
const base = { model: 'sim:savepoint-sim-1', system: 'Pay the invoice.', input, prompt: (given: { invoice: string }) => `Look ${given.invoice} up, then pay it.` };

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

describe('replay of a failed run', () => {
  it('fails where the model provider stayed down past every retry and recovery, and is given up for the same reason, with no live call', async () => {
    // The provider answers the first turn, then fails every request (the server's policy throws: a 500).
    const down: ModelPolicy = (request) => {
      if (request.messages.some((message) => message.role === 'assistant')) throw new Error('the provider is down');
      return policy(request);
    };
    const agent = withDev(defineAgent({ ...base, name: 'failed-model', tools: [look, pays(async () => ({ paid: true }))] }), { policy: down });
    env = await createTestEnvironment({ agent });
    const run = await env.run({ invoice: 'inv_1' });
    expect(run.report).toMatchObject({ status: 'failed', stopReason: expect.stringMatching(/^not recovered: 3 recoveries in a row made no progress .*the provider is down/) });
    const replayed = await env.replay(run.runId);
    expect(replayed, JSON.stringify(replayed.divergence)).toMatchObject({ identical: true, answered: { turns: 1, toolCalls: 1 }, live: { model: 0, tools: 0 } });
    // Another version of the agent still diverges where it differs, before the failure.
    expect(await env.replay(run.runId, { agent: { ...agent, system: 'Pay them all.' } })).toMatchObject({ identical: false, divergence: { turn: 1, why: 'the system prompt changed' } });
  });

  it("fails where a tool's terminal refusal failed it (recorded as the call's result), for the same reason", async () => {
    const agent = withDev(defineAgent({ ...base, name: 'failed-tool', tools: [look, pays(async () => Promise.reject(new TerminalError('the bank refused: account closed')))] }), { policy });
    env = await createTestEnvironment({ agent });
    const run = await env.run({ invoice: 'inv_1' });
    expect(run.report).toMatchObject({ status: 'failed', stopReason: 'Agent.Terminal: the bank refused: account closed' });
    const replayed = await env.replay(run.runId);
    expect(replayed, JSON.stringify(replayed.divergence)).toMatchObject({ identical: true, answered: { turns: 2, toolCalls: 2 }, live: { model: 0, tools: 0 } });
    // A version whose payment succeeds where the recorded one was refused cannot be told apart by
    // the record (the result is answered from it); one that no longer pays diverges at its end.
    const paysNothing = withDev(defineAgent({ ...base, name: 'failed-tool', tools: [look] }), { policy });
    expect((await env.replay(run.runId, { agent: paysNothing })).identical).toBe(false);
  });
});
