import type { Clock } from '../shared/ports.js';
import { RUN_ID_PATTERN, runIdRefusal } from '../runs/run-id.js';
import { eventsAfter, isFinal, UnknownEventId, type RunEvent } from '../runs/events.js';
import { streamRunEvents, type EventSink, type RunFeeds, type StreamLimits } from '../runs/event-feed.js';

/**
 * `GET /v1/runs/{id}/events`: the run's progress as Server-Sent Events (runs/events.ts), the same
 * route locally (local/services/approval-api.ts, behind the engine's credential) and on AWS (a
 * streaming Lambda; infra/run-events.ts).
 *
 *   GET /v1/runs/r1/events                          every event from the start
 *   GET /v1/runs/r1/events?after=t000003.1.model    those after it
 *   Last-Event-ID: t000003.1.model                  the same; a reconnecting EventSource sends it,
 *                                                   and it wins over `after` (it is the newer point)
 *   → 200 text/event-stream: `id:`/`event:`/`data:` frames, `: heartbeat` comments while idle,
 *     closed after `run.finished`
 *   → 204 a resume point that is the run's last event (`z.run`): nothing more will come
 *   → 404 no such run · 400 a run id no run can have (as `GET /v1/runs/{id}`), a resume point that
 *     is not an event of the run, or a query key other than `after` (nothing is streamed)
 */

/** What the transport gives the route: a refusal in the API's JSON shape, a 204, or the opened stream. */
export interface StreamResponse {
  refuse(status: 400 | 404, message: string): void;
  /** Answers 204 No Content: the stream asked for has nothing left to send, ever (SSE's "do not reconnect"). */
  nothingMore(): void;
  /** Sends 200 with the event-stream headers; what is written to the sink goes out as it is written. */
  open(headers: Record<string, string>): EventSink;
  /** Calls `stop` when the client goes away. */
  onClose(stop: () => void): void;
}

export interface RunEventsRequest {
  runId: string;
  /** The query's parameters as the transport has them (API Gateway's `queryStringParameters`): only `after` is taken. */
  query: Readonly<Record<string, string | undefined>>;
  /** The `Last-Event-ID` header; undefined (or empty, which the spec means as none) when absent. */
  lastEventId: string | undefined;
}

export const EVENT_STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  // Proxies that buffer (nginx) would hold the events back.
  'x-accel-buffering': 'no',
};

/**
 * The route's query takes `after` alone: another key is refused 400 naming it, in the words every
 * route of the runs API refuses one with (their strict zod schemas: runs/runs-api.ts ListQuery).
 * Checked by hand: zod is no part of the RunEvents function's cold start (test/readme/own-agent.test.ts
 * holds what a cold start loads under 1 MB).
 */
function queryRefusal(query: RunEventsRequest['query']): string | undefined {
  const unknown = Object.keys(query).filter((key) => key !== 'after');
  if (unknown.length === 0) return undefined;
  return `invalid query: Unrecognized key${unknown.length > 1 ? 's' : ''}: ${unknown.map((key) => JSON.stringify(key)).join(', ')}`;
}

export function createRunEventsRoute(deps: { feeds: RunFeeds; clock: Clock; limits?: StreamLimits }) {
  return async (request: RunEventsRequest, response: StreamResponse): Promise<void> => {
    // A run id no run can have is refused as `GET /v1/runs/{runId}` refuses it, not looked up and
    // answered 404: "no such run" would tell the caller to wait for one that can never exist.
    if (!RUN_ID_PATTERN.test(request.runId)) return response.refuse(400, runIdRefusal());
    const refused = queryRefusal(request.query);
    if (refused) return response.refuse(400, refused);
    const fromHeader = request.lastEventId !== undefined && request.lastEventId !== '';
    const cursor = fromHeader ? request.lastEventId : request.query['after'];
    const field = fromHeader ? 'Last-Event-ID' : 'after';
    const events = await deps.feeds.current(request.runId, cursor);
    if (!events) return response.refuse(404, `runId: no run ${JSON.stringify(request.runId.slice(0, 120))}`);
    let rest: RunEvent[];
    try {
      rest = eventsAfter(events, cursor, field);
    } catch (error) {
      if (error instanceof UnknownEventId) return response.refuse(400, error.message);
      throw error;
    }
    // Resumed after the run's last event: the stream would open and wait, beating, for an event
    // that never comes. An EventSource asks exactly this when it reconnects after the stream ended
    // (`Last-Event-ID: z.run`), and the SSE specification's answer that stops it reconnecting is 204.
    if (rest.length === 0 && isFinal(events.at(-1))) return response.nothingMore();
    const sink = response.open(EVENT_STREAM_HEADERS);
    response.onClose(streamRunEvents({ feeds: deps.feeds, clock: deps.clock }, request.runId, cursor, sink, deps.limits));
  };
}

export type RunEventsRoute = ReturnType<typeof createRunEventsRoute>;
