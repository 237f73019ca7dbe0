import {
  BedrockRuntimeClient,
  BedrockRuntimeServiceException,
  ConverseCommand,
  type ConverseCommandInput,
  type ServiceInputTypes,
  type ServiceOutputTypes,
} from '@aws-sdk/client-bedrock-runtime';
import type { BuildHandler, BuildHandlerArguments, BuildMiddleware } from '@smithy/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelThrottledError } from '../../lambdas/shared/errors.js';
import { BedrockModelClient, toConverseInput } from '../../lambdas/models/bedrock.js';
import { classifyBedrockError } from '../../lambdas/models/bedrock-errors.js';
import { startBedrockServer } from '../../sim/wire/bedrock-server.js';
import type { WireServer } from '../../sim/wire/http.js';
import type { FaultKind, Policy } from '../../sim/wire/policy.js';
import { firstRequest, runConversation, scriptedPolicy, TOOLS } from './conversation.js';
import { firstTurnRecorded } from './turn-record.js';

const MODEL = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';
const REGION = 'eu-west-1';
const CREDENTIALS = { accessKeyId: 'AKIDSAVEPOINTTEST', secretAccessKey: 'test-secret-key' };

let server: WireServer;
let client: BedrockModelClient;

const start = () => startBedrockServer({ policy: scriptedPolicy, region: REGION, credentials: { [CREDENTIALS.accessKeyId]: CREDENTIALS.secretAccessKey }, models: [MODEL] });
const adapter = (url: string, overrides: Partial<ConstructorParameters<typeof BedrockModelClient>[0]> = {}) =>
  new BedrockModelClient({ region: REGION, endpoint: url, credentials: CREDENTIALS, ...overrides });

beforeAll(async () => {
  server = await start();
  client = adapter(server.url);
});
afterAll(() => server.close());

async function withServer<T>(run: (server: WireServer, client: BedrockModelClient) => Promise<T>): Promise<T> {
  const own = await start();
  try {
    return await run(own, adapter(own.url));
  } finally {
    await own.close();
  }
}

