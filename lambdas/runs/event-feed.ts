import type { Clock } from '../shared/ports.js';
import { timersOf } from '../shared/ports.js';
import { isFinal, settledEvents, type RunEvent, type RunRecords } from './events.js';

/**
 * Following runs' events (events.ts) as the ledger grows. New records are found by polling the
 * ledger on the injected clock — one poller per followed run, however many follow it, and only
 * while someone does — because it is the one mechanism both ledgers share (the embedded one and
 * DynamoDB on AWS, where a Lambda streaming the events reads its run's partition) and it puts no
 * write, no hook and no listener on the steps' hot path. A read is a query of one partition.
 *
 *   subscriber ──follow(runId)──► poller of runId ──every pollMs──► read(runId) ─► settledEvents
 *        ▲                              │ the list grew
 *        └──── events after its cursor ─┘
 */

/** Reads a run's records (events.ts `readRunRecords` over a ledger); undefined: no such run. */
export type ReadRun = (runId: string) => Promise<RunRecords | undefined>;

export interface RunFeeds {
  /** The run's settled events now (one read); undefined: no such run. */
  current(runId: string): Promise<RunEvent[] | undefined>;
  /**
   * Calls `listener` with the run's settled events each time they grow (the whole list: a listener
   * keeps its own cursor), until the returned function is called. Polling stops once the list
   * holds the final event, or when nobody follows the run any more.
   */
  follow(runId: string, listener: (events: readonly RunEvent[]) => void): () => void;
}

/** How often a followed run's records are read: a few times per local step at most, so a delivery lags a write by half of it. */
export const POLL_MS = 25;

export function runFeeds({ read, clock, pollMs = POLL_MS, onError = () => undefined }: { read: ReadRun; clock: Clock; pollMs?: number; onError?: (error: unknown) => void }): RunFeeds {
  const timers = timersOf(clock);
  const polled = new Map<string, { listeners: Set<(events: readonly RunEvent[]) => void>; events: readonly RunEvent[]; cancel?: () => void; reading: boolean }>();

  const poll = async (runId: string) => {
    const feed = polled.get(runId);
    if (!feed || feed.reading) return;
    feed.reading = true;
    try {
      const records = await read(runId);
      const events = records ? settledEvents(records) : [];
      if (events.length > feed.events.length) {
        feed.events = events;
        for (const listener of feed.listeners) listener(events);
      }
    } catch (error) {
      onError(error); // a read that failed (a damaged record, a throttle) is tried again on the next tick
    } finally {
      feed.reading = false;
    }
    if (polled.get(runId) === feed && feed.listeners.size > 0 && !isFinal(feed.events.at(-1))) feed.cancel = timers.after(pollMs, () => void poll(runId));
  };

  return {
    async current(runId) {
      const records = await read(runId);
      return records && settledEvents(records);
    },
    follow(runId, listener) {
      let feed = polled.get(runId);
      if (!feed) {
        feed = { listeners: new Set(), events: [], reading: false };
        polled.set(runId, feed);
        feed.listeners.add(listener);
        void poll(runId);
      } else {
        feed.listeners.add(listener);
        if (feed.events.length > 0) listener(feed.events);
      }
      const own = feed;
      return () => {
        own.listeners.delete(listener);
        if (own.listeners.size === 0 && polled.get(runId) === own) {
          own.cancel?.();
          polled.delete(runId);
        }
      };
    },
  };
}

/** One event as the SSE specification frames it: its id (what a reconnect sends back as Last-Event-ID), its type, its data on one line. */
export function sseFrame(event: RunEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/** A comment line: ignored by every client, it keeps proxies and load balancers from closing an idle stream. */
export const SSE_HEARTBEAT = ': heartbeat\n\n';

/** How long a client waits before reconnecting after a dropped stream (the `retry:` field, ms). */
export const SSE_RETRY_MS = 1000;

/** Where a stream's frames go: an HTTP response (local), or Lambda's response stream (AWS). */
export interface EventSink {
  write(text: string): void;
  end(): void;
}

export interface StreamLimits {
  /** A comment is sent after this long without an event. @default 15 s */
  heartbeatMs?: number;
  /**
   * The stream ends (without the final event) after this long; the client reconnects with the
   * last id it got. On AWS below the function's timeout, so that the function ends it, not Lambda. @default no limit
   */
  maxDurationMs?: number;
  /** The stream ends (at an event boundary) once it has sent this many bytes; the client resumes. @default no limit */
  maxBytes?: number;
}

export const HEARTBEAT_MS = 15_000;

/**
 * Sends a run's events after `after` (already checked by `eventsAfter`) to `sink` as they settle,
 * with heartbeats while idle, and ends it after the final event (or at a limit). Returns the stop
 * to call when the client goes away.
 */
export function streamRunEvents(
  { feeds, clock }: { feeds: RunFeeds; clock: Clock },
  runId: string,
  after: string | undefined,
  sink: EventSink,
  limits: StreamLimits = {},
): () => void {
  const timers = timersOf(clock);
  const heartbeatMs = limits.heartbeatMs ?? HEARTBEAT_MS;
  let cursor = after;
  let sent = 0;
  let open = true;
  let cancelHeartbeat = () => {};
  const armHeartbeat = () => {
    cancelHeartbeat();
    cancelHeartbeat = timers.after(heartbeatMs, () => {
      if (!open) return;
      sink.write(SSE_HEARTBEAT);
      armHeartbeat();
    });
  };
  const cancelDuration = limits.maxDurationMs === undefined ? () => {} : timers.after(limits.maxDurationMs, () => stop(true));
  let unfollow: (() => void) | undefined;
  sink.write(`retry: ${SSE_RETRY_MS}\n\n`);
  unfollow = feeds.follow(runId, (events) => {
    if (!open) return;
    // Ids are positions: those after the cursor are exactly the ones not sent yet.
    const fresh = cursor === undefined ? events : events.filter((event) => event.id > cursor!);
    for (const event of fresh) {
      const frame = sseFrame(event);
      sink.write(frame);
      cursor = event.id;
      sent += Buffer.byteLength(frame);
      if (isFinal(event) || (limits.maxBytes !== undefined && sent >= limits.maxBytes)) return stop(true);
    }
    if (fresh.length > 0) armHeartbeat();
  });
  function stop(end: boolean) {
    if (!open) return;
    open = false;
    cancelHeartbeat();
    cancelDuration();
    unfollow?.();
    if (end) sink.end();
  }
  // The listener may have ended the stream already (the final event was there): then let go of the feed now.
  if (open) armHeartbeat();
  else unfollow();
  return () => stop(false);
}

