import { request } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { HEARTBEAT_MS, POLL_MS, WAKE_MS, type StreamLimits } from '../../lambdas/runs/event-feed.js';
import { AWS_STREAM, awsStreamLimits } from '../../lambdas/runs/stream-limits.js';
import { readRunRecords, settledEvents } from '../../lambdas/runs/events.js';
import type { TurnRecord } from '../../lambdas/records/ledger-records.js';
import { startApprovalApi } from '../../local/services/approval-api.js';
import { localRunEvents } from '../../local/services/run-events.js';
import { recordedRuns } from '../../local/runtime/recorded-runs.js';
import { followEvents, IDLE_MS, sseFrames, type RunEvent } from '../../client/events.js';
import { RunsApiError } from '../../client/index.js';
import { manualClock } from '../support/manual-clock.js';
import { call, run, turn } from '../contract/fixtures.js';

/**
 * `GET /v1/runs/{id}/events` on the engine's loopback server (local/services/approval-api.ts),
 * over a real socket and the embedded ledger, with records written as the steps write them and
 * the poller and heartbeats on a clock the test moves: what is sent, when, and where a resume starts.
 */

const CREDENTIAL = 'c'.repeat(43);
let closers: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

function toolTurn(number: number, calls: number): TurnRecord {
  return {
    ...turn(number),
    content: Array.from({ length: calls }, (_, index) => ({ type: 'tool_use' as const, id: `toolu_${number}_${index + 1}`, name: 'lookup', input: { index } })),
    stopReason: 'tool_use',
  };
}

async function served(limits?: StreamLimits, options: { recorded?: boolean; pollMs?: number } = {}) {
  const clock = manualClock();
  // The process's CPU time as the manual clock (a busy process): the wakes' CPU gap passes as the test moves the clock, not as the machine runs.
  const embedded = EmbeddedLedger.open();
  // As the local engine wires it (local-stack.ts): the steps write through `recordedRuns`, and the stream hears of each write.
  const recorded = options.recorded ? recordedRuns(embedded) : undefined;
  const ledger = recorded?.ledger ?? embedded;
  const api = await startApprovalApi(async () => ({ statusCode: 200, body: '{}' }), { credential: CREDENTIAL, runEvents: localRunEvents(ledger, clock, { ...(limits && { limits }), ...(recorded && { recorded }), ...(options.pollMs !== undefined && { pollMs: options.pollMs }), cpuMs: () => clock.now().getTime(), idleMs: () => 0 }) });
  closers.push(api.close, () => embedded.close());
  const origin = `http://127.0.0.1:${api.port}`;
  const at = () => clock.now();
  /** Writes of a run as its steps make them. */
  const steps = {
    create: () => ledger.createRun(run('r1', { createdAt: at().toISOString() })),
    turn: (number: number, calls: number) => ledger.recordTurn({ ...toolTurn(number, calls), runId: 'r1' }),
    claim: (t: number, c: number) => ledger.claimCall(call({ runId: 'r1', turn: t, call: c, toolCallId: `toolu_${t}_${c}`, name: 'lookup', effect: 'read', leaseUntil: new Date(at().getTime() + 60_000).toISOString() }), at()),
    complete: (t: number, c: number) => ledger.completeCall({ runId: 'r1', turn: t, call: c, outcome: { outcome: 'ok', result: `{"call":${c}}`, latencyMs: 1 }, now: at() }),
    finish: () => ledger.finishRun('r1', { status: 'succeeded' }, at()),
  };
  return { clock, ledger, origin, steps, events: async () => settledEvents((await readRunRecords(ledger, 'r1'))!) };
}

/** A raw stream: every chunk as it arrives, and the frames parsed from them. */
function open(url: string, headers: Record<string, string> = {}) {
  const chunks: string[] = [];
  let status = 0;
  let ended = false;
  const ready = new Promise<void>((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
      status = response.statusCode!;
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => chunks.push(chunk));
      response.on('end', () => (ended = true));
      resolve();
    });
    req.on('error', reject);
    req.end();
    closers.push(() => void req.destroy());
  });
  return {
    ready,
    get status() {
      return status;
    },
    get ended() {
      return ended;
    },
    text: () => chunks.join(''),
    ids: () => [...chunks.join('').matchAll(/^id: (.+)$/gm)].map((match) => match[1]),
  };
}