describe('Bedrock adapter against the strict Converse server', () => {
  it('carries a multi-turn tool-use conversation: toolUse, toolResult (error status), stop reasons, usage', async () => {
    await withServer(async (server, client) => {
      const [first, second, third, ...rest] = await runConversation(client, MODEL);
      expect(rest).toEqual([]);
      expect(first).toMatchObject({ stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'call_lookup_1', name: 'lookup_order', input: { order_id: 'ord_1' } }] });
      expect(second?.content.map((b) => b.type)).toEqual(['text', 'tool_use']);
      expect(third).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'Refunded ord_1: 12.50.' }] });
      expect(server.requestCount()).toBe(3);

      const last = server.acceptedBodies()[2] as { messages: { content: Record<string, unknown>[] }[] };
      expect(last.messages.at(-1)?.content).toEqual([
        { toolResult: { toolUseId: 'call_refund_1', content: [{ text: 'payments provider refused: duplicate' }], status: 'error' } },
        { cachePoint: { type: 'default' } },
      ]);
    });
  });

  it('records no response id and no answering model in the turn: Converse names neither, and none is made up', async () => {
    await withServer(async (_server, client) => {
      const [answer] = await runConversation(client, MODEL, 1);
      expect(answer).not.toHaveProperty('id');
      expect(answer).not.toHaveProperty('model');
      const turn = await firstTurnRecorded(client, `bedrock:${MODEL}`);
      expect(turn).toMatchObject({ model: `bedrock:${MODEL}`, stopReason: 'tool_use' });
      expect(turn).not.toHaveProperty('responseId');
      expect(turn).not.toHaveProperty('responseModel');
    });
  });

  it('reads the previous turn’s prefix from the cache on the next turn', async () => {
    await withServer(async (_server, client) => {
      const [first, second] = await runConversation(client, MODEL);
      expect(first?.usage.cache_read_input_tokens).toBe(0);
      expect(first?.usage.cache_creation_input_tokens).toBeGreaterThan(1024);
      expect(second?.usage.cache_read_input_tokens).toBe(first?.usage.cache_creation_input_tokens);
      expect(second?.usage.cache_creation_input_tokens).toBeLessThan(200);
    });
  });

  it('puts cachePoint blocks after the system prompt, the tools and the conversation', () => {
    const input = toConverseInput(firstRequest(MODEL));
    expect(input.system?.at(-1)).toEqual({ cachePoint: { type: 'default' } });
    expect(input.toolConfig?.tools?.at(-1)).toEqual({ cachePoint: { type: 'default' } });
    expect(input.messages?.at(-1)?.content?.at(-1)).toEqual({ cachePoint: { type: 'default' } });
    expect(JSON.stringify(toConverseInput(firstRequest(MODEL), false))).not.toContain('cachePoint');
  });

  it('passes the caller’s abort signal through: an aborted call is a transient fault', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(client.createMessage(firstRequest(MODEL), controller.signal)).rejects.toMatchObject({ name: 'Agent.Transient', message: expect.stringMatching(/aborted/) });
  });

  it('sends one request per call: the SDK’s own retries are off', async () => {
    await withServer(async (server, client) => {
      server.failNext(1, { kind: 'rate_limit' });
      await expect(client.createMessage(firstRequest(MODEL))).rejects.toThrow(ModelThrottledError);
      expect(server.requestCount()).toBe(1);
    });
  });

  const faults: [FaultKind, string, RegExp][] = [
    ['rate_limit', 'Agent.ModelThrottled', /429 ThrottlingException/],
    ['overloaded', 'Agent.ModelThrottled', /503 ServiceUnavailableException/],
    ['server_error', 'Agent.Transient', /500 InternalServerException/],
    ['spend_cap', 'Agent.Terminal', /INVALID_PAYMENT_INSTRUMENT.*\[spend_cap\]/],
    ['auth', 'Agent.Terminal', /UnrecognizedClientException.*\[authentication\]/],
  ];
  it.each(faults)('maps an injected %s fault to %s', async (kind, name, message) => {
    server.failNext(1, { kind });
    const error = await client.createMessage(firstRequest(MODEL)).catch((e: unknown) => e);
    expect(error).toMatchObject({ name, message: expect.stringMatching(message) });
  });

  it('carries retry-after on a throttle', async () => {
    server.failNext(1, { kind: 'rate_limit', retryAfterSeconds: 9 });
    const error = await client.createMessage(firstRequest(MODEL)).catch((e: unknown) => e);
    expect((error as ModelThrottledError).retryAfterSeconds).toBe(9);
  });

  it('makes no call of an answer cut at max_tokens: its half-written toolUse comes back as text saying so', async () => {
    const cut: Policy = () => ({ content: [{ type: 'tool_use', id: 'call_refund_1', name: 'issue_refund', input: { order_id: 'ord_1' } }], stop_reason: 'max_tokens' });
    const own = await startBedrockServer({ policy: cut, region: REGION, credentials: { [CREDENTIALS.accessKeyId]: CREDENTIALS.secretAccessKey }, models: [MODEL] });
    try {
      const response = await adapter(own.url).createMessage(firstRequest(MODEL));
      expect(response.stop_reason).toBe('max_tokens');
      expect(response.content).toEqual([{ type: 'text', text: expect.stringMatching(/^\(a call of issue_refund, cut off at max_tokens .*: not made\)$/) }]);
    } finally {
      await own.close();
    }
  });

  it('refuses a bad signature, a wrong region, an unknown key and an unknown model as terminal', async () => {
    const cases: [BedrockModelClient, RegExp][] = [
      [adapter(server.url, { credentials: { ...CREDENTIALS, secretAccessKey: 'wrong' } }), /403 InvalidSignatureException.*signature we calculated/],
      [adapter(server.url, { region: 'us-west-2' }), /403 InvalidSignatureException.*region/],
      [adapter(server.url, { credentials: { accessKeyId: 'AKIDUNKNOWN', secretAccessKey: 'x' } }), /403 UnrecognizedClientException/],
    ];
    for (const [wrong, message] of cases) await expect(wrong.createMessage(firstRequest(MODEL))).rejects.toThrow(message);
    await expect(client.createMessage(firstRequest('anthropic.nonexistent-v1:0'))).rejects.toThrow(/ValidationException.*\[not_found\]/);
  });
});

