import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelThrottledError } from '../../lambdas/shared/errors.js';
import { AnthropicModelClient } from '../../lambdas/models/anthropic.js';
import { classifyAnthropicError } from '../../lambdas/models/anthropic-errors.js';
import { ANTHROPIC_VERSION } from '../../sim/wire/anthropic-versions.js';
import { startAnthropicServer } from '../../sim/wire/anthropic-server.js';
import type { WireServer } from '../../sim/wire/http.js';
import type { FaultKind, Policy } from '../../sim/wire/policy.js';
import { firstRequest, runConversation, scriptedPolicy, SYSTEM, TOOLS } from './conversation.js';
import { firstTurnRecorded } from './turn-record.js';

// A current model: one the SDK calls end-of-life makes it print a deprecation warning on every request.
const MODEL = 'claude-sonnet-4-6';
const KEY = 'sk-ant-test';

let server: WireServer;
let client: AnthropicModelClient;

beforeAll(async () => {
  server = await startAnthropicServer({ policy: scriptedPolicy, apiKey: KEY, models: [MODEL] });
  client = new AnthropicModelClient({ apiKey: KEY, baseUrl: server.url });
});
afterAll(() => server.close());

/** A fresh server per test that needs a clean cache or request count. */
async function withServer<T>(run: (server: WireServer, client: AnthropicModelClient) => Promise<T>): Promise<T> {
  const own = await startAnthropicServer({ policy: scriptedPolicy, apiKey: KEY, models: [MODEL] });
  try {
    return await run(own, new AnthropicModelClient({ apiKey: KEY, baseUrl: own.url }));
  } finally {
    await own.close();
  }
}