/** Turns of the event loop (never a timer) until `ready` holds. */
/**
 * A TCP proxy to the engine at `origin`, for a path between client and engine that fails: the
 * client's sockets as they are open (`open`: destroy one to drop its connection), the sockets whose
 * bytes it stops carrying either way while they stay open (`frozen`), and how many connections the
 * client made through it.
 */
async function proxyTo(origin: string) {
  const open = new Set<Socket>();
  const frozen = new Set<Socket>();
  let made = 0;
  const proxy = createServer((client) => {
    made += 1;
    open.add(client);
    const upstream = connect(Number(new URL(origin).port), '127.0.0.1');
    upstream.on('data', (chunk: Buffer) => void (frozen.has(client) || client.write(chunk)));
    client.on('data', (chunk: Buffer) => void (frozen.has(client) || upstream.write(chunk)));
    for (const [one, other] of [[client, upstream], [upstream, client]] as const) one.on('close', () => other.destroy()).on('error', () => other.destroy());
    client.on('close', () => open.delete(client));
    closers.push(() => void (client.destroy(), upstream.destroy()));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
  closers.push(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
  return { through: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`, open, frozen, connections: () => made };
}

async function until(ready: () => boolean, what: string): Promise<void> {
  for (let turn = 0; !ready(); turn++) {
    if (turn > 20_000) throw new Error(`never: ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe('GET /v1/runs/{id}/events', () => {
  it('sends the settled events as they are written, holds back a call that finished before an earlier one, beats while idle, and ends after the finish', async () => {
    const { clock, origin, steps, events } = await served();
    await steps.create();
    await steps.turn(1, 2);
    const stream = open(`${origin}/${CREDENTIAL}/v1/runs/r1/events`);
    await stream.ready;
    expect(stream.status).toBe(200);
    await until(() => stream.ids().length === 3, 'the first events');
    expect(stream.ids()).toEqual(['a.run', 't000001.1.model', 't000001.2.budget']);

    // Call 2 finishes while call 1 is in flight: only call 1's start is settled.
    await steps.claim(1, 1);
    await steps.claim(1, 2);
    await steps.complete(1, 2);
    clock.advance(POLL_MS);
    await until(() => stream.ids().length === 4, 'call 1 started');
    expect(stream.ids().at(-1)).toBe('t000001.c001.2.started');

    // Nothing new for a while: a heartbeat comment, no event.
    clock.advance(HEARTBEAT_MS);
    await until(() => stream.text().includes(': heartbeat'), 'a heartbeat');
    expect(stream.ids()).toHaveLength(4);

    await steps.complete(1, 1);
    await steps.turn(2, 0);
    await steps.finish();
    clock.advance(POLL_MS);
    await until(() => stream.ended, 'the end of the stream');
    expect(stream.ids()).toEqual((await events()).map((event) => event.id));
    expect(stream.ids().slice(4)).toEqual(['t000001.c001.3.result', 't000001.c002.2.started', 't000001.c002.3.result', 't000002.1.model', 't000002.2.budget', 'z.run']);
    expect(stream.text()).toMatch(/^retry: \d+\n\n/);
  });

  it('in the engine\'s process, a write is sent without waiting for the poll: each record read once the wake gap has passed, the poll never reached', async () => {
    // The poll an hour apart: every event here comes from a wake.
    const { clock, origin, steps } = await served(undefined, { recorded: true, pollMs: 3_600_000 });
    await steps.create();
    const stream = open(`${origin}/${CREDENTIAL}/v1/runs/r1/events`);
    await stream.ready;
    await until(() => stream.ids().length === 1, 'run.started');
    expect(WAKE_MS).toBeLessThan(POLL_MS);
    clock.advance(WAKE_MS); // the wake gap since the first read
    await steps.turn(1, 1);
    await until(() => stream.ids().length === 3, 'turn 1, read on its write');
    clock.advance(WAKE_MS);
    await steps.claim(1, 1);
    await until(() => stream.ids().length === 4, 'call 1 started');
    clock.advance(WAKE_MS);
    await steps.complete(1, 1);
    clock.advance(WAKE_MS);
    await steps.turn(2, 0);
    clock.advance(WAKE_MS);
    await steps.finish();
    await until(() => stream.ended, 'the end of the stream');
    expect(stream.ids()).toEqual(['a.run', 't000001.1.model', 't000001.2.budget', 't000001.c001.2.started', 't000001.c001.3.result', 't000002.1.model', 't000002.2.budget', 'z.run']);
  });

  it('resumes exactly after Last-Event-ID (which wins over ?after=), across calls that finished out of order between two connections', async () => {
    const { clock, origin, steps, events } = await served();
    await steps.create();
    await steps.turn(1, 3);
    await steps.claim(1, 1);
    await steps.claim(1, 2);
    await steps.claim(1, 3);
    await steps.complete(1, 3);
    const first = open(`${origin}/${CREDENTIAL}/v1/runs/r1/events`);
    await until(() => first.ids().includes('t000001.c001.2.started'), 'call 1 started');
    const seen = first.ids();
    // Between the two connections, call 2 then call 1 finish, and the run ends.
    await steps.complete(1, 2);
    await steps.complete(1, 1);
    await steps.turn(2, 0);
    await steps.finish();
    clock.advance(POLL_MS);
    const second = open(`${origin}/${CREDENTIAL}/v1/runs/r1/events?after=a.run`, { 'last-event-id': seen.at(-1)! });
    await until(() => second.ended, 'the second stream ended');
    expect([...seen, ...second.ids()]).toEqual((await events()).map((event) => event.id));
  });

  it('follows with the client: every event once, in order, until the last', async () => {
    const { clock, origin, steps, events } = await served();
    await steps.create();
    const got: RunEvent[] = [];
    const following = (async () => {
      for await (const event of followEvents({ url: origin, credential: CREDENTIAL }, 'r1', { clock })) got.push(event);
    })();
    await until(() => got.length === 1, 'the start');
    await steps.turn(1, 1);
    await steps.claim(1, 1);
    await steps.complete(1, 1);
    await steps.turn(2, 0);
    await steps.finish();
    clock.advance(POLL_MS);
    await following;
    expect(got).toEqual(await events());
  });

  it.each([
    ['a run that does not exist', '/v1/runs/nope/events', {}, 404, /runId: no run "nope"/],
    ['a resume point that is not an event of the run', '/v1/runs/r1/events?after=t000042.1.model', {}, 400, /after: the run has no event t000042\.1\.model/],
    ['a resume point that is not an event id', '/v1/runs/r1/events?after=2026-12-02T07%3A00%3A00Z', {}, 400, /after: .* is not an event id/],
    ['a Last-Event-ID that is not the run\'s', '/v1/runs/r1/events', { 'last-event-id': 'z.run' }, 400, /Last-Event-ID: the run has no event z\.run/],
    ['a query key it does not take, named (as every route of the runs API names one)', '/v1/runs/r1/events?foo=1', {}, 400, /^invalid query: Unrecognized key: "foo"$/],
  ])('refuses %s (nothing streamed)', async (_, path, headers, status, message) => {
    const { origin, steps } = await served();
    await steps.create();
    const response = await fetch(`${origin}/${CREDENTIAL}${path}`, { headers });
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(((await response.json()) as { message: string }).message).toMatch(message);
  });

  it("answers a resume after the run's last event with 204 (SSE's \"do not reconnect\"), not a stream that beats forever; the client ends there", async () => {
    const { origin, steps } = await served();
    await steps.create();
    await steps.turn(1, 0);
    await steps.finish();
    // What an EventSource sends when it reconnects after the stream ended, and an `after` an app kept.
    for (const [path, headers] of [['/v1/runs/r1/events', { 'last-event-id': 'z.run' }], ['/v1/runs/r1/events?after=z.run', {}]] as const) {
      const response = await fetch(`${origin}/${CREDENTIAL}${path}`, { headers, signal: AbortSignal.timeout(5_000) });
      expect(response.status, path).toBe(204);
      expect(await response.text()).toBe('');
    }
    const got: RunEvent[] = [];
    for await (const event of followEvents({ url: origin, credential: CREDENTIAL }, 'r1', { after: 'z.run', maxAttempts: 0 })) got.push(event);
    expect(got).toEqual([]);
  });

  it.each([
    ['no credential', (origin: string) => `${origin}/v1/runs/r1/events`],
    ['a wrong credential', (origin: string) => `${origin}/${'w'.repeat(43)}/v1/runs/r1/events`],
  ])('refuses a request with %s (403)', async (_, url) => {
    const { origin, steps } = await served();
    await steps.create();
    const response = await fetch(url(origin));
    expect(response.status).toBe(403);
    expect(((await response.json()) as { message: string }).message).toMatch(/^credential: missing or wrong/);
  });

  it('refuses another method than GET (405)', async () => {
    const { origin, steps } = await served();
    await steps.create();
    expect((await fetch(`${origin}/${CREDENTIAL}/v1/runs/r1/events`, { method: 'POST', body: '{}' })).status).toBe(405);
  });

  it('the client takes a stream that went silent (not even a heartbeat for its idle time) as dropped: it reconnects after its last event, and gets every event once', async () => {
    const { clock, origin, steps, events } = await served();
    // Between the client and the engine, a path that can die without a reset (a frozen server, a
    // NAT that forgot the connection): the sockets it holds stay open and carry nothing more.
    const { through, open, frozen, connections } = await proxyTo(origin);

    await steps.create();
    const got: RunEvent[] = [];
    const following = (async () => {
      for await (const event of followEvents({ url: through, credential: CREDENTIAL }, 'r1', { clock })) got.push(event);
    })();
    await until(() => got.length === 1, 'the start');
    // The path dies: what the engine sends from now on never arrives, and the socket stays open.
    for (const socket of open) frozen.add(socket);
    await steps.turn(1, 0);
    clock.advance(POLL_MS);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(got).toHaveLength(1);
    // Three heartbeats missed: the client gives the connection up and opens another, from after a.run.
    clock.advance(IDLE_MS);
    await until(() => connections() === 2, 'the client reconnected');
    await steps.finish();
    clock.advance(POLL_MS);
    await following;
    expect(got).toEqual(await events());
  });

  it("ends when its caller's loop throws just as the connection dropped: the caller gets its own error at once, and no connection is opened again", async () => {
    // As an app whose serve is SIGKILLed while it holds an approval.waiting: its decision, sent to
    // that serve, fails; closing the dropped connection as it leaves its loop fails too, and that
    // was taken for a connection to reopen: the app hung on a stream of heartbeats, its error never thrown.
    const { clock, origin, steps } = await served();
    const { through, open, connections } = await proxyTo(origin);
    await steps.create();
    const stop = new AbortController();
    closers.push(() => stop.abort());
    let outcome: string | undefined;
    void (async () => {
      for await (const event of followEvents({ url: through, credential: CREDENTIAL }, 'r1', { clock, signal: stop.signal })) {
        expect(event.id).toBe('a.run');
        // The engine goes away under the caller, which then fails at what it does with the event.
        for (const socket of open) socket.destroy();
        await until(() => open.size === 0, 'the connection closed');
        for (let turn = 0; turn < 10; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
        throw new Error('the decision could not be sent');
      }
    })().then(
      () => (outcome = 'the iteration ended'),
      (error: Error) => (outcome = error.message),
    );
    await until(() => outcome !== undefined, "the caller's error");
    expect(outcome).toBe('the decision could not be sent');
    expect(connections()).toBe(1);
  });

  it("the client's signal ends the iteration while it waits to reconnect, not when the wait is over", async () => {
    // An engine that is gone: every connection is refused, and the client waits longer between tries.
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', () => resolve()));
    const port = (gone.address() as { port: number }).port;
    await new Promise<void>((resolve) => gone.close(() => resolve()));
    let attempts = 0;
    const counting: typeof fetch = (url, init) => ((attempts += 1), fetch(url, init));
    const stop = new AbortController();
    let ended = false;
    // The clock is never moved: the delay before the next try never passes by itself.
    const following = (async () => {
      for await (const _ of followEvents({ url: `http://127.0.0.1:${port}`, credential: CREDENTIAL, fetch: counting }, 'r1', { clock: manualClock(), signal: stop.signal })) void _;
      ended = true;
    })();
    await until(() => attempts === 2, 'the second try');
    for (let turn = 0; turn < 100; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
    expect(ended).toBe(false);
    stop.abort();
    await until(() => ended, 'the iteration ended');
    await following;
    expect(attempts).toBe(2);
  });

  it('the client gives up on a refusal instead of retrying it', async () => {
    const { origin } = await served();
    const iterate = async () => {
      for await (const _ of followEvents({ url: origin, credential: CREDENTIAL }, 'nope')) void _;
    };
    await expect(iterate()).rejects.toThrow(RunsApiError);
    await expect(iterate()).rejects.toMatchObject({ status: 404 });
  });

  it('refuses a run id no run can have 400 naming runId, as a read of the run does, not 404; the client before any request', async () => {
    const { origin } = await served();
    for (const runId of ['a%2Fb', 'a%20b', 'a'.repeat(81)]) {
      const refused = await fetch(`${origin}/${CREDENTIAL}/v1/runs/${runId}/events`);
      expect([refused.status, await refused.json()], runId).toEqual([400, { message: 'invalid runId: expected 1-80 letters, digits, "-" or "_" (it names the execution)' }]);
    }
    let requests = 0;
    const counted: typeof fetch = (input, init) => ((requests += 1), fetch(input, init));
    for (const runId of ['', 'a/b', '50%']) {
      const iterate = async () => {
        for await (const _ of followEvents({ url: origin, credential: CREDENTIAL, fetch: counted }, runId)) void _;
      };
      await expect(iterate()).rejects.toMatchObject({ name: 'RunsApiError', status: 400, message: `invalid runId: expected 1-80 letters, digits, "-" or "_" (it names the execution), got ${JSON.stringify(runId)}` });
    }
    expect(requests).toBe(0);
  });
});

describe("the stream's limits (those it keeps on AWS: lambdas/runs/stream-limits.ts)", () => {
  it('keeps under API Gateway\'s and Lambda\'s: a heartbeat inside the shortest idle timeout, an end before 15 minutes and the function\'s timeout, and before the unthrottled bytes', () => {
    const limits = awsStreamLimits(15 * 60_000);
    expect(limits.heartbeatMs).toBeLessThan(AWS_STREAM.idleTimeoutMs.edge);
    expect(limits.maxDurationMs).toBeLessThan(AWS_STREAM.maxDurationMs);
    expect(awsStreamLimits(5 * 60_000).maxDurationMs).toBeLessThan(5 * 60_000);
    expect(limits.maxBytes).toBeLessThanOrEqual(AWS_STREAM.unthrottledBytes.lambda);
  });

  it('ends a stream at its longest duration without the final event; the client resumes after it and gets every event once', async () => {
    const limits = awsStreamLimits(15 * 60_000);
    const { clock, origin, steps, events } = await served(limits);
    await steps.create();
    await steps.turn(1, 1);
    const stream = open(`${origin}/${CREDENTIAL}/v1/runs/r1/events`);
    await until(() => stream.ids().length === 3, 'the first events');
    clock.advance(limits.maxDurationMs);
    await until(() => stream.ended, 'the stream ended at its longest');
    expect(stream.ids().at(-1)).toBe('t000001.2.budget');
    const rest = open(`${origin}/${CREDENTIAL}/v1/runs/r1/events`, { 'last-event-id': 't000001.2.budget' });
    await steps.claim(1, 1);
    await steps.complete(1, 1);
    await steps.turn(2, 0);
    await steps.finish();
    clock.advance(POLL_MS);
    await until(() => rest.ended, 'the resumed stream ended');
    expect([...stream.ids(), ...rest.ids()]).toEqual((await events()).map((event) => event.id));
  });

  it('ends a stream at an event boundary once it has sent its bytes; the client reconnects until it has every event, each once', async () => {
    const { clock, origin, steps, events } = await served({ maxBytes: 400 });
    await steps.create();
    await steps.turn(1, 2);
    for (const c of [1, 2]) {
      await steps.claim(1, c);
      await steps.complete(1, c);
    }
    await steps.turn(2, 0);
    await steps.finish();
    const first = open(`${origin}/${CREDENTIAL}/v1/runs/r1/events`);
    await until(() => first.ended, 'the first stream ended');
    const all = (await events()).map((event) => event.id);
    expect(first.ids().length).toBeGreaterThan(0);
    expect(first.ids().length).toBeLessThan(all.length);
    expect(first.text()).toMatch(/\n\n$/); // whole frames only
    const got: RunEvent[] = [];
    for await (const event of followEvents({ url: origin, credential: CREDENTIAL }, 'r1', { clock, retryMs: 1 })) got.push(event);
    expect(got.map((event) => event.id)).toEqual(all);
  });
});

describe('sseFrames (the client\'s parser)', () => {
  const parse = async (...chunks: string[]) => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    });
    const frames = [];
    for await (const frame of sseFrames(body)) frames.push(frame);
    return frames;
  };
  it('reads frames split anywhere, with CRLF, LF or CR line ends, comments and multi-line data; drops an unfinished one', async () => {
    expect(await parse('retry: 5\n\n: beat\r\nid: a.r', 'un\r', '\nevent: run.started\rdata: {"a":\ndata: 1}\n\nid: t0\ndata: x')).toEqual([
      { data: '', retry: 5 },
      { id: 'a.run', event: 'run.started', data: '{"a":\n1}' },
    ]);
  });
});
