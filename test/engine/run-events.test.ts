import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { readRunRecords, settledEvents, type RunEvent } from '../../lambdas/runs/events.js';
import { seededRandom } from '../../sim/random.js';
import { followEvents } from '../../client/events.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { EVENT_FOLLOWER, eventFollower as dev, openAllGates, openGate } from '../support/event-follower.js';

/**
 * A run on the local engine followed through `GET /v1/runs/{id}/events` with the client, over real
 * sockets: calls of one turn that finish out of order, and connections cut at random bytes by a
 * proxy in between — the events the client yields are the run's event list, each exactly once.
 */

const { turns: TURNS, calls: CALLS_PER_TURN } = EVENT_FOLLOWER;

let harness: AgentHarness<any> | undefined;
let proxy: Server | undefined;
const proxied = new Set<Socket>();
let stop = new AbortController();
afterEach(async () => {
  stop.abort();
  stop = new AbortController();
  openAllGates();
  for (const socket of proxied) socket.destroy();
  proxied.clear();
  await new Promise<void>((resolve) => (proxy ? proxy.close(() => resolve()) : resolve()));
  proxy = undefined;
  await harness?.stack.close();
  harness = undefined;
});

/** The engine's origin and credential, from the runs API's address (`<origin>/<credential>/v1/runs`). */
function endpointOf(h: AgentHarness<any>) {
  const runs = new URL(h.stack.endpoints.runs);
  return { url: runs.origin, credential: runs.pathname.split('/')[1]!, port: Number(runs.port) };
}

async function collect(iterator: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of iterator) events.push(event);
  return events;
}

