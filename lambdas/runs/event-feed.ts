import { performance } from 'node:perf_hooks';
import type { Clock } from '../shared/ports.js';
import { timersOf } from '../shared/ports.js';
import { isFinal, settledEvents, type RunEvent, type RunRecords } from './events.js';

/**
 * Following runs' events (events.ts) as the ledger grows. New records are found by polling the
 * ledger on the injected clock — one poller per followed run, however many follow it, and only
 * while someone does — because it is the one mechanism both ledgers share (the embedded one and
 * DynamoDB on AWS, where a Lambda streaming the events reads its run's partition) and it puts no
 * write on the steps' hot path. A read is a query of one partition.
 *
 * Where the ledger is in the same process as the steps (the local engine), `wake(runId)` after a
 * record reads the run sooner than the poll would: a delivery lags its write by some steps, not a
 * poll. A delivery is a socket write per follower, so the reads wakes make are spaced by the
 * process's own work, not by the wall clock: each follower adds `WAKE_CPU_MS_PER_FOLLOWER` of the
 * process's CPU time between two of them. The followers' writes are then a fixed share of the
 * engine's CPU however many follow (a write's cost / that), and a loaded machine, which slows the
 * steps in wall time but not in CPU, does not make deliveries more frequent per step. A process
 * with nothing else to do (its event loop idle `WAKE_MS` since the read: the steps wait on a model
 * or a person) reads at once instead: its CPU time would not move.
 *
 * The poll stays for the writes of another process (a console over a state directory another
 * engine writes). Once this process's writes wake a run, they are what reads it: its poll slows to
 * `WOKEN_POLL_MS`, so that a loaded machine's slow steps are not read on the wall clock in between.
 *
 *   subscriber ──follow(runId)──► poller of runId ──every pollMs──► read(runId) ─► settledEvents
 *        ▲                              │ the list grew       ▲
 *        └──── events after its cursor ─┘                     └── wake(runId): a record was written
 */

/** Reads a run's records (events.ts `readRunRecords` over a ledger); undefined: no such run. */
export type ReadRun = (runId: string) => Promise<RunRecords | undefined>;

/**
 * A run's settled events as they grow, each one's SSE frame (its bytes, encoded once), and
 * `batch(from, opening)`: the frames from index `from` to the end in one buffer, joined once per
 * delivery however many followers are at `from` (with `opening`: after the stream's `retry:` line),
 * and written as it is to every one of them.
 */
export type FeedListener = (events: readonly RunEvent[], frames: readonly Buffer[], batch: Batch) => void;
export type Batch = (from: number, opening?: boolean) => Buffer;

export interface RunFeeds {
  /**
   * The run's settled events, reaching at least `through` if the run has it: those a poller of the
   * run holds already, else one read. Undefined: no such run.
   */
  current(runId: string, through?: string): Promise<readonly RunEvent[] | undefined>;
  /**
   * Calls `listener` with the run's settled events each time they grow (the whole list: a listener
   * keeps its own cursor) and each one's SSE frame (made once, however many follow), until the
   * returned function is called. Polling stops once the list holds the final event, or when nobody
   * follows the run any more.
   */
  follow(runId: string, listener: FeedListener): () => void;
  /**
   * A record of the run was just written (by this process): read it soon, once the process has
   * spent `wakeCpuMsPerFollower` × followers of CPU time (and `wakeMs`) since the last read, or at
   * the next poll. Many writes, one read. Nothing when nobody follows the run.
   */
  wake(runId: string): void;
}

/** How often a followed run's records are read, at the most: a delivery lags its write by about half of it. */
export const POLL_MS = 25;
/**
 * Each follower of a run stretches its polling by this much: every delivery is a socket write per
 * follower, so a run's deliveries per second are bounded by its followers (one follower: every
 * 25 ms; a hundred: every 250 ms), and what following costs the engine stays a bounded share of
 * its work however many follow (bench/events.ts).
 */
