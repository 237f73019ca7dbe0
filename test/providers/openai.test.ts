import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletion } from 'openai/resources/chat/completions/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelThrottledError } from '../../lambdas/shared/errors.js';
import { fromChatCompletion, OpenAIModelClient, toOpenAIParams } from '../../lambdas/models/openai.js';
import { unparsedArguments } from '../../lambdas/records/messages.js';
import { classifyOpenAIError } from '../../lambdas/models/openai-errors.js';
import type { WireServer } from '../../sim/wire/http.js';
import { startOpenAIServer } from '../../sim/wire/openai-server.js';
import type { FaultKind } from '../../sim/wire/policy.js';
import { firstRequest, runConversation, scriptedPolicy, TOOLS } from './conversation.js';
import { firstTurnRecorded } from './turn-record.js';

const MODEL = 'gpt-5-mini';
const KEY = 'sk-proj-test';

let server: WireServer;
let client: OpenAIModelClient;

beforeAll(async () => {
  server = await startOpenAIServer({ policy: scriptedPolicy, apiKey: KEY, models: [MODEL] });
  client = new OpenAIModelClient({ apiKey: KEY, baseUrl: `${server.url}/v1` });
});
afterAll(() => server.close());

async function withServer<T>(run: (server: WireServer, client: OpenAIModelClient) => Promise<T>): Promise<T> {
  const own = await startOpenAIServer({ policy: scriptedPolicy, apiKey: KEY, models: [MODEL] });
  try {
    return await run(own, new OpenAIModelClient({ apiKey: KEY, baseUrl: `${own.url}/v1` }));
  } finally {
    await own.close();
  }
}

describe('OpenAI adapter against the strict wire server', () => {
  it('carries a multi-turn tool-use conversation: tool calls, tool messages, finish reasons, usage', async () => {
    await withServer(async (server, client) => {
      const [first, second, third, ...rest] = await runConversation(client, MODEL);
      expect(rest).toEqual([]);
      expect(first).toMatchObject({ stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'call_lookup_1', name: 'lookup_order', input: { order_id: 'ord_1' } }] });
      expect(second?.content).toEqual([
        { type: 'text', text: 'The order was paid; refunding it.' },
        { type: 'tool_use', id: 'call_refund_1', name: 'issue_refund', input: { order_id: 'ord_1', amount_cents: 1250 } },
      ]);
      expect(third).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'Refunded ord_1: 12.50.' }] });
      expect(server.requestCount()).toBe(3);

      // The refund's failure reached the model as a tool message, flagged in its content.
      const last = server.acceptedBodies()[2] as { messages: { role: string; content?: unknown; tool_call_id?: string }[] };
      expect(last.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool']);
      expect(last.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_refund_1', content: 'ERROR: payments provider refused: duplicate' });
    });
  });

  it('records the completion’s id and the model it names in the turn: the dated snapshot an alias answered as, beside the model asked for', async () => {
    const own = await startOpenAIServer({ policy: scriptedPolicy, apiKey: KEY, models: [MODEL], snapshots: { [MODEL]: 'gpt-5-mini-2025-08-07' } });
    try {
      const turn = await firstTurnRecorded(new OpenAIModelClient({ apiKey: KEY, baseUrl: `${own.url}/v1` }), `openai:${MODEL}`);
      expect(turn).toMatchObject({ model: `openai:${MODEL}`, responseId: expect.stringMatching(/^chatcmpl-[0-9a-f]{24}$/), responseModel: 'gpt-5-mini-2025-08-07', stopReason: 'tool_use' });
    } finally {
      await own.close();
    }
  });

  it('reports the automatically cached prefix on the next turn, input excluding it', async () => {
    await withServer(async (_server, client) => {
      const [first, second] = await runConversation(client, MODEL);
      expect(first?.usage.cache_read_input_tokens).toBe(0);
      const cached = second?.usage.cache_read_input_tokens ?? 0;
      expect(cached).toBeGreaterThanOrEqual(1024);
      expect((cached - 1024) % 128).toBe(0);
      // Everything turn 1 sent is a prefix of turn 2: all but the last partial 128 tokens are cached.
      expect(cached).toBeGreaterThan((first?.usage.input_tokens ?? 0) - 128);
      expect(second?.usage.cache_creation_input_tokens).toBe(0);
    });
  });

  it('passes the caller’s abort signal through: an aborted call is a transient fault', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(client.createMessage(firstRequest(MODEL), controller.signal)).rejects.toMatchObject({ name: 'Agent.Transient', message: expect.stringMatching(/aborted/) });
  });

  it('sends one request per call: the SDK’s own retries are off', async () => {
    await withServer(async (server, client) => {
      server.failNext(1, { kind: 'server_error' });
      await expect(client.createMessage(firstRequest(MODEL))).rejects.toMatchObject({ name: 'Agent.Transient' });
      expect(server.requestCount()).toBe(1);
    });
  });

  const faults: [FaultKind, string, RegExp][] = [
    ['rate_limit', 'Agent.ModelThrottled', /429 rate_limit_exceeded/],
    ['overloaded', 'Agent.ModelThrottled', /503/],
    ['server_error', 'Agent.Transient', /500/],
    ['spend_cap', 'Agent.Terminal', /429 insufficient_quota.*\[spend_cap\]/],
    ['auth', 'Agent.Terminal', /401 invalid_api_key.*OPENAI_API_KEY/],
  ];
  it.each(faults)('maps an injected %s fault to %s', async (kind, name, message) => {
    server.failNext(1, { kind });
    const error = await client.createMessage(firstRequest(MODEL)).catch((e: unknown) => e);
    expect(error).toMatchObject({ name, message: expect.stringMatching(message) });
  });

  it('carries retry-after on a 429', async () => {
    server.failNext(1, { kind: 'rate_limit', retryAfterSeconds: 20 });
    const error = await client.createMessage(firstRequest(MODEL)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelThrottledError);
    expect((error as ModelThrottledError).retryAfterSeconds).toBe(20);
  });

  it('refuses an unknown model and a bad tool schema as terminal', async () => {
    await expect(client.createMessage(firstRequest('gpt-nonexistent'))).rejects.toThrow(/404 model_not_found.*\[not_found\]/);
    const badSchema = { ...firstRequest(MODEL), tools: [{ ...TOOLS[0]!, input_schema: { type: 'array' } }] };
    await expect(client.createMessage(badSchema)).rejects.toThrow(/400 invalid_function_parameters.*type "object"/);
  });
});

