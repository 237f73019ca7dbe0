import { afterEach, describe, expect, it } from 'vitest';
import { followEvents, type RunEvent } from '../../client/events.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { POLL_MS, type StreamLimits } from '../../lambdas/runs/event-feed.js';
import { readRunRecords, settledEvents } from '../../lambdas/runs/events.js';
import { awsStreamLimits } from '../../lambdas/runs/stream-limits.js';
import type { TurnRecord } from '../../lambdas/records/ledger-records.js';
import { API_GATEWAY_STREAM, LAMBDA_STREAMED_RESPONSE_BYTES, servedAsApiGatewayStreams, streamedResponseLimits, type StreamedResponseLimits } from '../../local/aws/api-gateway-streaming.js';
import { startApprovalApi } from '../../local/services/approval-api.js';
import { localRunEvents } from '../../local/services/run-events.js';
import { call, run, turn } from '../contract/fixtures.js';
import { exampleTemplate } from '../infra/example-template.js';
import { manualClock } from '../support/manual-clock.js';

/**
 * The twin's run events stream as AWS serves it (local/aws/api-gateway-streaming.ts): the function
 * behind API Gateway's response streaming, which cuts a stream at its limits whatever the function
 * does. Over a real socket, the embedded ledger and a clock the test moves: each limit cuts the
 * stream, and the client resumes after it with every event once.
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

/** The function (`functionLimits`: what it keeps itself) behind the twin's API Gateway (`limits`). */
async function served(limits: StreamedResponseLimits, functionLimits: StreamLimits = {}) {
  const clock = manualClock();
  const ledger = EmbeddedLedger.open();
  const cuts: string[] = [];
  const route = servedAsApiGatewayStreams(localRunEvents(ledger, clock, { limits: functionLimits }), clock, limits, (limit) => cuts.push(limit));
  const api = await startApprovalApi(async () => ({ statusCode: 200, body: '{}' }), { credential: CREDENTIAL, runEvents: route });
  closers.push(api.close, () => ledger.close());
  const at = () => clock.now();
  const steps = {
    create: () => ledger.createRun(run('r1', { createdAt: at().toISOString() })),
    turn: (number: number, calls: number) => ledger.recordTurn({ ...toolTurn(number, calls), runId: 'r1' }),
    claim: (t: number, c: number) => ledger.claimCall(call({ runId: 'r1', turn: t, call: c, toolCallId: `toolu_${t}_${c}`, name: 'lookup', effect: 'read', leaseUntil: new Date(at().getTime() + 60_000).toISOString() }), at()),
    complete: (t: number, c: number) => ledger.completeCall({ runId: 'r1', turn: t, call: c, outcome: { outcome: 'ok', result: `{"call":${c}}`, latencyMs: 1 }, now: at() }),
    finish: () => ledger.finishRun('r1', { status: 'succeeded' }, at()),
  };
  const follow = () => {
    const got: RunEvent[] = [];
    let connections = 0;
    const counting: typeof fetch = (input, init) => (connections++, fetch(input, init));
    const done = (async () => {
      // The relay's cuts are what these tests watch, not the client's own idle watch (run-events-route.test.ts):
      // the clock moves here faster than the socket carries the heartbeats, which would look like silence to it.
      for await (const event of followEvents({ url: `http://127.0.0.1:${api.port}`, credential: CREDENTIAL, fetch: counting }, 'r1', { clock, retryMs: 1, idleMs: HOUR })) got.push(event);
    })();
    return { got, done, connections: () => connections };
  };
  return { clock, cuts, steps, follow, events: async () => settledEvents((await readRunRecords(ledger, 'r1'))!).map((event) => event.id) };
}