describe('the Bedrock wire server is strict', () => {
  /** Malformed Converse input sent through the real SDK client (signed, as the SDK sends it). */
  async function send(input: Record<string, unknown>): Promise<unknown> {
    const raw = new BedrockRuntimeClient({ region: REGION, endpoint: server.url, credentials: CREDENTIALS, maxAttempts: 1 });
    try {
      return await raw.send(new ConverseCommand({ modelId: MODEL, ...input } as ConverseCommandInput)).catch((e: unknown) => e);
    } finally {
      raw.destroy();
    }
  }
  const config = { inferenceConfig: { maxTokens: 50 } };
  const tools = toConverseInput(firstRequest(MODEL)).toolConfig;
  const toolUse = { toolUse: { toolUseId: 'tu_1', name: 'lookup_order', input: { order_id: 'o' } } };

  it.each([
    ['no maxTokens', { messages: [{ role: 'user', content: [{ text: 'hi' }] }] }, /inferenceConfig/],
    ['an unknown role', { ...config, messages: [{ role: 'system', content: [{ text: 'hi' }] }] }, /role/],
    ['roles that do not alternate', { ...config, messages: [{ role: 'user', content: [{ text: 'a' }] }, { role: 'user', content: [{ text: 'b' }] }] }, /roles must alternate/],
    ['a toolResult answering nothing', { ...config, toolConfig: tools, messages: [{ role: 'user', content: [{ toolResult: { toolUseId: 'tu_x', content: [{ text: 'r' }] } }] }] }, /unexpected tool_use_id/],
    ['a toolUse left unanswered', { ...config, toolConfig: tools, messages: [{ role: 'user', content: [{ text: 'a' }] }, { role: 'assistant', content: [toolUse] }, { role: 'user', content: [{ text: 'b' }] }] }, /without tool_result/],
    ['a tool schema that is not an object schema', { ...config, toolConfig: { tools: [{ toolSpec: { name: 't', inputSchema: { json: { type: 'string' } } } }] }, messages: [{ role: 'user', content: [{ text: 'a' }] }] }, /type "object"/],
    ['a cachePoint with nothing before it', { ...config, messages: [{ role: 'user', content: [{ cachePoint: { type: 'default' } }, { text: 'a' }] }] }, /cachePoint must follow content/],
  ])('answers 400 ValidationException to %s', async (_what, input, message) => {
    const error = await send(input);
    expect(error).toBeInstanceOf(BedrockRuntimeServiceException);
    expect(error).toMatchObject({ name: 'ValidationException', $metadata: { httpStatusCode: 400 }, message: expect.stringMatching(message) });
  });

  it('answers a request without a signature with IncompleteSignatureException', async () => {
    const response = await fetch(`${server.url}/model/${encodeURIComponent(MODEL)}/converse`, { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    // fetch speaks HTTP/1.1 only and the server HTTP/2 only, as the SDK's default handler does.
    expect(response).toBeInstanceOf(Error);
    const bare = new BedrockRuntimeClient({ region: REGION, endpoint: server.url, credentials: CREDENTIALS, maxAttempts: 1 });
    bare.middlewareStack.addRelativeTo(
      ((next: BuildHandler<ServiceInputTypes, ServiceOutputTypes>) => async (args: BuildHandlerArguments<ServiceInputTypes>) => {
        delete (args.request as { headers: Record<string, string> }).headers['authorization'];
        return next(args);
      }) satisfies BuildMiddleware<ServiceInputTypes, ServiceOutputTypes>,
      { relation: 'after', toMiddleware: 'httpSigningMiddleware', name: 'dropSignature' },
    );
    const error = await bare.send(new ConverseCommand({ modelId: MODEL, messages: [{ role: 'user', content: [{ text: 'a' }] }], ...config })).catch((e: unknown) => e);
    bare.destroy();
    expect(error).toMatchObject({ name: 'IncompleteSignatureException' });
    expect(classifyBedrockError(error).name).toBe('Agent.Terminal');
  });
});

describe('classifyBedrockError', () => {
  const NOW = Date.parse('2026-11-01T00:00:00Z');
  const serviceError = (name: string, status: number, message: string, fault: 'client' | 'server' = status >= 500 ? 'server' : 'client') =>
    new BedrockRuntimeServiceException({ name, $fault: fault, message, $metadata: { httpStatusCode: status } });

  it.each<[string, unknown, string, RegExp?]>([
    ['ThrottlingException', serviceError('ThrottlingException', 429, 'Too many requests'), 'Agent.ModelThrottled'],
    ['ServiceUnavailableException', serviceError('ServiceUnavailableException', 503, 'unavailable'), 'Agent.ModelThrottled'],
    ['ModelNotReadyException', serviceError('ModelNotReadyException', 429, 'model is not ready'), 'Agent.Transient'],
    ['ModelTimeoutException', serviceError('ModelTimeoutException', 408, 'timed out'), 'Agent.Transient'],
    ['InternalServerException', serviceError('InternalServerException', 500, 'boom'), 'Agent.Transient'],
    ['an unmodeled 502', serviceError('BadGateway', 502, 'bad gateway'), 'Agent.Transient'],
    ['a socket error', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET', $metadata: {} }), 'Agent.Transient'],
    ['the caller aborting', Object.assign(new Error('Request aborted'), { name: 'AbortError' }), 'Agent.Transient', /aborted/],
    ['no credentials', Object.assign(new Error('Could not load credentials'), { name: 'CredentialsProviderError' }), 'Agent.Terminal', /\[authentication\]/],
    ['AccessDeniedException', serviceError('AccessDeniedException', 403, 'not authorized to perform bedrock:InvokeModel'), 'Agent.Terminal', /\[permission\].*bedrock:InvokeModel/],
    ['a payment refusal', serviceError('AccessDeniedException', 403, 'Model access is denied due to INVALID_PAYMENT_INSTRUMENT'), 'Agent.Terminal', /\[spend_cap\]/],
    ['ExpiredTokenException', serviceError('ExpiredTokenException', 403, 'The security token included in the request is expired'), 'Agent.Terminal', /\[authentication\]/],
    ['ResourceNotFoundException', serviceError('ResourceNotFoundException', 404, 'Model not found'), 'Agent.Terminal', /\[not_found\]/],
    ['input too long', serviceError('ValidationException', 400, 'Input is too long for requested model.'), 'Agent.Terminal', /\[context_too_long\]/],
    ['ValidationException', serviceError('ValidationException', 400, 'messages.1: roles must alternate'), 'Agent.Terminal', /\[invalid_request\]/],
  ])('maps %s to %s', (_what, error, name, message) => {
    const mapped = classifyBedrockError(error, NOW);
    expect(mapped.name).toBe(name);
    if (message) expect(mapped.message).toMatch(message);
  });
});
