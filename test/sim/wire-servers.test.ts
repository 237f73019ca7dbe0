import Anthropic from '@anthropic-ai/sdk';
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** A port nothing listens on (taken and given back). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** What starting gave: the refusal, or (a server that should not have started, closed) the server. */
async function startOutcome(starting: () => Promise<WireServer>): Promise<unknown> {
  const outcome = await starting().then((server) => server, (error: unknown) => error);
  if (typeof (outcome as Partial<WireServer>).close === 'function') await (outcome as WireServer).close();
  return outcome;
}

describe('start options', () => {
  const FREE_PORT_AS_STRING = Symbol('a free port as a string');
  const START = {
    Anthropic: (options: object) => startAnthropicServer({ apiKey: KEY, models: [ANTHROPIC_MODEL], policy: hello, ...options }),
    OpenAI: (options: object) => startOpenAIServer({ apiKey: KEY, models: [OPENAI_MODEL], policy: hello, ...options }),
    Bedrock: (options: object) => startBedrockServer({ region: 'us-east-1', credentials: { AKIDTEST: 'secret' }, models: [BEDROCK_MODEL], policy: hello, ...options }),
  } as const;
  const cases: [keyof typeof START, string, unknown, string][] = [
    ...(['Anthropic', 'OpenAI', 'Bedrock'] as const).flatMap((server): [keyof typeof START, string, unknown, string][] => [
      [server, 'models', 'claude-haiku-4-5', 'models must be a non-empty array of model ids (strings), got "claude-haiku-4-5"'],
      // No model: every request would be refused as one the server does not serve.
      [server, 'models', [], 'models must be a non-empty array of model ids (strings), got an array of 0 items'],
      [server, 'policy', undefined, 'policy must be a function (request) => { content, stop_reason }, got undefined'],
      // A free port's number as a string: had it listened, the probe below would reach it.
      [server, 'port', FREE_PORT_AS_STRING, 'port must be an integer from 0 to 65535, or left out, got "<free port>"'],
    ]),
    ...(['Anthropic', 'OpenAI'] as const).flatMap((server): [keyof typeof START, string, unknown, string][] => [
      // A snapshot that is no name would answer as an empty model; a list, as nothing it names.
      [server, 'snapshots', { 'some-model': '' }, 'snapshots must be an object of model id → the model it answers as (non-empty strings), or left out, got an object with some-model'],
      [server, 'snapshots', ['some-model'], 'snapshots must be an object of model id → the model it answers as (non-empty strings), or left out, got an array of 1 item'],
    ]),
    ['Anthropic', 'apiKey', undefined, 'apiKey must be a non-empty string, got undefined'],
    ['OpenAI', 'apiKey', '', 'apiKey must be a non-empty string, got ""'],
    ['Bedrock', 'region', undefined, 'region must be a non-empty string, got undefined'],
    ['Bedrock', 'credentials', undefined, 'credentials must be an object of access key id → secret access key (strings), got undefined'],
  ];

  it.each(cases)('fails when the %s server is started with %s of %o, naming the option and the value, nothing listening', async (server, name, value, message) => {
    const port = await freePort();
    const options = value === FREE_PORT_AS_STRING ? { port: String(port) } : { port, [name]: value };
    const outcome = await startOutcome(() => START[server](options));
    expect(outcome).toBeInstanceOf(TypeError);
    expect((outcome as Error).message).toBe(`start${server}Server: ${message.replace('<free port>', String(port))}`);
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow('fetch failed');
  });

  it('fails when the port is a string, rather than listening on a socket file of that name with the URL http://127.0.0.1:undefined', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wire-port-'));
    try {
      const socket = join(dir, 'abc');
      const outcome = await startOutcome(() => START.Anthropic({ port: socket }));
      expect(outcome).toBeInstanceOf(TypeError);
      expect((outcome as Error).message).toContain(`port must be an integer from 0 to 65535, or left out, got ${JSON.stringify(socket)}`);
      expect(existsSync(socket)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('streaming', () => {
  const messages = [{ role: 'user' as const, content: 'Hi' }];

  it('refuses an OpenAI stream: true with a 400 on param stream that says this server serves no streaming', async () => {
    const error = await withServer(startOpenAIServer({ apiKey: KEY, models: [OPENAI_MODEL], policy: hello }), (server) =>
      new OpenAI({ apiKey: KEY, baseURL: `${server.url}/v1`, maxRetries: 0 }).chat.completions.create({ model: OPENAI_MODEL, max_completion_tokens: 64, messages, stream: true }).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ param: 'stream', message: expect.stringContaining('this local server serves no streaming: stream: true is refused') });
  });

  it('refuses a Bedrock ConverseStream with UnknownOperationException that says this server serves no streaming', async () => {
    const error = await withServer(startBedrockServer({ region: 'us-east-1', credentials: { [CREDENTIALS.accessKeyId]: CREDENTIALS.secretAccessKey }, models: [BEDROCK_MODEL], policy: hello }), async (server) => {
      const client = new BedrockRuntimeClient({ region: 'us-east-1', endpoint: server.url, credentials: CREDENTIALS, maxAttempts: 1 });
      try {
        return await client.send(new ConverseStreamCommand({ modelId: BEDROCK_MODEL, messages: [{ role: 'user', content: [{ text: 'Hi' }] }], inferenceConfig: { maxTokens: 64 } })).then(
          () => undefined,
          (e: unknown) => e,
        );
      } finally {
        client.destroy();
      }
    });
    expect(error).toMatchObject({ name: 'UnknownOperationException', message: expect.stringContaining('this local server serves no streaming: ConverseStream') });
  });
});