describe('Anthropic adapter against the strict wire server', () => {
  it('carries a multi-turn tool-use conversation: tool calls, results, stop reasons, usage', async () => {
    await withServer(async (server, client) => {
      const [first, second, third, ...rest] = await runConversation(client, MODEL);
      expect(rest).toEqual([]);
      expect(first?.stop_reason).toBe('tool_use');
      expect(first?.content).toEqual([{ type: 'tool_use', id: 'call_lookup_1', name: 'lookup_order', input: { order_id: 'ord_1' } }]);
      expect(second?.stop_reason).toBe('tool_use');
      expect(second?.content.map((b) => b.type)).toEqual(['text', 'tool_use']);
      expect(third).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'Refunded ord_1: 12.50.' }], model: MODEL });
      expect(server.requestCount()).toBe(3);
    });
  });

  it('records the answer’s id and the model it names in the turn: the dated snapshot an alias answered as, beside the model asked for', async () => {
    const own = await startAnthropicServer({ policy: scriptedPolicy, apiKey: KEY, models: ['claude-haiku-4-5'], snapshots: { 'claude-haiku-4-5': 'claude-haiku-4-5-20251001' } });
    try {
      const turn = await firstTurnRecorded(new AnthropicModelClient({ apiKey: KEY, baseUrl: own.url }), 'anthropic:claude-haiku-4-5');
      expect(turn).toMatchObject({ model: 'anthropic:claude-haiku-4-5', responseId: expect.stringMatching(/^msg_[0-9a-f]{24}$/), responseModel: 'claude-haiku-4-5-20251001', stopReason: 'tool_use' });
    } finally {
      await own.close();
    }
  });

  it('reads the previous turn’s prefix from the cache on the next turn', async () => {
    await withServer(async (_server, client) => {
      const [first, second] = await runConversation(client, MODEL);
      // Turn 1 writes its whole prompt (system + tools + first user turn are over the minimum).
      expect(first?.usage.cache_read_input_tokens).toBe(0);
      expect(first?.usage.cache_creation_input_tokens).toBeGreaterThan(1024);
      // Turn 2 reads exactly what turn 1 wrote and writes only its own new turns.
      expect(second?.usage.cache_read_input_tokens).toBe(first?.usage.cache_creation_input_tokens);
      expect(second?.usage.cache_creation_input_tokens).toBeGreaterThan(0);
      expect(second?.usage.cache_creation_input_tokens).toBeLessThan(200);
    });
  });

  it('puts cache_control on the system prompt, the last tool and the last block of the conversation', async () => {
    await withServer(async (server, client) => {
      await client.createMessage(firstRequest(MODEL));
      const body = server.acceptedBodies()[0] as {
        system: { cache_control?: unknown }[];
        tools: { cache_control?: unknown }[];
        messages: { content: { cache_control?: unknown }[] }[];
      };
      expect(body.system).toEqual([{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }]);
      expect(body.tools.map((t) => t.cache_control)).toEqual([undefined, { type: 'ephemeral' }]);
      expect(body.messages.at(-1)?.content.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
    });
  });

  it('passes the caller’s abort signal through: an aborted call is a transient fault', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(client.createMessage(firstRequest(MODEL), controller.signal)).rejects.toMatchObject({ name: 'Agent.Transient', message: expect.stringMatching(/aborted/) });
  });

  it('sends one request per call: the SDK’s own retries are off', async () => {
    await withServer(async (server, client) => {
      server.failNext(1, { kind: 'overloaded' });
      await expect(client.createMessage(firstRequest(MODEL))).rejects.toThrow(ModelThrottledError);
      expect(server.requestCount()).toBe(1);
    });
  });

  const faults: [FaultKind, string][] = [
    ['rate_limit', 'Agent.ModelThrottled'],
    ['overloaded', 'Agent.ModelThrottled'],
    ['server_error', 'Agent.Transient'],
    ['spend_cap', 'Agent.Terminal'],
    ['auth', 'Agent.Terminal'],
  ];
  it.each(faults)('maps an injected %s fault to %s', async (kind, name) => {
    server.failNext(1, { kind });
    await expect(client.createMessage(firstRequest(MODEL))).rejects.toMatchObject({ name });
  });

  it('carries retry-after on a 429 and names the fix on a spend cap', async () => {
    server.failNext(1, { kind: 'rate_limit', retryAfterSeconds: 17 });
    const throttled = await client.createMessage(firstRequest(MODEL)).catch((e: unknown) => e);
    expect(throttled).toBeInstanceOf(ModelThrottledError);
    expect((throttled as ModelThrottledError).retryAfterSeconds).toBe(17);

    server.failNext(1, { kind: 'spend_cap' });
    await expect(client.createMessage(firstRequest(MODEL))).rejects.toThrow(/credit balance is too low.*\[spend_cap\].*add credits/);
  });

  it('makes no call of an answer cut at max_tokens: its half-written tool_use comes back as text saying so', async () => {
    // What the Messages API answers when max_tokens cuts a tool call: the tool_use with the input written so far.
    const cut: Policy = () => ({
      content: [{ type: 'text', text: 'Refunding it.' }, { type: 'tool_use', id: 'call_refund_1', name: 'issue_refund', input: { order_id: 'ord_1' } }],
      stop_reason: 'max_tokens',
    });
    const own = await startAnthropicServer({ policy: cut, apiKey: KEY, models: [MODEL] });
    try {
      const response = await new AnthropicModelClient({ apiKey: KEY, baseUrl: own.url }).createMessage(firstRequest(MODEL));
      expect(response.stop_reason).toBe('max_tokens');
      expect(response.content).toEqual([{ type: 'text', text: 'Refunding it.' }, { type: 'text', text: expect.stringMatching(/^\(a call of issue_refund, cut off at max_tokens .*: not made\)$/) }]);
    } finally {
      await own.close();
    }
  });

  it('stops at the usage tier’s monthly spend cap (a 429 rate_limit_error) and at a spend limit of the organization’s, never retried', async () => {
    await withServer(async (server, client) => {
      server.failNext(1, { kind: 'spend_cap', spendCap: 'tier' });
      await expect(client.createMessage(firstRequest(MODEL))).rejects.toMatchObject({
        name: 'Agent.Terminal',
        message: expect.stringMatching(/429 enforced_spend_limit_reached: You have reached your API usage limits.*\[spend_cap\].*monthly spend cap/),
      });
      server.failNext(1, { kind: 'spend_cap', spendCap: 'limit' });
      await expect(client.createMessage(firstRequest(MODEL))).rejects.toThrow(/400 invalid_request_error: You have reached your specified API usage limits.*\[spend_cap\].*spend limit/);
      expect(server.requestCount()).toBe(2);
    });
  });

  it('stops at a prompt that, with max_tokens, exceeds the context window, naming it as such (not as a malformed request)', async () => {
    // The system prompt and tools are about 1,500 tokens: within a 2,000-token window, not with 1,024 more out.
    const own = await startAnthropicServer({ policy: scriptedPolicy, apiKey: KEY, models: [MODEL], contextWindow: 2_000 });
    try {
      await expect(new AnthropicModelClient({ apiKey: KEY, baseUrl: own.url }).createMessage(firstRequest(MODEL))).rejects.toMatchObject({
        name: 'Agent.Terminal',
        message: expect.stringMatching(/400 invalid_request_error: input length and `max_tokens` exceed context limit: \d+ \+ 1024 > 2000.*\[context_too_long\]/),
      });
    } finally {
      await own.close();
    }
  });

  it('refuses a wrong key, an unknown model and a bad tool schema as terminal', async () => {
    const wrongKey = new AnthropicModelClient({ apiKey: 'sk-ant-wrong', baseUrl: server.url });
    await expect(wrongKey.createMessage(firstRequest(MODEL))).rejects.toThrow(/401 authentication_error.*ANTHROPIC_API_KEY/);
    await expect(client.createMessage(firstRequest('claude-nonexistent'))).rejects.toThrow(/404 not_found_error.*\[not_found\]/);
    const badSchema = { ...firstRequest(MODEL), tools: [{ ...TOOLS[0]!, input_schema: { type: 'object', properties: { a: { type: 'strng' } } } }] };
    await expect(client.createMessage(badSchema)).rejects.toThrow(/400 invalid_request_error.*input_schema is not valid JSON Schema/);
  });
});