describe('the OpenAI wire server is strict', () => {
  async function post(body: unknown, authorization = `Bearer ${KEY}`): Promise<{ status: number; json: unknown }> {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: await response.json() };
  }
  const base = { model: MODEL, max_completion_tokens: 100 };
  const call = { id: 'call_1', type: 'function', function: { name: 'lookup_order', arguments: '{"order_id":"o"}' } };
  const tools = toOpenAIParams(firstRequest(MODEL)).tools;

  it.each([
    ['no token limit', { model: MODEL, messages: [{ role: 'user', content: 'hi' }] }, /token limit/],
    ['an unknown role', { ...base, messages: [{ role: 'robot', content: 'hi' }] }, /role/],
    ['an unknown field', { ...base, messages: [{ role: 'user', content: 'hi' }], temprature: 1 }, /temprature/],
    ['a tool message with no call before it', { ...base, messages: [{ role: 'user', content: 'a' }, { role: 'tool', tool_call_id: 'call_1', content: 'r' }] }, /must be a response to a preceeding message with 'tool_calls'/],
    [
      'a tool message answering another call',
      { ...base, tools, messages: [{ role: 'user', content: 'a' }, { role: 'assistant', tool_calls: [call] }, { role: 'tool', tool_call_id: 'call_2', content: 'r' }] },
      /must be a response/,
    ],
    ['a call left unanswered', { ...base, tools, messages: [{ role: 'user', content: 'a' }, { role: 'assistant', tool_calls: [call] }, { role: 'user', content: 'b' }] }, /did not have response messages: call_1/],
    ['a tool schema that is not JSON Schema', { ...base, tools: [{ type: 'function', function: { name: 't', parameters: { type: 'object', required: 'x' } } }], messages: [{ role: 'user', content: 'a' }] }, /not valid JSON Schema/],
  ])('answers 400 to %s', async (_what, body, message) => {
    const { status, json } = await post(body);
    expect(status).toBe(400);
    expect(json).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringMatching(message) } });
  });

  it('answers 401 without the right bearer key', async () => {
    const { status, json } = await post({ ...base, messages: [{ role: 'user', content: 'hi' }] }, 'Bearer sk-wrong');
    expect(status).toBe(401);
    expect(json).toMatchObject({ error: { code: 'invalid_api_key' } });
  });
});

