import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, withDev, type ModelPolicy } from '../../lambdas/index.js';
import { createTestEnvironment, type TestEnvironment } from '../../testing/index.js';

/**
 * `TestEnvironment.replay` (savepoint/testing): a run of the environment replayed on the agent's
 * code, as `savepoint replay` does — identical for code that builds what it sends from the run's
 * input and answers alone, diverged for code that does not (a prompt that counts its calls stands
 * for one built from the time of day or a random id), and on another version of the agent.
 */
const policy: ModelPolicy = (request) => {
  if (!request.messages.some((message) => message.role === 'assistant')) return { content: [{ type: 'tool_use', id: 'c1', name: 'look', input: { key: 'k1' } }], stop_reason: 'tool_use' };
  return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
};

let prompts = 0;
const look = defineTool({ name: 'look', description: 'Looks a key up.', input: z.object({ key: z.string() }).strict(), effect: 'read', execute: async (args) => ({ found: args.key }) });
const steady = withDev(defineAgent({ name: 'kit-replay', model: 'sim:savepoint-sim-1', system: 'Look k1 up.', input: z.object({}).strict(), prompt: () => 'Look k1 up.', tools: [look] }), { policy });
/** The same agent, its prompt numbered by how often it was built: a replay builds it again, and it differs. */
const counting = { ...steady, prompt: () => `Look k1 up (${++prompts}).` };

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

describe('TestEnvironment.replay', () => {
  it("replays a run of the environment identically, with no live call, and names where another version of the agent diverges", async () => {
    env = await createTestEnvironment({ agent: steady });
    const run = await env.run({});
    expect(run.status).toBe('succeeded');
    expect(await env.replay(run.runId)).toMatchObject({ runId: run.runId, identical: true, answered: { turns: 2, toolCalls: 1, approvals: 0 }, live: { model: 0, tools: 0 } });
    const changed = await env.replay(run.runId, { agent: { ...steady, system: 'Look k1 up, twice.' } });
    expect(changed).toMatchObject({ identical: false, divergence: { turn: 1, what: 'model request', why: 'the system prompt changed' } });
  });

  it('names the code that builds a prompt from something else than the run (it would not replay or resume as it ran)', async () => {
    env = await createTestEnvironment({ agent: counting });
    const run = await env.run({});
    expect(run.status).toBe('succeeded');
    const replayed = await env.replay(run.runId);
    expect(replayed.identical).toBe(false);
    expect(replayed.divergence).toMatchObject({ turn: 1, what: 'model request', why: "the run's first message (the agent's prompt for its input) changed" });
    expect(replayed.divergence!.recorded).not.toBe(replayed.divergence!.produced);
  });

  it('rejects, saying why, a run that is not there, an option it does not take, an agent that is none, and any call after close', async () => {
    env = await createTestEnvironment({ agent: steady });
    await expect(env.replay('nope')).rejects.toThrow('runId: no run nope in the ledger');
    await expect(env.replay('nope', { agnet: steady } as never)).rejects.toThrow('replay: agnet: no such option (the options are agent)');
    await expect(env.replay('nope', { agent: { name: 'x' } as never })).rejects.toThrow(/^replay: agent: /);
    await env.close();
    await expect(env.replay('nope')).rejects.toThrow('replay: the test environment is closed');
  });
});
