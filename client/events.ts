import type { RunEvent, RunEventType } from '../lambdas/runs/events.js';
import type { Clock } from '../lambdas/shared/ports.js';
import { RUN_ID_PATTERN, runIdRefusal } from '../lambdas/runs/run-id.js';
import { refusalOf, RunsApiError } from './runs-api-error.js';

export type { RunEvent, RunEventType };

/**
 * Where the runs API is: an engine's origin and the owner's credential (its engine.json), or the
 * API's base (`…/v1`, what `connect` holds), with a signing `fetch` for a stack.
 */
export type EventsAddress = { readonly url: string; readonly credential?: string } | { readonly base: string };

/** Where a run's events are served, and how to find it again. */
export type EventsEndpoint = EventsAddress & {
  /** @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /**
   * Looks the endpoint up again before each reconnection: an engine that restarted publishes a new
   * port and credential in its state directory. @default the same address
   */
  readonly locate?: () => Promise<EventsAddress>;
};

export interface FollowOptions {
  /** Resume after this event id (one this stream gave): only later events are yielded. @default from the first event */
  readonly after?: string;
  /**
   * Consecutive failed connections (refused, reset, a 5xx) before giving up; an event received
   * resets the count. @default 12
   */
  readonly maxAttempts?: number;
  /** The first reconnection is at once, then after `retryMs`, doubling to 30 s. @default the server's `retry:` (1 s) */
  readonly retryMs?: number;
  /**
   * A connection that brings nothing (not an event, not a heartbeat) for this long is taken as
   * dropped and reconnected: a server that froze, or a network path that died without a reset,
   * leaves the socket open with nothing ever coming. @default IDLE_MS (three of the server's 15 s heartbeats)
   */
  readonly idleMs?: number;
  /** The clock reconnection delays and the idle timeout run on (its `after`). @default real time */
  readonly clock?: Clock;
  /** Stops following (the iterator ends). */
  readonly signal?: AbortSignal;
}

const MAX_RETRY_MS = 30_000;
/** The server beats every 15 s while idle (lambdas/runs/event-feed.ts HEARTBEAT_MS); three missed beats is a dead connection. */
export const IDLE_MS = 45_000;

/**
 * A run's events, in order, each once, until the run's last (`run.finished`). A dropped connection
 * (or an engine that crashed and came back) is reconnected by itself with `Last-Event-ID`, the id
 * of the last event yielded, so the caller sees no gap and no repeat.
 *
 * @example
 * ```ts
 * import { followEvents } from 'savepoint/client';
 *
 * for await (const event of followEvents({ url, credential }, runId)) {
 *   console.log(event.id, event.type, event.data);
 * }
 * ```
 */