describe('the Anthropic wire server is strict', () => {
  async function post(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown }> {
    const response = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': KEY, 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: await response.json() };
  }
  const base = { model: MODEL, max_tokens: 100 };
  const toolUse = { type: 'tool_use', id: 'toolu_1', name: 'lookup_order', input: { order_id: 'o' } };

  it.each([
    ['no max_tokens', { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, /max_tokens/],
    ['an unknown field', { ...base, messages: [{ role: 'user', content: 'hi' }], temperatur: 1 }, /temperatur/],
    ['roles that do not alternate', { ...base, messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }] }, /roles must alternate/],
    ['a first message from the assistant', { ...base, messages: [{ role: 'assistant', content: 'a' }] }, /roles must alternate/],
    ['a system role in messages', { ...base, messages: [{ role: 'system', content: 'a' }] }, /role/],
    [
      'a tool_result that answers no tool_use',
      { ...base, tools: TOOLS, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'r' }] }] },
      /unexpected tool_use_id/,
    ],
    [
      'a tool_use left unanswered',
      { ...base, tools: TOOLS, messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [toolUse] }, { role: 'user', content: 'b' }] },
      /without tool_result/,
    ],
    [
      'a tool_use of an undeclared tool',
      { ...base, messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: [toolUse] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'r' }] }] },
      /not declared/,
    ],
    ['temperature under API version 2026-10-21', { ...base, messages: [{ role: 'user', content: 'a' }], temperature: 0.5 }, /temperature: not supported/],
    ['a tool schema whose root is not an object', { ...base, tools: [{ name: 't', input_schema: { type: 'string' } }], messages: [{ role: 'user', content: 'a' }] }, /type "object"/],
  ])('answers 400 invalid_request_error to %s', async (_what, body, message) => {
    const { status, json } = await post(body);
    expect(status).toBe(400);
    expect(json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(message) } });
  });

  it('accepts the 2023-06-01 wire of older clients (x-api-key, temperature)', async () => {
    const { status } = await post({ ...base, messages: [{ role: 'user', content: 'hi' }], temperature: 0.5 }, { 'anthropic-version': '2023-06-01' });
    expect(status).toBe(200);
  });

  it('answers 401 without the right x-api-key and 400 without anthropic-version', async () => {
    expect((await post({ ...base, messages: [{ role: 'user', content: 'hi' }] }, { 'x-api-key': 'nope' })).status).toBe(401);
    expect((await post({ ...base, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '' })).status).toBe(400);
  });
});

