import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, type ModelPolicy } from '../../lambdas/index.js';
import { unparsedArguments } from '../../lambdas/records/messages.js';
import { assertRunsLocally } from '../../local/runtime/agents.js';
import { startAnthropicServer } from '../../sim/wire/anthropic-server.js';
import { startOpenAIServer } from '../../sim/wire/openai-server.js';
import type { WireServer } from '../../sim/wire/http.js';
import { createTestEnvironment, type TestEnvironment } from '../../testing/index.js';

/**
 * An agent of a user's on a provider's model (no dev module: a real model answers it), tested with
 * savepoint/testing against the strict local OpenAI server, as docs/model-providers.md says to.
 */
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks an order up.',
  input: z.object({ id: z.string().min(1) }).strict(),
  effect: 'read',
  execute: async (args) => ({ id: args.id, status: 'paid' }),
});
const agent = defineAgent({
  name: 'provider-agent',
  model: 'openai:gpt-5-mini',
  system: 'Look the order up.',
  input: z.object({ id: z.string() }).strict(),
  prompt: (input) => `Look up ${input.id}.`,
  tools: [lookup],
  budgets: { maxSteps: 30 },
});

/** What the model was answered, turn by turn: the contents of its tool results. */
let answered: string[][] = [];

/** The model's answers: `calls` (each a tool call's input) for its first turns, then a final text. */
function model(calls: Record<string, unknown>[]): ModelPolicy {
  return (request) => {
    const last = request.messages.at(-1)!;
    if (Array.isArray(last.content)) answered.push(last.content.flatMap((block) => (block.type === 'tool_result' ? [block.content] : [])));
    const turns = request.messages.filter((message) => message.role === 'assistant').length;
    const input = calls[turns];
    if (!input) return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
    return { content: [{ type: 'tool_use', id: `call_${turns + 1}`, name: 'lookup', input }], stop_reason: 'tool_use' };
  };
}

