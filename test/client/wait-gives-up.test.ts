import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it, vi } from 'vitest';
import { connect, RunsApiError, runsClient } from '../../client/index.js';
import { LOOPBACK_SILENCE_MS } from '../../client/loopback-request.js';

/**
 * `wait` of a client that finds its serve again (`locate`: `connect({ stateDir })`) asks again while
 * no serve answers, and so do `decide`, `start`, `cancel` and `startBatch` — but not forever: after a minute with no answer it throws what the last attempt
 * got (an engine that is not coming back: a one-shot `savepoint run` that ended with its run).
 * The client's pauses on a fake clock; its requests go to a port nothing listens on (refused at once).
 * Nor does it ask for ever a server that answers, but not as the runs API does, nor wait for ever
 * on one that answers nothing.
 */
afterEach(() => vi.useRealTimers());

/** A client whose serve is gone for good: its requests refused at once, its lookups answered 503 (counted). */
function goneClient() {
  const seen = { lookups: 0 };
  const client = runsClient({
    base: 'http://127.0.0.1:1/v1',
    locate: () => {
      seen.lookups += 1;
      throw new RunsApiError(503, 'stateDir: no savepoint engine serves /tmp/gone');
    },
  });
  return { client, seen };
}

it('gives up after a minute with no serve answering, throwing what the last attempt got', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  const { client, seen } = goneClient();
  let settled: { error: unknown } | undefined;
  void client.wait('r1').then(
    () => (settled = { error: undefined }),
    (error: unknown) => (settled = { error }),
  );
  const started = Date.now();
  while (!settled) await vi.advanceTimersByTimeAsync(500);
  expect(settled.error).toMatchObject({ name: 'RunsApiError', status: 503, message: 'stateDir: no savepoint engine serves /tmp/gone' });
  // Not at once (a restart's gap is waited through), and not much past the minute.
  expect(Date.now() - started).toBeGreaterThanOrEqual(60_000);
  expect(Date.now() - started).toBeLessThan(65_000);
  expect(seen.lookups).toBeGreaterThan(20);
});

it("asks a decision, a start, a cancel and a batch's start again on wait's schedule while no serve answers, gives each up after a minute, and stops one on its signal in a pause", async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  const { client, seen } = goneClient();
  const calls: [string, () => Promise<unknown>][] = [
    ['decide', () => client.decide('apv_0123456789abcdef', 'approve')],
    ['start', () => client.start({ input: {}, runId: 'r1' })],
    ['cancel', () => client.cancel('r1')],
    ['startBatch', () => client.startBatch({ items: [{}] })],
  ];
  for (const [name, call] of calls) {
    seen.lookups = 0;
    let settled: { error: unknown } | undefined;
    void call().then(
      () => (settled = { error: undefined }),
      (error: unknown) => (settled = { error }),
    );
    const started = Date.now();
    while (!settled) await vi.advanceTimersByTimeAsync(500);
    expect(settled.error, name).toMatchObject({ name: 'RunsApiError', status: 503 });
    expect(Date.now() - started, name).toBeGreaterThanOrEqual(60_000);
    expect(Date.now() - started, name).toBeLessThan(65_000);
    expect(seen.lookups, name).toBeGreaterThan(20);
  }
  // Stopped in a pause between two attempts: at once, as the call's own abort.
  const controller = new AbortController();
  const stopped = client.decide('apv_0123456789abcdef', 'approve', { signal: controller.signal });
  stopped.catch(() => undefined);
  seen.lookups = 0;
  while (seen.lookups < 2) await vi.advanceTimersByTimeAsync(100);
  const reason = new Error('the user left');
  controller.abort(reason);
  await expect(stopped).rejects.toMatchObject({ name: 'AbortError', code: 'ABORT_ERR', message: 'stopped: POST /approvals/apv_0123456789abcdef', cause: reason });
});

