import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpMessagesClient } from '../../lambdas/models/messages-client.js';
import type { MessageRequest } from '../../lambdas/records/messages.js';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { decide } from '../../agents/refund-reconciler/sim/policy.js';
import { toolSpecs } from '../../lambdas/define.js';
import { InvalidInputError, ModelThrottledError, TerminalError, TransientError } from '../../lambdas/shared/errors.js';
import { estimateTokens, startModelServer, type ModelServer } from '../../sim/model-server.js';
import { TestClock } from '../../testing/index.js';

const firstTurn = (overrides: Partial<MessageRequest> = {}): MessageRequest => ({
  model: 'savepoint-sim-1',
  max_tokens: 1024,
  system: 'You reconcile refund requests.',
  messages: [{ role: 'user', content: 'Reconcile the refund requests of 2026-11-28.' }],
  tools: toolSpecs(refundReconciler),
  ...overrides,
});

/** A stand-in provider that answers every request with `handler`, for answers the simulator never gives. */
async function withServer<T>(handler: RequestListener, body: (url: string) => Promise<T>): Promise<T> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await body(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

describe('simulated model server with the HTTP client', () => {
  let server: ModelServer;
  let client: HttpMessagesClient;
  beforeAll(async () => {
    server = await startModelServer({ policy: decide });
    client = new HttpMessagesClient({ baseUrl: server.url, apiKey: 'test-key' });
  });
  afterAll(() => server.close());

  it('answers a first turn with a list call, usage from the estimator, the same way every time', async () => {
    const request = firstTurn();
    const response = await client.createMessage(request);
    expect(response).toMatchObject({ type: 'message', role: 'assistant', model: 'savepoint-sim-1', stop_reason: 'tool_use' });
    expect(response.id).toMatch(/^msg_[0-9a-f]{24}$/);
    expect(response.content[1]).toEqual({ type: 'tool_use', id: 'toolu_001_0', name: 'list_refund_requests', input: { date: '2026-11-28' } });
    expect(response.usage.output_tokens).toBe(estimateTokens(response.content));
    const prompt = response.usage.input_tokens + response.usage.cache_creation_input_tokens! + response.usage.cache_read_input_tokens!;
    expect(prompt).toBeGreaterThan(100); // the tool specs are part of the prompt
    // The same request again: the same answer; the prompt it wrote to the cache is now read from it.
    const again = await client.createMessage(request);
    expect({ ...again, usage: undefined }).toEqual({ ...response, usage: undefined });
    expect(again.usage.input_tokens + again.usage.cache_creation_input_tokens! + again.usage.cache_read_input_tokens!).toBe(prompt);
  });

  it('cuts an answer longer than max_tokens to its text', async () => {
    const response = await client.createMessage(firstTurn({ max_tokens: 5 }));
    expect(response.stop_reason).toBe('max_tokens');
    expect(response.content).toEqual([{ type: 'text', text: 'Listing the refund r' }]); // 5 tokens × 4 chars
    expect(response.usage.output_tokens).toBe(5);
  });

  it('refuses a call without an API key: terminal', async () => {
    const keyless = new HttpMessagesClient({ baseUrl: server.url, apiKey: '' });
    const error = await keyless.createMessage(firstTurn()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TerminalError);
    expect(error).toMatchObject({ name: 'Agent.Terminal', message: expect.stringContaining('401: authentication_error') });
  });

  it('answers 400 naming the field for an invalid body, 404 for an unknown model', async () => {
    const res = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'savepoint-sim-1', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringMatching(/^invalid request: max_tokens: /) },
    });

    const error = await client.createMessage(firstTurn({ model: 'gpt-nope' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TerminalError);
    expect((error as Error).message).toContain('404: not_found_error: model: gpt-nope');
  });

  it('counts the requests it received, over HTTP and in process alike', async () => {
    const own = await startModelServer({ policy: decide });
    try {
      await new HttpMessagesClient({ baseUrl: own.url, apiKey: 'k' }).createMessage(firstTurn());
      await new HttpMessagesClient({ baseUrl: own.url, apiKey: 'k', fetch: own.fetch }).createMessage(firstTurn());
      await new HttpMessagesClient({ baseUrl: own.url, apiKey: '', fetch: own.fetch }).createMessage(firstTurn()).catch(() => undefined);
      expect(own.requestCount()).toBe(3);
    } finally {
      await own.close();
    }
  });
});

describe('the simulated model in process (what the local engine uses)', () => {
  let server: ModelServer;
  beforeAll(async () => {
    server = await startModelServer({ policy: decide });
  });
  afterAll(() => server.close());

  it('answers a request in process with the same status and body as over HTTP', async () => {
    const send = (fetcher: typeof fetch, body: unknown) =>
      fetcher(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (response) => ({ status: response.status, type: response.headers.get('content-type'), body: await response.json() }));
    for (const body of [firstTurn({ max_tokens: 5 }), { model: 'savepoint-sim-1', messages: [] }, firstTurn({ model: 'gpt-nope' })]) {
      expect(await send(server.fetch, body)).toEqual(await send(fetch, body));
    }
  });

  it('sends a URL it does not serve to the network, and honours an aborted signal', async () => {
    const other = await startModelServer({ policy: decide });
    try {
      await new HttpMessagesClient({ baseUrl: other.url, apiKey: 'k', fetch: server.fetch }).createMessage(firstTurn());
      expect(other.requestCount()).toBe(1);
      const aborted = await server.fetch(`${server.url}/v1/messages`, { method: 'POST', body: '{}', signal: AbortSignal.abort() }).catch((error: unknown) => error);
      expect(aborted).toMatchObject({ name: 'AbortError' });
    } finally {
      await other.close();
    }
  });
});