export const POLL_MS_PER_FOLLOWER = 2.5;
/**
 * The least time between two reads of a run that a write woke (many writes, one read): a run of
 * fast steps read at most 100 times a second, each read the whole run, however few follow it.
 */
export const WAKE_MS = 10;
/**
 * Each follower spaces the reads wakes make by this much of the process's CPU time (a hundred:
 * 50 ms of CPU, some 14 agent steps of the bench's; bench/events.ts). A delivery costs a socket
 * write per follower (15–35 µs), so deliveries take a few percent of the process's CPU however
 * many follow.
 */
export const WAKE_CPU_MS_PER_FOLLOWER = 0.5;

/**
 * The poll of a run this process's writes wake (ms): only what another process writes waits for
 * it, so it is slow; the wakes read the run between (see above).
 */
export const WOKEN_POLL_MS = 1000;

/** The time this process's event loop has waited with nothing to do (ms, since it started): an idle process reads a woken run at once. */
export const loopIdleMs = () => performance.eventLoopUtilization().idle;

/** The CPU time this process has used (ms, every thread): what spaces the reads wakes make. */
export const processCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

export function runFeeds({
  read,
  clock,
  pollMs = POLL_MS,
  pollMsPerFollower = POLL_MS_PER_FOLLOWER,
  wakeMs = WAKE_MS,
  wakeCpuMsPerFollower = WAKE_CPU_MS_PER_FOLLOWER,
  cpuMs = processCpuMs,
  idleMs = loopIdleMs,
  onError = () => undefined,
}: {
  read: ReadRun;
  clock: Clock;
  pollMs?: number;
  pollMsPerFollower?: number;
  wakeMs?: number;
  wakeCpuMsPerFollower?: number;
  /** The process's CPU time (ms): see `processCpuMs`. */
  cpuMs?: () => number;
  /** The time the process's event loop has idled (ms): see `loopIdleMs`. */
  idleMs?: () => number;
  onError?: (error: unknown) => void;
}): RunFeeds {
  const timers = timersOf(clock);
  interface Feed {
    listeners: Set<FeedListener>;
    events: readonly RunEvent[];
    frames: Buffer[];
    /** The frames joined from each index to the end, made when a follower first asks (reset as the list grows). */
    batch: Batch;
    reading: boolean;
    /** The next read's timer, and when it is due (clock ms). */
    cancel?: () => void;
    due: number;
    /** When the last read began (clock ms), and the process's CPU time and its loop's idle time then (ms). */
    readAt: number;
    readCpu: number;
    readIdle: number;
    /** A write woke the run since the last read began: read it again once the gap is passed. */
    woken: boolean;
    /** This process writes the run (a wake came): the wakes read it, the poll is `WOKEN_POLL_MS`. */
    written: boolean;
  }
  const polled = new Map<string, Feed>();
  /** The reads under way for `current` from the start of a run. */
  const opening = new Map<string, Promise<readonly RunEvent[] | undefined>>();
  const now = () => clock.now().getTime();
  const pollGap = (feed: Feed) => Math.max(feed.written ? WOKEN_POLL_MS : pollMs, feed.listeners.size * pollMsPerFollower);
  /**
   * How long a woken run waits for its read (ms, 0: read now): until `wakeMs` after the last read,
   * and then the followers' CPU gap since it or `wakeMs` of the loop's idleness, or the poll's gap,
   * whichever comes first. What is left is waited as wall time (CPU and idle time move no faster),
   * then checked again.
   */
  const wokenDelay = (feed: Feed) => {
    const sincePoll = feed.readAt + pollGap(feed) - now();
    const busy = Math.min(feed.readCpu + feed.listeners.size * wakeCpuMsPerFollower - cpuMs(), feed.readIdle + wakeMs - idleMs());
    const sinceWake = Math.max(feed.readAt + wakeMs - now(), busy);
    return Math.max(0, Math.min(sincePoll, sinceWake));
  };
  /** Reads the run in `delay` ms, unless a read is due sooner already. */
  const schedule = (runId: string, feed: Feed, delay: number) => {
    if (delay <= 0) return void poll(runId); // no timer for a read that is due
    const due = now() + delay;
    if (feed.cancel && feed.due <= due) return;
    feed.cancel?.();
    feed.due = due;
    feed.cancel = timers.after(delay, () => {
      feed.cancel = undefined;
      // A woken run whose CPU gap is not passed yet (the process was idle, or not given a core) waits on.
      if (feed.woken) schedule(runId, feed, wokenDelay(feed));
      else void poll(runId);
    });
  };

  const poll = async (runId: string) => {
    const feed = polled.get(runId);
    if (!feed || feed.reading) return;
    feed.cancel?.();
    feed.cancel = undefined;
    feed.reading = true;
    feed.woken = false;
    feed.readAt = now();
    feed.readCpu = cpuMs();
    feed.readIdle = idleMs();
    try {
      const records = await read(runId);
      const events = records ? settledEvents(records) : [];
      if (events.length > feed.events.length) {
        // The prefix never changes (events.ts): only the new events are framed.
        for (const event of events.slice(feed.events.length)) feed.frames.push(Buffer.from(sseFrame(event), 'latin1'));
        feed.events = events;
        feed.batch = batchOf(feed.frames);
        for (const listener of feed.listeners) listener(events, feed.frames, feed.batch);
      }
    } catch (error) {
      onError(error); // a read that failed (a damaged record, a throttle) is tried again on the next tick
    } finally {
      feed.reading = false;
    }
    if (polled.get(runId) !== feed || feed.listeners.size === 0 || isFinal(feed.events.at(-1))) return;
    schedule(runId, feed, feed.woken ? wokenDelay(feed) : pollGap(feed));
  };

  return {
    async current(runId, through) {
      // A hundred followers connecting at once cost one read, not a hundred.
      const feed = polled.get(runId);
      if (feed && feed.events.length > 0 && (through === undefined || feed.events.at(-1)!.id >= through)) return feed.events;
      // Before the first poll has read the run: those that start from its beginning share one read
      // (any read will do: the feed brings what came after). A resume point needs a read after it.
      if (through === undefined) {
        let shared = opening.get(runId);
        if (!shared) {
          shared = read(runId)
            .then((records) => records && settledEvents(records))
            .finally(() => opening.delete(runId));
          opening.set(runId, shared);
        }
        return shared;
      }
      const records = await read(runId);
      return records && settledEvents(records);
    },
    follow(runId, listener) {
      let feed = polled.get(runId);
      if (!feed) {
        feed = { listeners: new Set(), events: [], frames: [], batch: batchOf([]), reading: false, due: 0, readAt: 0, readCpu: 0, readIdle: 0, woken: false, written: false };
        polled.set(runId, feed);
        feed.listeners.add(listener);
        void poll(runId);
      } else {
        feed.listeners.add(listener);
        // Those who join a followed run share its joined frames too (a hundred joining: one join).
        if (feed.events.length > 0) listener(feed.events, feed.frames, feed.batch);
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
    wake(runId) {
      const feed = polled.get(runId);
      if (!feed || isFinal(feed.events.at(-1))) return;
      // Read once the one under way ends (what it read may predate the write), else after the gap.
      const waiting = feed.woken;
      feed.woken = true;
      feed.written = true;
      if (!feed.reading && !waiting) schedule(runId, feed, wokenDelay(feed));
    },
  };
}

/** The frames from an index to the end, joined once per index (followers in step share one buffer, and one write each). */
function batchOf(frames: readonly Buffer[]): Batch {
  const joined = new Map<number, Buffer>();
  const to = frames.length;
  return (from, opening = false) => {
    const key = opening ? -1 - from : from;
    let bytes = joined.get(key);
    if (bytes === undefined) joined.set(key, (bytes = from === to - 1 && !opening ? frames[from]! : Buffer.concat(opening ? [SSE_OPENING, ...frames.slice(from, to)] : frames.slice(from, to))));
    return bytes;
  };
}

/** The index of the first event after `id` (ids sort as positions). */
function firstAfter(events: readonly RunEvent[], id: string): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (events[middle]!.id <= id) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** One event as the SSE specification frames it: its id (what a reconnect sends back as Last-Event-ID), its type, its data on one line. */
export function sseFrame(event: RunEvent): string {
  // ASCII only (JSON's \\u escapes for the rest): a frame's length is its size in bytes, which the stream's byte limit counts.
  const data = JSON.stringify(event.data).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${data}\n\n`;
}

/** A comment line: ignored by every client, it keeps proxies and load balancers from closing an idle stream. */
export const SSE_HEARTBEAT = ': heartbeat\n\n';

/** How long a client waits before reconnecting after a dropped stream (the `retry:` field, ms). */
export const SSE_RETRY_MS = 1000;
/** What a stream opens with: the client's reconnection delay. */
const SSE_OPENING = Buffer.from(`retry: ${SSE_RETRY_MS}\n\n`, 'latin1');

/** Where a stream's frames go: an HTTP response (local), or Lambda's response stream (AWS). */
export interface EventSink {
  /** ASCII text or its bytes (a batch of frames is one buffer, the same for every follower: not copied per write). */
  write(chunk: string | Buffer): void;
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
  /** The index of the next event to send, once known (the list only grows). */
  let next: number | undefined;
  let sent = 0;
  let open = true;
  let cancelHeartbeat = () => {};
  /** When the stream last wrote (clock ms): the heartbeat is due `heartbeatMs` after it. */
  let wroteAt = clock.now().getTime();
  // One timer for the stream's life, not one per delivery: when it fires after a write, it waits out the rest.
  const armHeartbeat = (delay = heartbeatMs) => {
    cancelHeartbeat = timers.after(delay, () => {
      if (!open) return;
      const idle = clock.now().getTime() - wroteAt;
      if (idle < heartbeatMs) return armHeartbeat(heartbeatMs - idle);
      sink.write(SSE_HEARTBEAT);
      wroteAt = clock.now().getTime();
      armHeartbeat();
    });
  };
  const cancelDuration = limits.maxDurationMs === undefined ? () => {} : timers.after(limits.maxDurationMs, () => stop(true));
  let unfollow: (() => void) | undefined;
  // The opening `retry:` line goes with the first delivery (one write, not two), or alone if there is none yet.
  let opened = false;
  unfollow = feeds.follow(runId, (events, frames, batch) => {
    if (!open) return;
    // Ids are positions: those after the cursor are exactly the ones not sent yet.
    let from = next;
    if (from === undefined) from = cursor === undefined ? 0 : firstAfter(events, cursor);
    if (from >= events.length) return;
    // One write per delivery, not per event: a hundred followers cost a hundred writes a poll.
    let to = events.length;
    if (limits.maxBytes !== undefined) {
      for (let bytes = sent, index = from; index < events.length; index += 1) {
        bytes += frames[index]!.length;
        if (bytes >= limits.maxBytes) {
          to = index + 1;
          break;
        }
      }
    }
    const chunk = to === events.length ? batch(from, !opened) : Buffer.concat(opened ? frames.slice(from, to) : [SSE_OPENING, ...frames.slice(from, to)]);
    opened = true;
    sink.write(chunk);
    sent += chunk.length;
    next = to;
    cursor = events[to - 1]!.id;
    if (isFinal(events[to - 1]) || to < events.length || (limits.maxBytes !== undefined && sent >= limits.maxBytes)) return stop(true);
    wroteAt = clock.now().getTime();
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
  if (open) {
    if (!opened) sink.write(SSE_OPENING);
    opened = true;
    armHeartbeat();
  } else unfollow();
  return () => stop(false);
}