export async function* followEvents(endpoint: EventsEndpoint, runId: string, options: FollowOptions = {}): AsyncGenerator<RunEvent, void, undefined> {
  // Sent, `''` would ask `/runs//events` (no route: a 404 read as "no such run") and `a/b` another
  // path: a run id no run can have is refused here, before any request, as the API refuses it.
  if (typeof runId !== 'string' || !RUN_ID_PATTERN.test(runId)) throw new RunsApiError(400, runIdRefusal(runId));
  const doFetch = endpoint.fetch ?? globalThis.fetch;
  // A reconnection delay keeps the process alive (a plain timer, not an unref'd one): an app whose
  // only work is following a run would otherwise exit in the middle of it, its await unsettled.
  const after = (ms: number, fire: () => void): (() => void) => {
    if (options.clock?.after) return options.clock.after(ms, fire);
    const timer = setTimeout(fire, ms);
    return () => clearTimeout(timer);
  };
  // The signal ends a reconnection delay too: a caller that stops following is not held up to 30 s.
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const cancel = after(ms, done);
      options.signal?.addEventListener('abort', done, { once: true });
      function done() {
        cancel();
        options.signal?.removeEventListener('abort', done);
        resolve();
      }
    });
  const idleMs = options.idleMs ?? IDLE_MS;
  const maxAttempts = options.maxAttempts ?? 12;
  let last = options.after;
  let retryMs = options.retryMs;
  let failures = 0;
  let where: EventsAddress = endpoint;
  for (;;) {
    if (options.signal?.aborted) return;
    let response: Response | undefined;
    let problem: unknown;
    // This connection's own end: the caller's signal, or nothing received for idleMs (re-armed by every chunk).
    const connection = new AbortController();
    const stop = () => connection.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', stop, { once: true });
    let idle = false;
    let cancelIdle = () => {};
    const alive = () => {
      cancelIdle();
      cancelIdle = after(idleMs, () => {
        idle = true;
        connection.abort(new Error(`events of ${runId}: nothing received for ${idleMs} ms`));
      });
    };
    const release = () => {
      cancelIdle();
      options.signal?.removeEventListener('abort', stop);
    };
    alive();
    try {
      response = await doFetch(eventsUrl(where, runId), {
        headers: { accept: 'text/event-stream', ...(last !== undefined && { 'last-event-id': last }) },
        signal: connection.signal,
      });
    } catch (error) {
      problem = idle ? connection.signal.reason : error;
    }
    // 204: the run is over and `last` was its last event (an `after` the caller kept): nothing more will come.
    if (response?.status === 204) {
      release();
      return;
    }
    // Refused (no such run 404, a resume point the run does not have 400, the credential 401/403): not retried.
    if (response && response.status >= 400 && response.status < 500) {
      const refusal = new RunsApiError(response.status, await refusalOf(response));
      release();
      throw refusal;
    }
    if (response?.ok && response.body) {
      // Set while the caller holds an event: if it leaves its loop then (a break, a return, an
      // exception of its own), this iterator is closed where it yielded, and the connection with it.
      let leaving = false;
      try {
        for await (const frame of sseFrames(response.body, alive)) {
          // The signal ends the iteration where it is: not after the frames the last read brought
          // (a whole run's events can come in one chunk). Leaving the loop cancels the body.
          if (options.signal?.aborted) return;
          if (frame.retry !== undefined && options.retryMs === undefined) retryMs = frame.retry;
          if (frame.id === undefined || frame.event === undefined) continue;
          // Ids are positions in the run: one at or before the last yielded would be a repeat.
          if (last !== undefined && frame.id <= last) continue;
          const event: RunEvent = { id: frame.id, type: frame.event as RunEventType, data: JSON.parse(frame.data) as Record<string, unknown> };
          last = event.id;
          failures = 0;
          // The caller's time with the event is not the connection's silence.
          cancelIdle();
          leaving = true;
          yield event;
          if (event.type === 'run.finished') return;
          leaving = false;
          alive();
        }
      } catch (error) {
        // Closing a connection that had dropped meanwhile fails: when the caller is leaving, that is
        // no reason to connect again. Taken for one, the iterator went on reconnecting, and the
        // caller's own exception waited behind it for ever (a stream with nothing new, heartbeats).
        if (leaving) return;
        problem = idle ? connection.signal.reason : error; // the connection dropped (or went silent) mid-stream
      } finally {
        release();
      }
    } else if (response) {
      problem = new Error(`events of ${runId}: HTTP ${response.status}`);
      await response.body?.cancel().catch(() => undefined);
    }
    release();
    if (options.signal?.aborted) return;
    failures += 1;
    if (failures > maxAttempts) throw new Error(`events of ${runId}: ${maxAttempts} connections in a row failed; the last: ${String(problem ?? 'the stream ended before the run did')}`, { cause: problem });
    const delay = failures === 1 ? 0 : Math.min((retryMs ?? 1000) * 2 ** (failures - 2), MAX_RETRY_MS);
    if (delay > 0) await sleep(delay);
    if (endpoint.locate) where = await endpoint.locate().catch(() => where);
  }
}

function eventsUrl(where: EventsAddress, runId: string): string {
  const base = 'base' in where ? where.base.replace(/\/+$/, '') : `${where.url.replace(/\/+$/, '')}${where.credential === undefined ? '' : `/${where.credential}`}/v1`;
  return `${base}/runs/${encodeURIComponent(runId)}/events`;
}


/** One dispatched SSE message: the fields the specification's parser keeps. */
export interface SseFrame {
  id?: string;
  event?: string;
  data: string;
  retry?: number;
}

/**
 * The frames of an event stream, as the SSE specification parses them (HTML § 9.2.6): lines end
 * with CRLF, LF or CR; a blank line dispatches; `:` starts a comment; a field without a colon has
 * an empty value; one space after the colon is dropped; `data` lines join with LF.
 */
export async function* sseFrames(body: ReadableStream<Uint8Array>, onChunk: () => void = () => {}): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buffer = '';
  let frame: SseFrame = { data: '' };
  let hasData = false;
  let pendingCr = false;
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    onChunk(); // a heartbeat (a comment) is a sign of life too
    buffer += decoder.decode(chunk, { stream: true });
    // A CR at the end of a chunk may be half of a CRLF: the LF that starts the next one is skipped.
    if (pendingCr && buffer.startsWith('\n')) buffer = buffer.slice(1);
    pendingCr = false;
    for (;;) {
      const end = buffer.search(/[\r\n]/);
      if (end < 0) break;
      const line = buffer.slice(0, end);
      const crlf = buffer[end] === '\r' && buffer[end + 1] === '\n';
      if (buffer[end] === '\r' && end + 1 === buffer.length) pendingCr = true;
      buffer = buffer.slice(end + (crlf ? 2 : 1));
      if (line === '') {
        if (hasData || frame.id !== undefined || frame.retry !== undefined) yield { ...frame, data: frame.data.replace(/\n$/, '') };
        frame = { data: '' };
        hasData = false;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') {
        frame.data += `${value}\n`;
        hasData = true;
      } else if (field === 'event') frame.event = value;
      else if (field === 'id' && !value.includes('\0')) frame.id = value;
      else if (field === 'retry' && /^\d+$/.test(value)) frame.retry = Number(value);
    }
  }
}