/** Turns of the event loop (never a timer) until `ready` holds. */
async function until(ready: () => boolean, what: string): Promise<void> {
  for (let turn = 0; !ready(); turn++) {
    if (turn > 20_000) throw new Error(`never: ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

const HOUR = 3_600_000;
const AWS_LIKE: StreamedResponseLimits = { maxDurationMs: API_GATEWAY_STREAM.maxDurationMs, idleTimeoutMs: API_GATEWAY_STREAM.idleTimeoutMs.EDGE, maxBytes: LAMBDA_STREAMED_RESPONSE_BYTES };

describe("the twin's API Gateway in front of the run events function", () => {
  it('takes its limits from the template: 15 minutes, the edge-optimized API\'s 30 s idle timeout, 200 MB, the function\'s 900 s', () => {
    expect(streamedResponseLimits(exampleTemplate().toJSON())).toEqual({ maxDurationMs: 15 * 60_000, idleTimeoutMs: 30_000, maxBytes: 200 * 1024 * 1024, functionTimeoutMs: 900_000 });
  });

  it('cuts a stream left idle past the idle timeout (a function that beats too seldom); the client resumes, every event once', async () => {
    const { clock, cuts, steps, follow, events } = await served(AWS_LIKE, { heartbeatMs: HOUR });
    await steps.create();
    await steps.turn(1, 1);
    const client = follow();
    await until(() => client.got.length === 3, 'the first events');
    clock.advance(AWS_LIKE.idleTimeoutMs);
    await until(() => cuts.length === 1 && client.connections() >= 2, 'cut, and reconnected');
    expect(cuts).toEqual(['idleTimeoutMs']);
    await steps.claim(1, 1);
    await steps.complete(1, 1);
    await steps.turn(2, 0);
    await steps.finish();
    clock.advance(POLL_MS);
    await client.done;
    expect(client.got.map((event) => event.id)).toEqual(await events());
  });

  it('never cuts a stream whose function beats every 15 s and ends itself a minute before its timeout (awsStreamLimits)', async () => {
    const { clock, cuts, steps, follow } = await served(AWS_LIKE, awsStreamLimits(900_000));
    await steps.create();
    const client = follow();
    await until(() => client.got.length === 1, 'run.started');
    for (let elapsed = 0; elapsed < 14 * 60_000; elapsed += 5_000) {
      clock.advance(5_000);
      await until(() => true, 'a turn');
    }
    await until(() => client.connections() === 2, 'the function ended its stream at 14 minutes; the client reconnected');
    expect(cuts).toEqual([]);
  });

  it('cuts a stream at its longest duration (a function that would go on); the client resumes, every event once', async () => {
    const limits = { ...AWS_LIKE, maxDurationMs: 60_000, idleTimeoutMs: HOUR };
    const { clock, cuts, steps, follow, events } = await served(limits);
    await steps.create();
    const client = follow();
    await until(() => client.got.length === 1, 'run.started');
    await steps.turn(1, 0);
    clock.advance(POLL_MS);
    await until(() => client.got.length === 3, 'turn 1');
    clock.advance(limits.maxDurationMs);
    await until(() => cuts.length === 1 && client.connections() >= 2, 'cut, and reconnected');
    expect(cuts).toEqual(['maxDurationMs']);
    await steps.finish();
    clock.advance(POLL_MS);
    await client.done;
    expect(client.got.map((event) => event.id)).toEqual(await events());
  });

  it('cuts a response at its size cap, mid-frame; the client drops the torn frame and resumes after the last whole one until it has every event, each once', async () => {
    const limits = { ...AWS_LIKE, maxBytes: 450 };
    const { cuts, steps, follow, events } = await served(limits);
    await steps.create();
    await steps.turn(1, 2);
    for (const c of [1, 2]) {
      await steps.claim(1, c);
      await steps.complete(1, c);
    }
    await steps.turn(2, 0);
    await steps.finish();
    const client = follow();
    await client.done;
    expect(cuts.length).toBeGreaterThan(1);
    expect(new Set(cuts)).toEqual(new Set(['maxBytes']));
    expect(client.got.map((event) => event.id)).toEqual(await events());
  });

  it('passes a refusal on as the API answered it: an unknown run is 404 with its message, nothing streamed', async () => {
    const { follow, cuts } = await served(AWS_LIKE);
    const client = follow();
    await expect(client.done).rejects.toMatchObject({ status: 404, message: expect.stringContaining('runId') });
    expect(cuts).toEqual([]);
  });
});