/** Turns of the event loop (never a timer) until `ready` holds. */
async function until(ready: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let turn = 0; !(await ready()); turn++) {
    if (turn > 200_000) throw new Error(`never: ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe('following a run on the local engine', () => {
  it('holds back calls that finished before an earlier one of the same turn, then sends every event once, in order, ending with the finish', async () => {
    // The ledger's reads of the run, counted: the poller's, while the steps wait at the gate.
    let reads = 0;
    // Resolved as the reads reach a count: while the steps wait at the gate nothing is written, so the
    // reads are the poll's (about one a second under the engine: lambdas/runs/event-feed.ts), awaited
    // as they happen rather than counted in turns of the event loop.
    const waiting: { count: number; resolve: () => void }[] = [];
    const readsReached = (count: number) => new Promise<void>((resolve) => (reads >= count ? resolve() : waiting.push({ count, resolve })));
    const read = (runId: string) => {
      if (runId !== 'gated') return;
      reads += 1;
      for (const waiter of waiting.filter((waiter) => waiter.count <= reads)) waiter.resolve();
    };
    const counting = (ledger: Ledger): Ledger =>
      new Proxy(ledger, {
        get(target, key) {
          const value = Reflect.get(target, key) as unknown;
          if (key === 'listConversation') return (runId: string, options?: { fromTurn?: number }) => (read(runId), target.listConversation(runId, options));
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    harness = await startAgentHarness({ agent: dev, decorateLedger: counting });
    const ledger = harness.stack.ledger;
    const { executionArn } = harness.stack.engine.startExecution({ name: 'gated', input: { runId: 'gated', input: { gated: ['t1c1'] } } });
    const got: RunEvent[] = [];
    const following = (async () => {
      for await (const event of followEvents(endpointOf(harness!), 'gated', { retryMs: 1, signal: stop.signal })) got.push(event);
    })();
    // Calls 2 and 3 of turn 1 finish while call 1 waits at its gate (a read is recorded once, when it is done).
    await until(async () => (await ledger.getCall('gated', 1, 2))?.status === 'completed' && (await ledger.getCall('gated', 1, 3))?.status === 'completed', 'calls 2 and 3 completed');
    await until(() => got.at(-1)?.id === 't000001.2.budget', 'turn 1 sent');
    const before = got.length;
    // Three polls later, nothing of calls 2 and 3 has been sent: their events wait for call 1's result.
    await readsReached(reads + 3);
    expect(got.length).toBe(before);
    expect(got.map((event) => event.id).filter((id) => id.startsWith('t000001.c002') || id.startsWith('t000001.c003'))).toEqual([]);
    openGate('t1c1');
    await following;
    expect((await harness.stack.engine.waitForExecution(executionArn)).status).toBe('SUCCEEDED');
    const all = settledEvents((await readRunRecords(ledger, 'gated'))!);
    expect(got).toEqual(all);
    expect(got.at(-1)).toMatchObject({ id: 'z.run', type: 'run.finished', data: { status: 'succeeded' } });
    expect(got.filter((event) => event.type === 'tool.result')).toHaveLength(TURNS * CALLS_PER_TURN);
  });

  it('reads the DynamoDB ledger the same way (dynalite, the real SDK): the events of a run there, once each, to its finish', async () => {
    harness = await startAgentHarness({ agent: dev, ledger: 'dynalite' });
    const { executionArn } = harness.stack.engine.startExecution({ name: 'on-dynamodb', input: { runId: 'on-dynamodb', input: { turns: 3 } } });
    await until(async () => (await harness!.stack.ledger.getRun('on-dynamodb')) !== undefined, 'the run created');
    const events = await collect(followEvents(endpointOf(harness), 'on-dynamodb', { retryMs: 1, signal: stop.signal }));
    expect((await harness.stack.engine.waitForExecution(executionArn)).status).toBe('SUCCEEDED');
    expect(events).toEqual(settledEvents((await readRunRecords(harness.stack.ledger, 'on-dynamodb'))!));
    expect(events.filter((event) => event.type === 'tool.result')).toHaveLength(3 * CALLS_PER_TURN);
  });

  it('a connection cut at random bytes, at least 50 times, mid-run: the events yielded are the full list, each once', async () => {
    harness = await startAgentHarness({ agent: dev });
    const engine = endpointOf(harness);
    const random = seededRandom(33);
    let cuts = 0;
    // A proxy that destroys each connection after a random number of the engine's bytes (mid-frame, mid-header).
    proxy = createServer((client: Socket) => {
      const upstream = connect(engine.port, '127.0.0.1');
      for (const socket of [client, upstream]) {
        proxied.add(socket);
        socket.on('close', () => proxied.delete(socket));
      }
      let budget = 40 + Math.floor(random() * 900);
      upstream.on('data', (chunk: Buffer) => {
        if (chunk.length < budget) {
          budget -= chunk.length;
          return void client.write(chunk);
        }
        client.write(chunk.subarray(0, budget));
        cuts += 1;
        client.destroy();
        upstream.destroy();
      });
      client.on('data', (chunk) => upstream.write(chunk));
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy!.listen(0, '127.0.0.1', () => resolve()));
    const through = { url: `http://127.0.0.1:${(proxy.address() as { port: number }).port}`, credential: engine.credential };

    const followed: RunEvent[] = [];
    for (let run = 1; cuts < 50; run++) {
      if (run > 10) throw new Error(`only ${cuts} cuts in 10 runs`);
      const runId = `cut-${run}`;
      const { executionArn } = harness.stack.engine.startExecution({ name: runId, input: { runId, input: {} } });
      await until(async () => (await harness!.stack.ledger.getRun(runId)) !== undefined, 'the run created');
      const events = await collect(followEvents(through, runId, { retryMs: 1, maxAttempts: 1000, signal: stop.signal }));
      await harness.stack.engine.waitForExecution(executionArn);
      const all = settledEvents((await readRunRecords(harness.stack.ledger, runId))!);
      expect(events.map((event) => event.id)).toEqual(all.map((event) => event.id));
      expect(events).toEqual(all);
      followed.push(...events);
    }
    expect(cuts).toBeGreaterThanOrEqual(50);
    expect(new Set(followed.map((event) => JSON.stringify(event))).size).toBe(followed.length);
  });
});
