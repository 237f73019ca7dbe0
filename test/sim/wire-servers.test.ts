import Anthropic from '@anthropic-ai/sdk';
import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { startAnthropicServer, startBedrockServer, startOpenAIServer, type Policy, type WireServer } from '../../sim/index.js';

/**
 * The wire servers of savepoint/sim as a user's test meets them: through the official SDKs over
 * loopback, with the user's own policy.
 */

const ANTHROPIC_MODEL = 'claude-haiku-4-5';
const OPENAI_MODEL = 'gpt-5-mini';
const BEDROCK_MODEL = 'anthropic.claude-haiku-4-5-20251001-v1:0';
const KEY = 'sk-test';
const CREDENTIALS = { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' };
const hello: Policy = () => ({ content: [{ type: 'text', text: 'Hello.' }], stop_reason: 'end_turn' });

/** One call of each provider's SDK with `prompt`, against a server with `policy`: what the SDK threw (or resolved to). */
async function callEach(policy: Policy, prompt = 'Hi'): Promise<Record<'anthropic' | 'openai' | 'bedrock', unknown>> {
  const settle = (call: Promise<unknown>) => call.then((value) => value, (error: unknown) => error);
  const anthropic = await withServer(startAnthropicServer({ apiKey: KEY, models: [ANTHROPIC_MODEL], policy }), (server) =>
    settle(new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 }).messages.create({ model: ANTHROPIC_MODEL, max_tokens: 64, messages: [{ role: 'user', content: prompt }] })),
  );
  const openai = await withServer(startOpenAIServer({ apiKey: KEY, models: [OPENAI_MODEL], policy }), (server) =>
    settle(new OpenAI({ apiKey: KEY, baseURL: `${server.url}/v1`, maxRetries: 0 }).chat.completions.create({ model: OPENAI_MODEL, max_completion_tokens: 64, messages: [{ role: 'user', content: prompt }] })),
  );
  const bedrock = await withServer(startBedrockServer({ region: 'us-east-1', credentials: { [CREDENTIALS.accessKeyId]: CREDENTIALS.secretAccessKey }, models: [BEDROCK_MODEL], policy }), async (server) => {
    const client = new BedrockRuntimeClient({ region: 'us-east-1', endpoint: server.url, credentials: CREDENTIALS, maxAttempts: 1 });
    try {
      return await settle(client.send(new ConverseCommand({ modelId: BEDROCK_MODEL, messages: [{ role: 'user', content: [{ text: prompt }] }], inferenceConfig: { maxTokens: 64 } })));
    } finally {
      client.destroy();
    }
  });
  return { anthropic, openai, bedrock };
}

async function withServer<T>(starting: Promise<WireServer>, run: (server: WireServer) => Promise<T>): Promise<T> {
  const server = await starting;
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

describe('the wire servers’ own refusals', () => {
  it('answers a body over the size limit in each provider’s error shape: the SDK’s error carries the message', async () => {
    const errors = await callEach(hello, 'x'.repeat(9 * 1024 * 1024));
    expect(errors.anthropic).toBeInstanceOf(Anthropic.APIError);
    expect(errors.anthropic).toMatchObject({ status: 413, error: { type: 'error', error: { type: 'request_too_large' } } });
    expect(errors.openai).toBeInstanceOf(OpenAI.APIError);
    expect(errors.openai).toMatchObject({ status: 413, type: 'invalid_request_error', message: expect.stringContaining('request body exceeds') });
    expect(errors.bedrock).toMatchObject({ name: 'ValidationException', message: expect.stringContaining('request body exceeds') });
  });

  it('answers a request whose policy threw with a 500 in each provider’s error shape, carrying the policy’s message', async () => {
    const errors = await callEach(() => {
      throw new Error('no answer scripted for this prompt');
    });
    expect(errors.anthropic).toBeInstanceOf(Anthropic.InternalServerError);
    expect(errors.anthropic).toMatchObject({ error: { error: { type: 'api_error', message: expect.stringContaining('no answer scripted for this prompt') } } });
    expect(errors.openai).toBeInstanceOf(OpenAI.InternalServerError);
    expect(errors.openai).toMatchObject({ type: 'server_error', message: expect.stringContaining('no answer scripted for this prompt') });
    expect(errors.bedrock).toMatchObject({ name: 'InternalServerException', message: expect.stringContaining('no answer scripted for this prompt') });
  });
});

describe('a policy’s mistakes', () => {
  it('fails the request naming the policy when it throws, rather than with its bare message', async () => {
    const errors = await callEach(() => {
      throw new Error('no answer scripted for this prompt');
    });
    for (const error of Object.values(errors)) expect(String((error as Error).message)).toContain("the server's policy threw: no answer scripted for this prompt");
  });

  it.each([
    ['a block no answer carries', () => ({ content: [{ type: 'image' }], stop_reason: 'end_turn' }), 'content.0.type'],
    ['no content', () => ({ stop_reason: 'end_turn' }), 'content'],
    ['nothing', () => undefined, '(reply)'],
    ['a Promise', async () => ({ content: [{ type: 'text', text: 'Hello.' }], stop_reason: 'end_turn' }), 'returned a Promise'],
  ])('fails the request naming the policy when it replies with %s, rather than serving it or a TypeError', async (_, policy, named) => {
    const errors = await callEach(policy as unknown as Policy);
    expect(errors.anthropic).toBeInstanceOf(Anthropic.InternalServerError);
    expect(errors.openai).toBeInstanceOf(OpenAI.InternalServerError);
    expect(errors.bedrock).toMatchObject({ name: 'InternalServerException' });
    for (const error of Object.values(errors)) {
      expect(String((error as Error).message)).toContain("the server's policy");
      expect(String((error as Error).message)).toContain(named);
    }
  });
});

describe('closing', () => {
  it.each([
    ['Anthropic', () => startAnthropicServer({ apiKey: KEY, models: [ANTHROPIC_MODEL], policy: hello })],
    ['OpenAI', () => startOpenAIServer({ apiKey: KEY, models: [OPENAI_MODEL], policy: hello })],
    ['Bedrock', () => startBedrockServer({ region: 'us-east-1', credentials: {}, models: [BEDROCK_MODEL], policy: hello })],
  ])('closes the %s server once, however often close() is called (a test’s finally and its afterEach)', async (_, start) => {
    const server = await start();
    await server.close();
    await expect(server.close()).resolves.toBeUndefined();
    await expect(fetch(server.url)).rejects.toThrow('fetch failed');
  });
});
