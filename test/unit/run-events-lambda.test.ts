import type { APIGatewayProxyEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import { createRunEventsRoute, EVENT_STREAM_HEADERS } from '../../lambdas/adapters/run-events-http.js';
import { serveRunEvents, streamingRunEventsHandler } from '../../lambdas/adapters/run-events-lambda.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { POLL_MS, runFeeds } from '../../lambdas/runs/event-feed.js';
import { readRunRecords, settledEvents } from '../../lambdas/runs/events.js';
import { awsStreamLimits } from '../../lambdas/runs/stream-limits.js';
import { run, turn } from '../contract/fixtures.js';
import { fakeAwslambda, invocationOutput, lambdaContext } from '../support/fake-awslambda.js';
import { manualClock } from '../support/manual-clock.js';

/**
 * The events route on AWS (lambdas/adapters/run-events-lambda.ts): API Gateway's proxy event in,
 * the streaming format out (metadata, delimiter, body) through an `awslambda` shaped as AWS
 * documents it, over the embedded ledger and a clock the test moves.
 */

let closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.reverse()) close();
  closers = [];
});

function setup() {
  const clock = manualClock();
  const ledger = EmbeddedLedger.open();
  closers.push(() => ledger.close());
  const reads = { count: 0 };
  const feeds = runFeeds({ read: (runId) => (reads.count++, readRunRecords(ledger, runId)), clock });
  const route = (remainingMs: number) => createRunEventsRoute({ feeds, clock, limits: awsStreamLimits(remainingMs) });
  return { clock, ledger, route, reads };
}

const proxyEvent = (runId: string, extra: Partial<APIGatewayProxyEvent> = {}) =>
  ({ httpMethod: 'GET', resource: '/runs/{runId}/events', path: `/runs/${runId}/events`, pathParameters: { runId }, queryStringParameters: null, headers: {}, ...extra }) as APIGatewayProxyEvent;

async function until(ready: () => boolean, what: string): Promise<void> {
  for (let turn = 0; !ready(); turn++) {
    if (turn > 20_000) throw new Error(`never: ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe('the events route as a streaming Lambda function', () => {
  it('streams a run\'s events after the metadata API Gateway requires, and the invocation ends with the final event', async () => {
    const { ledger, route, clock } = setup();
    await ledger.createRun(run('r1', { createdAt: clock.now().toISOString() }));
    await ledger.recordTurn({ ...turn(1), runId: 'r1' });
    const handler = streamingRunEventsHandler(fakeAwslambda, (context) => route(context.getRemainingTimeInMillis())) as (e: APIGatewayProxyEvent, s: NodeJS.WritableStream, c: unknown) => Promise<void>;
    expect((handler as unknown as { streaming?: boolean }).streaming).toBe(true); // wrapped by streamifyResponse
    const output = invocationOutput();
    let done = false;
    const invocation = handler(proxyEvent('r1'), output.stream, lambdaContext(15 * 60_000)).then(() => (done = true));
    await until(() => output.ids().length === 3, 'the first events');
    expect(output.metadata).toEqual({ statusCode: 200, headers: EVENT_STREAM_HEADERS });
    expect(done).toBe(false); // the invocation lasts as long as its stream
    await ledger.finishRun('r1', { status: 'succeeded' }, clock.now());
    clock.advance(POLL_MS);
    await invocation;
    expect(output.ids()).toEqual(settledEvents((await readRunRecords(ledger, 'r1'))!).map((event) => event.id));
    expect(output.ids().at(-1)).toBe('z.run');
  });

  it('resumes after Last-Event-ID (header names in any case) over ?after=, answers 204 after the last event, and refuses an unknown run 404, an unknown id 400 and an unknown query key 400 in the API\'s JSON', async () => {
    const { ledger, route, clock } = setup();
    await ledger.createRun(run('r1', { createdAt: clock.now().toISOString() }));
    await ledger.recordTurn({ ...turn(1), runId: 'r1' });
    await ledger.finishRun('r1', { status: 'succeeded' }, clock.now());
    const resumed = invocationOutput();
    await serveRunEvents(route(900_000), fakeAwslambda.HttpResponseStream, proxyEvent('r1', { headers: { 'Last-Event-ID': 't000001.1.model' }, queryStringParameters: { after: 'a.run' } }), resumed.stream);
    expect(resumed.ids()).toEqual(['t000001.2.budget', 'z.run']);

    const unknown = invocationOutput();
    await serveRunEvents(route(900_000), fakeAwslambda.HttpResponseStream, proxyEvent('nope'), unknown.stream);
    expect(unknown.metadata?.statusCode).toBe(404);
    expect(JSON.parse(unknown.body)).toEqual({ message: expect.stringContaining('runId') });

    const badCursor = invocationOutput();
    await serveRunEvents(route(900_000), fakeAwslambda.HttpResponseStream, proxyEvent('r1', { queryStringParameters: { after: 't999999.1.model' } }), badCursor.stream);
    expect(badCursor.metadata?.statusCode).toBe(400);
    expect(JSON.parse(badCursor.body).message).toMatch(/after/);

    const unknownKey = invocationOutput();
    await serveRunEvents(route(900_000), fakeAwslambda.HttpResponseStream, proxyEvent('r1', { queryStringParameters: { after: 'a.run', foo: '1', bar: '2' } }), unknownKey.stream);
    expect(unknownKey.metadata?.statusCode).toBe(400);
    // In the words of the other routes' strict schemas (zod's).
    expect(JSON.parse(unknownKey.body)).toEqual({ message: 'invalid query: Unrecognized keys: "foo", "bar"' });

    // After the run's last event nothing more will come: 204, and the invocation ends (no stream held to its timeout).
    const over = invocationOutput();
    await serveRunEvents(route(900_000), fakeAwslambda.HttpResponseStream, proxyEvent('r1', { headers: { 'last-event-id': 'z.run' } }), over.stream);
    expect(over.metadata?.statusCode).toBe(204);
    expect(over.body).toBe('');
  });

  it('ends the stream before the function\'s timeout (a minute early) without the final event, and stops reading once API Gateway closes its side', async () => {
    const { ledger, route, clock, reads } = setup();
    await ledger.createRun(run('r1', { createdAt: clock.now().toISOString() }));
    const output = invocationOutput();
    const invocation = serveRunEvents(route(5 * 60_000), fakeAwslambda.HttpResponseStream, proxyEvent('r1'), output.stream);
    await until(() => output.ids().length === 1, 'run.started');
    clock.advance(4 * 60_000);
    await invocation;
    expect(output.ids()).toEqual(['a.run']);

    const gone = invocationOutput();
    const closed = serveRunEvents(route(900_000), fakeAwslambda.HttpResponseStream, proxyEvent('r1'), gone.stream);
    await until(() => gone.ids().length === 1, 'run.started');
    gone.stream.destroy();
    await closed;
    const before = reads.count;
    clock.advance(60 * POLL_MS);
    await until(() => true, 'a turn');
    expect(reads.count).toBe(before);
  });
});
