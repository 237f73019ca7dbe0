import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it, vi } from 'vitest';
import { connect, RunsApiError, runsClient } from '../../client/index.js';
import { LOOPBACK_SILENCE_MS } from '../../client/loopback-request.js';

/**
 * `wait` of a client that finds its serve again (`locate`: `connect({ stateDir })`) asks again while
 * no serve answers — but not forever: after a minute with no answer it throws what the last attempt
 * got (an engine that is not coming back: a one-shot `savepoint run` that ended with its run).
 * The client's pauses on a fake clock; its requests go to a port nothing listens on (refused at once).
 * Nor does it ask for ever a server that answers, but not as the runs API does, nor wait for ever
 * on one that answers nothing.
 */
afterEach(() => vi.useRealTimers());

it('gives up after a minute with no serve answering, throwing what the last attempt got', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  let lookups = 0;
  const client = runsClient({
    base: 'http://127.0.0.1:1/v1',
    locate: () => {
      lookups += 1;
      throw new RunsApiError(503, 'stateDir: no savepoint engine serves /tmp/gone');
    },
  });
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
  expect(lookups).toBeGreaterThan(20);
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
