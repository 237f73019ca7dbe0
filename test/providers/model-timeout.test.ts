import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicModelClient } from '../../lambdas/models/anthropic.js';
import { BedrockModelClient } from '../../lambdas/models/bedrock.js';
import { OpenAIModelClient } from '../../lambdas/models/openai.js';
import type { ModelClient } from '../../lambdas/records/messages.js';
import { firstRequest } from './conversation.js';

// A provider that takes the connection and never says a word: each adapter's own SDK gives up at
// the model timeout, and the error says how long that was and where it is set.
const TIMEOUT_MS = 300;
let server: Server;
let url: string;
const sockets = new Set<Socket>();

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const clients: [string, string, () => ModelClient][] = [
  ['anthropic', 'claude-sonnet-4-6', () => new AnthropicModelClient({ apiKey: 'k', baseUrl: url, timeoutMs: TIMEOUT_MS })],
  ['openai', 'gpt-5-mini', () => new OpenAIModelClient({ apiKey: 'k', baseUrl: `${url}/v1`, timeoutMs: TIMEOUT_MS })],
  ['bedrock', 'anthropic.claude-sonnet-4-6', () => new BedrockModelClient({ region: 'us-east-1', endpoint: url, credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, timeoutMs: TIMEOUT_MS })],
];

describe('a model call that outlives the model timeout', () => {
  it.each(clients)('%s: a transient fault that names the timeout and where it is set', async (provider, model, client) => {
    const error = await client().createMessage(firstRequest(model)).then(
      () => undefined,
      (thrown: unknown) => thrown as Error,
    );
    expect(error?.name).toBe('Agent.Transient');
    expect(error?.message).toContain(`${provider} model call failed: timed out after ${TIMEOUT_MS} ms (the model timeout: MODEL_TIMEOUT_MS, set on AWS by the stack's modelTimeout)`);
  });
});