describe('classifyAnthropicError', () => {
  const NOW = Date.parse('2026-11-01T00:00:00Z');
  const apiError = (status: number, type: string, message: string, headers: Record<string, string> = {}) =>
    APIError.generate(status, { type: 'error', error: { type, message } }, undefined, new Headers(headers));

  it.each<[string, unknown, string, RegExp?]>([
    ['429', apiError(429, 'rate_limit_error', 'slow down'), 'Agent.ModelThrottled'],
    ['529', apiError(529, 'overloaded_error', 'Overloaded'), 'Agent.ModelThrottled'],
    ['500', apiError(500, 'api_error', 'boom'), 'Agent.Transient'],
    ['503', apiError(503, 'api_error', 'unavailable'), 'Agent.Transient'],
    ['408', apiError(408, 'timeout_error', 'timeout'), 'Agent.Transient'],
    ['a timeout', new APIConnectionTimeoutError(), 'Agent.Transient', /timed out/],
    ['a connection error', new APIConnectionError({ message: 'Connection error.', cause: new Error('ECONNREFUSED') }), 'Agent.Transient'],
    ['the caller aborting', new APIUserAbortError(), 'Agent.Transient', /aborted/],
    ['401', apiError(401, 'authentication_error', 'invalid x-api-key'), 'Agent.Terminal', /\[authentication\].*ANTHROPIC_API_KEY/],
    ['402 billing_error', apiError(402, 'billing_error', 'payment required'), 'Agent.Terminal', /\[spend_cap\]/],
    ['403', apiError(403, 'permission_error', 'no access to model'), 'Agent.Terminal', /\[permission\]/],
    ['404', apiError(404, 'not_found_error', 'model: x'), 'Agent.Terminal', /\[not_found\].*model id/],
    ['400 credit balance', apiError(400, 'invalid_request_error', 'Your credit balance is too low to access the Anthropic API.'), 'Agent.Terminal', /\[spend_cap\]/],
    ['400 prompt too long', apiError(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'), 'Agent.Terminal', /\[context_too_long\]/],
    ['413', apiError(413, 'request_too_large', 'Request exceeds the maximum size'), 'Agent.Terminal', /\[context_too_long\]/],
    ['400 other', apiError(400, 'invalid_request_error', 'messages: roles must alternate'), 'Agent.Terminal', /\[invalid_request\]/],
  ])('maps %s to %s', (_what, error, name, message) => {
    const mapped = classifyAnthropicError(error, NOW);
    expect(mapped.name).toBe(name);
    if (message) expect(mapped.message).toMatch(message);
    expect(mapped.cause).toBe(error);
  });

  it('names the endpoint of a connection error, which has no response to say where (no empty status in the message)', () => {
    const mapped = classifyAnthropicError(new APIConnectionError({ message: 'Connection error.' }), NOW, { endpoint: 'http://127.0.0.1:9' });
    expect(mapped.message).toBe('anthropic model call failed: connection error to http://127.0.0.1:9: Connection error.');
  });

  it('reads retry-after as seconds, as an HTTP date, and retry-after-ms', () => {
    const seconds = classifyAnthropicError(apiError(429, 'rate_limit_error', 'x', { 'retry-after': '30' }), NOW) as ModelThrottledError;
    const date = classifyAnthropicError(apiError(429, 'rate_limit_error', 'x', { 'retry-after': new Date(NOW + 90_000).toUTCString() }), NOW) as ModelThrottledError;
    const ms = classifyAnthropicError(apiError(529, 'overloaded_error', 'x', { 'retry-after-ms': '1500' }), NOW) as ModelThrottledError;
    const none = classifyAnthropicError(apiError(429, 'rate_limit_error', 'x'), NOW) as ModelThrottledError;
    expect([seconds.retryAfterSeconds, date.retryAfterSeconds, ms.retryAfterSeconds, none.retryAfterSeconds]).toEqual([30, 90, 2, undefined]);
  });

  it('leaves errors that are not the SDK’s alone', () => {
    const own = new TypeError('bug');
    expect(classifyAnthropicError(own)).toBe(own);
  });
});

/**
 * Issue 20, item 3: a long generation is streamed. The SDK estimates 128,000 output tokens an hour
 * and refuses a non-streaming request it expects to pass 10 minutes ("Streaming is required for
 * operations that may take longer than 10 minutes",
 * https://platform.claude.com/docs/en/cli-sdks-libraries/sdks/typescript#long-requests); streaming
 * is the Messages API's server-sent events (https://docs.anthropic.com/en/docs/build-with-claude/streaming).
 */
describe('Anthropic adapter: long outputs', () => {
  it('streams a call above the SDK\'s non-streaming limit and assembles the same message', async () => {
    await withServer(async (server) => {
      const long = new AnthropicModelClient({ apiKey: KEY, baseUrl: server.url, timeoutMs: 885_000 });
      const short = await long.createMessage({ ...firstRequest(MODEL), max_tokens: 1024 });
      const streamed = await long.createMessage({ ...firstRequest(MODEL), max_tokens: 30_000 });
      const [first, second] = server.acceptedBodies() as { stream?: boolean; max_tokens: number }[];
      expect(first).not.toHaveProperty('stream');
      expect(second).toMatchObject({ stream: true, max_tokens: 30_000 });
      expect(streamed).toMatchObject({ content: short.content, stop_reason: short.stop_reason, model: MODEL, usage: { output_tokens: short.usage.output_tokens } });
      expect(streamed.content).toEqual([{ type: 'tool_use', id: 'call_lookup_1', name: 'lookup_order', input: { order_id: 'ord_1' } }]);
    });
  });

  it('streams text and tool calls alike, and reports the usage of the whole message', async () => {
    await withServer(async (server) => {
      const long = new AnthropicModelClient({ apiKey: KEY, baseUrl: server.url, timeoutMs: 885_000 });
      const turns = await runConversation({ createMessage: (request, signal) => long.createMessage({ ...request, max_tokens: 25_000 }, signal) }, MODEL);
      expect(turns.map((turn) => turn.stop_reason)).toEqual(['tool_use', 'tool_use', 'end_turn']);
      expect(turns[1]!.content.map((block) => block.type)).toEqual(['text', 'tool_use']);
      expect(turns[2]!.content).toEqual([{ type: 'text', text: 'Refunded ord_1: 12.50.' }]);
      expect(turns[1]!.usage.cache_read_input_tokens).toBeGreaterThan(1024);
      expect((server.acceptedBodies() as { stream?: boolean }[]).every((body) => body.stream === true)).toBe(true);
    });
  });
});