it("refuses a success that is not the runs API's JSON (another server at the address), and does not ask again", async () => {
  // A web page for every path, as a web app or a proxy answers; after a few requests, the wait is stopped.
  let requests = 0;
  const tooMany = new AbortController();
  const server = createServer((_request, response) => {
    if (++requests === 3) tooMany.abort();
    response.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const client = await connect({ url: origin, credential: 'c' });
    const notTheApi = `GET /runs/r1: ${origin} answered 200 with "<html>hello</html>", not the runs API's JSON: is it a savepoint serve or a runs API?`;
    await expect(client.get('r1')).rejects.toThrow(notTheApi);
    await expect(client.wait('r1', { signal: tooMany.signal })).rejects.toThrow(notTheApi);
    await expect(client.approvals()).rejects.toThrow(`GET /approvals: ${origin} answered 200`);
    expect(requests).toBe(3);
  } finally {
    server.close();
  }
});

it('gives up on a serve that takes the request and sends nothing, after the 300 s fetch allows, leaving no timer', async () => {
  // A serve suspended (Ctrl-Z): its socket still takes connections, and nothing answers.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  let received!: () => void;
  const taken = new Promise<void>((resolve) => (received = resolve));
  const server = createServer(() => received());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const client = await connect({ url: origin, credential: 'c' });
    let settled: { error: unknown } | undefined;
    void client.get('r1').then(
      () => (settled = { error: undefined }),
      (error: unknown) => (settled = { error }),
    );
    await taken;
    const turns = async () => {
      for (let turn = 0; turn < 20 && !settled; turn++) await new Promise((resolve) => setImmediate(resolve));
    };
    await vi.advanceTimersByTimeAsync(LOOPBACK_SILENCE_MS - 1);
    await turns();
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await turns();
    expect(settled?.error).toMatchObject({ message: `GET ${origin}: nothing received for 300 s` });
    expect(vi.getTimerCount()).toBe(0);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

it("stops each call on its signal, a request the server took and never answers too, and sends nothing once it has aborted", async () => {
  // A server that takes every request and answers none: only the call's signal ends it.
  const taken: string[] = [];
  let received!: () => void;
  let next = new Promise<void>((resolve) => (received = resolve));
  const bodies: string[] = [];
  const server = createServer((request) => {
    taken.push(`${request.method} ${request.url}`);
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      if (body) bodies.push(body);
      received();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const client = await connect({ url: origin, credential: 'c' });
    const calls: [string, (signal: AbortSignal) => Promise<unknown>][] = [
      ['POST /runs', (signal) => client.start({ input: {}, runId: 'r1' }, { signal })],
      ['GET /runs/r1', (signal) => client.get('r1', { signal })],
      ['GET /runs', (signal) => client.list({ limit: 5, signal })],
      ['POST /runs/r1/cancel', (signal) => client.cancel('r1', { reason: 'late', signal })],
      ['GET /approvals', (signal) => client.approvals(undefined, { signal })],
      ['POST /approvals/apv_0123456789abcdef', (signal) => client.decide('apv_0123456789abcdef', 'approve', { signal })],
      ['POST /batches', (signal) => client.startBatch({ items: [{}] }, { signal })],
      ['GET /batches/b1', (signal) => client.batch('b1', { signal })],
    ];
    for (const [route, call] of calls) {
      const controller = new AbortController();
      const settled = call(controller.signal);
      // A call that ends before the server took its request (refused by the client) fails here at once.
      const early = settled.then((value) => Promise.reject(new Error(`${route}: ended before the server took it: ${JSON.stringify(value)}`)));
      early.catch(() => undefined);
      await Promise.race([next, early]);
      next = new Promise<void>((resolve) => (received = resolve));
      const reason = new Error('the user left');
      controller.abort(reason);
      await expect(settled, route).rejects.toMatchObject({ name: 'AbortError', code: 'ABORT_ERR', message: `stopped: ${route}`, cause: reason });
    }
    // What each sent: its route and body, the signal in neither.
    expect(taken.map((line) => line.replace('/c/v1', ''))).toEqual(calls.map(([route]) => (route === 'GET /runs' ? 'GET /runs?limit=5' : route)));
    expect(bodies).toEqual(['{"input":{},"runId":"r1"}', '{"reason":"late"}', '{"decision":"approve"}', '{"items":[{}]}']);
    // Aborted already: nothing is sent.
    await expect(client.get('r1', { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(taken).toHaveLength(calls.length);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});
