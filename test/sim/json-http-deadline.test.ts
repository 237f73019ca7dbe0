import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, withDev } from '../../lambdas/index.js';
import { OutcomeUnknownError, TransientError } from '../../lambdas/shared/errors.js';
import { JsonHttpClient } from '../../lambdas/tools/json-http.js';
import { inProcessFetch, jsonReply, serveHttp, type HttpService, type HttpServed } from '../../sim/in-process.js';
import { createTestEnvironment, TestClock, type TestEnvironment } from '../../testing/index.js';
import { oneTurnPolicy } from '../support/one-turn-policy.js';

/**
 * A tool's HTTP client times out with the tool, not before it (issue 35, item 2): its deadline is
 * the tool's signal; a request sent and never answered is an unknown outcome, not a plain
 * transient fault; and the in-process path ends a request on abort exactly as a socket does.
 */

const served: HttpServed[] = [];
let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
  await Promise.all(served.splice(0).map((server) => server.close()));
});

/** A service that answers each request only when the test says so (`release`), and says when one arrived. */
function heldService() {
  const waiting: (() => void)[] = [];
  let arrived!: () => void;
  const arrival = new Promise<void>((resolve) => (arrived = resolve));
  let requests = 0;
  const service: HttpService = async () => {
    requests += 1;
    arrived();
    await new Promise<void>((resolve) => waiting.push(resolve));
    return jsonReply(200, { ok: true });
  };
  return { service, arrival, requests: () => requests, release: () => waiting.splice(0).forEach((resolve) => resolve()) };
}

async function serve(service: HttpService): Promise<HttpServed> {
  const server = await serveHttp(service, { tooLarge: () => jsonReply(413, {}), failed: () => jsonReply(500, {}) });
  served.push(server);
  return server;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('JsonHttpClient’s deadline', () => {
  it('is the caller’s signal: no 10 s of its own cuts a request the tool still has time for', async () => {
    const held = heldService();
    const server = await serve(held.service);
    const clock = new TestClock();
    const client = new JsonHttpClient({ baseUrl: server.url, timers: clock });
    const tool = new AbortController(); // the tool's signal: aborted at its timeout (20 s by default)
    const answer = client.request('GET', '/slow', z.object({ ok: z.boolean() }), { signal: tool.signal });
    await held.arrival;
    clock.advance(15_000);
    await turn();
    held.release();
    await expect(answer).resolves.toEqual({ ok: true });
  });

  it('ends a request sent and never answered as an unknown outcome, over a socket and in process alike', async () => {
    const outcomes: unknown[] = [];
    for (const path of ['socket', 'in process'] as const) {
      const held = heldService();
      const server = await serve(held.service);
      const fetch = path === 'socket' ? globalThis.fetch : inProcessFetch(server.url, held.service, () => Promise.reject(new Error('not served')));
      const client = new JsonHttpClient({ baseUrl: server.url, fetch });
      const tool = new AbortController();
      const answer = client.request('POST', '/v1/mail/send', z.object({ ok: z.boolean() }), { signal: tool.signal, body: {} }).then(
        () => 'answered',
        (error: unknown) => error,
      );
      await held.arrival;
      tool.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
      const error = (await answer) as OutcomeUnknownError;
      held.release();
      outcomes.push({ path, type: error instanceof OutcomeUnknownError, timedOut: error.timedOut, message: error.message });
    }
    const message = 'POST /v1/mail/send failed: aborted by the caller (The operation was aborted due to timeout): The operation was aborted due to timeout';
    expect(outcomes).toEqual([
      { path: 'socket', type: true, timedOut: true, message },
      { path: 'in process', type: true, timedOut: true, message },
    ]);
  });

  it('keeps a connection never made a plain transient fault: nothing was sent', async () => {
    const server = await serve(async () => jsonReply(200, {}));
    const url = server.url;
    await server.close();
    served.splice(0);
    const error = await new JsonHttpClient({ baseUrl: url }).request('GET', '/x', z.object({})).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransientError);
    expect(error).not.toBeInstanceOf(OutcomeUnknownError);
  });
});

describe('a read that hangs over a real socket', () => {
  it('is told to the model as a timeout when the tool’s time runs out, and the run goes on', async () => {
    const held = heldService();
    const server = await serve(held.service);
    const told: unknown[] = [];
    const clock = new TestClock();
    const agent = withDev(
      defineAgent({
        name: 'hanging-read',
        model: 'sim:savepoint-sim-1',
        system: 'Look it up.',
        input: z.object({}).strict(),
        prompt: () => 'Look it up.',
        // The client's timers are the run's clock: a deadline of its own would fire as the test moves it.
        deps: () => ({ http: new JsonHttpClient({ baseUrl: server.url, timers: clock }) }),
        tools: [
          defineTool({
            name: 'lookup',
            description: 'Looks it up.',
            input: z.object({}).strict(),
            effect: 'read',
            execute: (_args, { deps, signal }: { deps: { http: JsonHttpClient }; signal?: AbortSignal }) => deps.http.request('GET', '/lookup', z.object({ ok: z.boolean() }), { ...(signal && { signal }) }),
          }),
        ],
      }),
      { policy: oneTurnPolicy([{ id: 'call_1', name: 'lookup', input: {} }], (results) => told.push(...results.map((result) => JSON.parse(result.content)))) },
    );
    env = await createTestEnvironment({ agent, clock });
    const run = env.start({});
    await held.arrival;
    // Half the tool's 20 s: the old client's own 10 s deadline had cut it (and the retries failed the run).
    await env.skip(10_000);
    await env.skip(10_000);
    const finished = await run.result();
    held.release();
    expect(finished.status).toBe('succeeded');
    expect(held.requests()).toBe(1);
    expect(told).toEqual([{ error: 'timeout', message: 'lookup did not answer within 20000 ms (its timeoutMs)' }]);
  });
});