const KEY = 'sk-provider-agent';
let env: TestEnvironment | undefined;
let server: WireServer | undefined;
const saved = { key: process.env['OPENAI_API_KEY'], url: process.env['OPENAI_BASE_URL'], anthropicKey: process.env['ANTHROPIC_API_KEY'], anthropicUrl: process.env['ANTHROPIC_BASE_URL'] };
afterEach(async () => {
  await env?.close();
  await server?.close();
  env = server = undefined;
  answered = [];
  for (const [name, value] of [['OPENAI_API_KEY', saved.key], ['OPENAI_BASE_URL', saved.url], ['ANTHROPIC_API_KEY', saved.anthropicKey], ['ANTHROPIC_BASE_URL', saved.anthropicUrl]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** A test environment of the agent, its model served by the strict OpenAI server answering with `policy`. */
async function onOpenAI(policy: ModelPolicy): Promise<{ env: TestEnvironment; server: WireServer }> {
  server = await startOpenAIServer({ policy, apiKey: KEY, models: ['gpt-5-mini'] });
  process.env['OPENAI_API_KEY'] = KEY;
  process.env['OPENAI_BASE_URL'] = `${server.url}/v1`;
  env = await createTestEnvironment({ agent });
  return { env, server };
}

/**
 * A test environment of the agent on Anthropic's strict server answering with `policy`, its lookup
 * noting each id it was called with (`looked`).
 */
async function onAnthropic(policy: ModelPolicy): Promise<{ env: TestEnvironment; server: WireServer; looked: string[] }> {
  server = await startAnthropicServer({ policy, apiKey: KEY, models: ['claude-sonnet-4-6'] });
  process.env['ANTHROPIC_API_KEY'] = KEY;
  process.env['ANTHROPIC_BASE_URL'] = server.url;
  const looked: string[] = [];
  const tool = defineTool({ ...lookup, execute: async (args) => (looked.push(args.id), { id: args.id, status: 'paid' }) });
  env = await createTestEnvironment({ agent: { ...agent, model: 'anthropic:claude-sonnet-4-6', tools: [tool] } });
  return { env, server, looked };
}

describe('an agent on a provider model, without a dev module', () => {
  it('runs in a test environment against the local wire server', async () => {
    const { env } = await onOpenAI(model([{ id: 'o-1' }]));
    const run = await env.run({ id: 'o-1' });
    expect(run.status).toBe('succeeded');
    expect(run.report.tools['lookup']).toMatchObject({ calls: 1, ok: 1 });
  });

  it('is refused only when the model that answers is the simulated one, which has no script', () => {
    expect(() => assertRunsLocally(agent)).not.toThrow();
    expect(() => assertRunsLocally(agent, { model: 'sim:savepoint-sim-1' })).toThrow(/agent provider-agent has no scripted model \(dev\.policy\)/);
    expect(() => assertRunsLocally({ ...agent, model: 'sim:savepoint-sim-1' })).toThrow(/no scripted model/);
    expect(() => assertRunsLocally({ ...agent, model: 'sim:savepoint-sim-1' }, { model: 'openai:gpt-5-mini' })).not.toThrow();
  });
});

describe('an answer cut off at max_tokens in the middle of a tool call', () => {
  it('makes no call of it, tells the model, and the run goes on to the complete call', async () => {
    // The Messages API's answer when max_tokens cuts a call: the tool_use with the input written so
    // far — here a string cut short, which the tool's schema accepts.
    const policy: ModelPolicy = (request) => {
      const turns = request.messages.filter((message) => message.role === 'assistant').length;
      if (turns === 0) return { content: [{ type: 'tool_use', id: 'call_1', name: 'lookup', input: { id: 'o-' } }], stop_reason: 'max_tokens' };
      if (turns === 1) return { content: [{ type: 'tool_use', id: 'call_2', name: 'lookup', input: { id: 'o-12' } }], stop_reason: 'tool_use' };
      return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
    };
    const { env, server, looked } = await onAnthropic(policy);
    const run = await env.run({ id: 'o-12' });
    expect(run.status).toBe('succeeded');
    expect(looked).toEqual(['o-12']);
    // The model was asked again with its cut turn as text that says the call was not made.
    const second = server.acceptedBodies()[1] as { messages: { role: string; content: { type: string; text?: string }[] }[] };
    expect(second.messages[1]).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: expect.stringMatching(/^\(a call of lookup, cut off at max_tokens/) }] });
  });
});

describe('tool arguments a model writes that are not a JSON object', () => {
  it('are answered to the model as its mistake, recorded, and the run goes on', async () => {
    const { env } = await onOpenAI(model([unparsedArguments('{"id": "o-1"'), { id: 'o-1' }]));
    const run = await env.run({ id: 'o-1' });
    expect(run.status).toBe('succeeded');
    expect(answered[1]).toHaveLength(1);
    expect(JSON.parse(answered[1]![0]!.replace(/^ERROR: /, ''))).toEqual({
      error: 'invalid_arguments',
      message: `the arguments of lookup are not a JSON object: ${JSON.stringify('{"id": "o-1"')}; write them as one JSON object of the tool's input schema`,
    });
    expect(run.report.tools['lookup']).toMatchObject({ calls: 2, ok: 1, error: 1 });
  });

  it('written again and again, are stopped by the loop detector', async () => {
    const { env } = await onOpenAI(model(Array.from({ length: 30 }, () => unparsedArguments('id=o-1'))));
    const run = await env.run({ id: 'o-1' });
    expect(run.status).not.toBe('failed');
    expect(run.report.stopReason).toMatch(/^loop detected: lookup /);
  });
});

describe('an empty answer after tool results (end_turn, nothing said or called)', () => {
  /** Anthropic's strict server answering: a call, then `empties` empty answers, then a call and "done". */
  const answering = (empties: number): ModelPolicy => (request) => {
    const asked = server!.acceptedBodies().length;
    if (asked === 0) return { content: [{ type: 'tool_use', id: 'call_1', name: 'lookup', input: { id: 'o-1' } }], stop_reason: 'tool_use' };
    if (asked <= empties) return { content: [], stop_reason: 'end_turn' };
    const calls = request.messages.filter((message) => message.role === 'assistant').length;
    if (calls === 1) return { content: [{ type: 'tool_use', id: 'call_2', name: 'lookup', input: { id: 'o-2' } }], stop_reason: 'tool_use' };
    return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
  };

  it('does not end the run: the model is asked again once, told its answer was empty, and the run goes on', async () => {
    const { env, server, looked } = await onAnthropic(answering(1));
    const run = await env.run({ id: 'o-1' });
    expect(run.status).toBe('succeeded');
    expect(looked).toEqual(['o-1', 'o-2']);
    // Asked again with no empty assistant message (the API refuses one), the note in the user message of the results.
    const again = server.acceptedBodies()[2] as { messages: { role: string; content: { type: string; text?: string }[] }[] };
    expect(again.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(again.messages[2]!.content.at(-1)).toMatchObject({ type: 'text', text: expect.stringContaining('[harness] Your last answer was empty.') });
  });

  it('ends the run on a second empty answer in a row, as the model insists', async () => {
    const { env, server, looked } = await onAnthropic(answering(2));
    const run = await env.run({ id: 'o-1' });
    expect(run.status).toBe('succeeded');
    expect(looked).toEqual(['o-1']);
    expect(server.acceptedBodies()).toHaveLength(3);
  });
});