describe('fault injection', () => {
  async function outcomes(seed: number): Promise<{ statuses: number[]; errors: string[] }> {
    const raw = await startModelServer({ policy: decide, faults: { failRate: 0.4, seed } });
    const viaClient = await startModelServer({ policy: decide, faults: { failRate: 0.4, seed } });
    const client = new HttpMessagesClient({ baseUrl: viaClient.url, apiKey: 'k' });
    const statuses: number[] = [];
    const errors: string[] = [];
    try {
      for (let i = 0; i < 12; i++) {
        const res = await fetch(`${raw.url}/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
          body: JSON.stringify(firstTurn()),
        });
        await res.arrayBuffer();
        statuses.push(res.status);
        const error = await client.createMessage(firstTurn()).then(() => undefined, (e: unknown) => e);
        errors.push(error === undefined ? 'ok' : error instanceof ModelThrottledError ? 'throttled' : String(error));
      }
    } finally {
      await raw.close();
      await viaClient.close();
    }
    return { statuses, errors };
  }

  it('throttles the same requests for the same seed, alternating 529 and 429', async () => {
    const first = await outcomes(7);
    expect(await outcomes(7)).toEqual(first);
    expect(first.errors).toEqual(first.statuses.map((s) => (s === 200 ? 'ok' : 'throttled')));
    const faulted = first.statuses.filter((s) => s !== 200);
    expect(faulted.length).toBeGreaterThanOrEqual(2);
    expect(faulted).toEqual(faulted.map((_, i) => (i % 2 === 0 ? 529 : 429)));
    expect((await outcomes(8)).statuses).not.toEqual(first.statuses);
  });
});

describe('HTTP client error mapping', () => {
  const answer =
    (status: number, body: string): RequestListener =>
    (req, res) => {
      req.resume();
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    };
  const call = (url: string, timeoutMs?: number, signal?: AbortSignal) =>
    new HttpMessagesClient({ baseUrl: url, apiKey: 'k', timeoutMs }).createMessage(firstTurn(), signal).catch((e: unknown) => e);

  it('treats a response of the wrong shape as invalid input, naming the field', async () => {
    const missingUsage = JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: 'end_turn' });
    const error = await withServer(answer(200, missingUsage), (url) => call(url));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toMatch(/^invalid model response: usage: /);

    const notJson = await withServer(answer(200, 'hello'), (url) => call(url));
    expect(notJson).toBeInstanceOf(InvalidInputError);
  });

  it('maps 5xx, refused connections, timeouts and aborts to transient', async () => {
    const overloaded = await withServer(answer(503, '{"type":"error","error":{"type":"api_error","message":"down"}}'), (url) => call(url));
    expect(overloaded).toBeInstanceOf(TransientError);
    expect((overloaded as Error).message).toBe('model provider answered 503: api_error: down');

    const closed = await withServer(answer(200, '{}'), async (url) => url);
    expect(await call(closed)).toBeInstanceOf(TransientError);

    // A server that never answers; `asked` resolves once the request has reached it.
    let heard!: () => void;
    const silent: RequestListener = () => heard();
    const asked = () => new Promise<void>((resolve) => (heard = resolve));

    // The timeout on the client's timers: a test clock times the call out as it reaches 60 s (a real timer would not, in the test's time).
    const clock = new TestClock();
    const timedOut = await withServer(silent, async (url) => {
      const reached = asked();
      let settled = false;
      const pending = new HttpMessagesClient({ baseUrl: url, apiKey: 'k', timeoutMs: 60_000, timers: clock })
        .createMessage(firstTurn())
        .catch((e: unknown) => e)
        .finally(() => (settled = true));
      await reached;
      clock.advance(59_999);
      await new Promise((resolve) => setImmediate(resolve));
      expect(settled).toBe(false);
      clock.advance(1);
      return pending;
    });
    expect(timedOut).toBeInstanceOf(TransientError);
    expect((timedOut as Error).message).toContain('timed out after 60000 ms');
    expect((timedOut as Error).cause).toBeDefined();

    const caller = new AbortController();
    const aborted = await withServer(silent, async (url) => {
      const reached = asked();
      const pending = call(url, 10_000, caller.signal);
      await reached;
      caller.abort();
      return pending;
    });
    expect(aborted).toBeInstanceOf(TransientError);
    expect((aborted as Error).message).toContain('aborted');
  });

  it('maps 429 to throttled and 403 to terminal', async () => {
    expect(await withServer(answer(429, '{}'), (url) => call(url))).toBeInstanceOf(ModelThrottledError);
    expect(await withServer(answer(403, 'forbidden'), (url) => call(url))).toBeInstanceOf(TerminalError);
  });
});