describe('fromChatCompletion treats the model’s output as outside input', () => {
  const completion = (message: Record<string, unknown>, finish_reason = 'tool_calls'): ChatCompletion =>
    ({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 0,
      model: MODEL,
      choices: [{ index: 0, logprobs: null, finish_reason, message: { role: 'assistant', content: null, refusal: null, ...message } }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    }) as ChatCompletion;
  const call = (args: string) => ({ tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_order', arguments: args } }] });

  it('keeps tool arguments that are not JSON, or not an object, as the model wrote them: its mistake, answered to it', () => {
    for (const written of ['{"order_id": "o"', '[1, 2]']) {
      expect(fromChatCompletion(completion(call(written))).content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'lookup_order', input: unparsedArguments(written) }]);
    }
  });

  it('makes no call of a cut answer, says max_tokens, and tells the model its call was cut (never an empty turn)', () => {
    const response = fromChatCompletion(completion({ content: 'Looking', ...call('{"order_') }, 'length'));
    expect(response).toMatchObject({ stop_reason: 'max_tokens', content: [{ type: 'text', text: 'Looking' }, { type: 'text', text: expect.stringMatching(/^\(a call of lookup_order, cut off at max_tokens/) }] });
    expect(fromChatCompletion(completion(call('{"order_id": "o'), 'length')).content).toEqual([{ type: 'text', text: expect.stringMatching(/^\(a call of lookup_order, cut off/) }]);
  });

  it('stops the run on a refusal or a content filter', () => {
    expect(() => fromChatCompletion(completion({ refusal: 'I can’t help with that.' }, 'stop'))).toThrow(expect.objectContaining({ name: 'Agent.Terminal' }));
    expect(() => fromChatCompletion(completion({ content: 'x' }, 'content_filter'))).toThrow(expect.objectContaining({ name: 'Agent.Terminal' }));
  });
});

describe('classifyOpenAIError', () => {
  const NOW = Date.parse('2026-11-01T00:00:00Z');
  const apiError = (status: number, type: string, code: string | null, message: string, headers: Record<string, string> = {}) =>
    APIError.generate(status, { error: { message, type, param: null, code } }, undefined, new Headers(headers));

  it.each<[string, unknown, string, RegExp?]>([
    ['429 rate_limit_exceeded', apiError(429, 'requests', 'rate_limit_exceeded', 'slow down'), 'Agent.ModelThrottled'],
    ['429 insufficient_quota', apiError(429, 'insufficient_quota', 'insufficient_quota', 'You exceeded your current quota'), 'Agent.Terminal', /\[spend_cap\]/],
    ['503', apiError(503, 'server_error', null, 'The engine is currently overloaded'), 'Agent.ModelThrottled'],
    ['500', apiError(500, 'server_error', null, 'boom'), 'Agent.Transient'],
    ['502', apiError(502, 'server_error', null, 'bad gateway'), 'Agent.Transient'],
    ['a timeout', new APIConnectionTimeoutError(), 'Agent.Transient', /timed out/],
    ['a connection error', new APIConnectionError({ message: 'Connection error.' }), 'Agent.Transient'],
    ['the caller aborting', new APIUserAbortError(), 'Agent.Transient'],
    ['401', apiError(401, 'invalid_request_error', 'invalid_api_key', 'Incorrect API key provided'), 'Agent.Terminal', /\[authentication\]/],
    ['403', apiError(403, 'invalid_request_error', 'unsupported_country_region_territory', 'Country not supported'), 'Agent.Terminal', /\[permission\]/],
    ['404', apiError(404, 'invalid_request_error', 'model_not_found', 'The model does not exist'), 'Agent.Terminal', /\[not_found\]/],
    ['400 context_length_exceeded', apiError(400, 'invalid_request_error', 'context_length_exceeded', "This model's maximum context length is 128000 tokens."), 'Agent.Terminal', /\[context_too_long\]/],
    ['400 other', apiError(400, 'invalid_request_error', null, "Invalid parameter: messages with role 'tool' must be a response"), 'Agent.Terminal', /\[invalid_request\]/],
  ])('maps %s to %s', (_what, error, name, message) => {
    const mapped = classifyOpenAIError(error, NOW);
    expect(mapped.name).toBe(name);
    if (message) expect(mapped.message).toMatch(message);
  });

  it('reads retry-after-ms and retry-after', () => {
    const ms = classifyOpenAIError(apiError(429, 'requests', 'rate_limit_exceeded', 'x', { 'retry-after-ms': '2500' }), NOW) as ModelThrottledError;
    const s = classifyOpenAIError(apiError(429, 'requests', 'rate_limit_exceeded', 'x', { 'retry-after': '7' }), NOW) as ModelThrottledError;
    expect([ms.retryAfterSeconds, s.retryAfterSeconds]).toEqual([3, 7]);
  });
});
