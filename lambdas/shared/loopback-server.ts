import type { RequestListener, Server } from 'node:http';
import { nodeHttp } from './node-http.js';
import type { Socket } from 'node:net';

/**
 * The connection limits of every HTTP server the local engine opens (the approval API, the Step
 * Functions endpoint, the ledger endpoint, the DynamoDB emulator, the console, the CloudFormation
 * endpoint). Any local program can open connections to loopback, and each one costs the engine a
 * file descriptor: 20,000 idle ones once left it none for its own files. So a server here
 *
 *   - holds at most `maxConnections` sockets, and at most `maxPerClient` from one address;
 *   - when a new connection would pass a cap, closes an idle socket of that pool (one with no
 *     request in progress: first one that never sent a request, then the longest idle) to make
 *     room, and refuses the newcomer only when every socket is busy: idle connections, however
 *     many are opened, cannot keep a real client out;
 *   - closes a connection that has sent no request for `idleMs` (by `now`, checked whenever a
 *     connection arrives, and by Node's own socket timer), and bounds a request's headers and the
 *     whole request with Node's `headersTimeout` and `requestTimeout` (a slow-loris client that
 *     trickles bytes).
 *
 * A kept-alive socket that has served a request is closed only to make room at a cap, never for
 * its idle time: its client may send the next request at any moment (the AWS SDK's agent keeps
 * idle sockets forever: Node's nodeHttp().Agent ignores the `Keep-Alive: timeout=` hint unless given a
 * `timeout`), and a request the server has not read yet is invisible to it. Closing such a socket
 * resets that request (the kernel answers its unread bytes with RST: the client's `read
 * ECONNRESET`), and a burst that found many sockets past their idle time spent the SDK's retries.
 * Within the caps such sockets cost only the file descriptors the caps allow.
 *
 * A socket is busy from a request's headers to the end of its response: a long response (the
 * console's event stream) is never closed for being quiet. `server.maxConnections` is set a little
 * above the cap, as the hard limit for a burst that arrives faster than closed sockets are reaped.
 * On loopback every client has the address 127.0.0.1, so there the per-client cap is the total
 * cap; it separates clients of a console served on another interface.
 */
export interface ConnectionLimits {
  /** Sockets open at once. @default 128 */
  readonly maxConnections?: number;
  /** Sockets open at once from one remote address. @default 64 */
  readonly maxPerClient?: number;
  /** A connection that has sent no request for this long is closed. @default 10_000 */
  readonly idleMs?: number;
  /** Time for a request's headers to arrive (Node's `headersTimeout`). @default 10_000 */
  readonly headersMs?: number;
  /** Time for a whole request to arrive (Node's `requestTimeout`). @default 60_000 */
  readonly requestMs?: number;
  /** How often Node checks `headersMs` and `requestMs` (its `connectionsCheckingInterval`). @default 1_000 */
  readonly checkEveryMs?: number;
  /** The clock idle time is measured by. @default Date.now */
  readonly now?: () => number;
}

export const CONNECTION_LIMIT_DEFAULTS = {
  maxConnections: 128,
  maxPerClient: 64,
  idleMs: 10_000,
  headersMs: 10_000,
  requestMs: 60_000,
  checkEveryMs: 1_000,
} as const satisfies Required<Omit<ConnectionLimits, 'now'>>;

/** Sockets a burst may open past the cap before Node itself refuses them (`server.maxConnections`). */
const BURST_HEADROOM = 16;

/** An HTTP server (node:http's `createServer`) with `limits` applied. */
export function createLoopbackServer(listener: RequestListener, limits: ConnectionLimits = {}): Server {
  const { headersMs, requestMs, idleMs, checkEveryMs } = { ...CONNECTION_LIMIT_DEFAULTS, ...limits };
  const server = nodeHttp().createServer(
    // Node requires headersTimeout ≤ requestTimeout.
    { headersTimeout: Math.min(headersMs, requestMs), requestTimeout: requestMs, keepAliveTimeout: idleMs, connectionsCheckingInterval: checkEveryMs },
    listener,
  );
  return limitConnections(server, limits);
}

interface Tracked {
  readonly client: string;
  busy: number;
  /** It has sent a request: its client may send the next one at any moment. */
  served: boolean;
  /** When it last finished a response (or connected), by the limits' clock. */
  idleSince: number;
}

/**
 * Applies `limits` to a server made elsewhere (dynalite makes its own): the caps, eviction and
 * idle closing above, and the timeouts that can be set on a server after it is made (Node's check
 * interval cannot: such a server keeps its default of 30 s).
 */
export function limitConnections(server: Server, limits: ConnectionLimits = {}): Server {
  const { maxConnections, maxPerClient, idleMs, headersMs, requestMs } = { ...CONNECTION_LIMIT_DEFAULTS, ...limits };
  const now = limits.now ?? Date.now;
  server.headersTimeout = Math.min(headersMs, requestMs);
  server.requestTimeout = requestMs;
  // Sent to clients as `Keep-Alive: timeout=`, so one that honours it lets an idle socket go; its
  // timer ends in the 'timeout' listener below, which keeps a socket that has served a request.
  server.keepAliveTimeout = idleMs;
  server.maxConnections = maxConnections + BURST_HEADROOM;
  const sockets = new Map<Socket, Tracked>();
  const perClient = new Map<string, number>();

  const forget = (socket: Socket) => {
    const tracked = sockets.get(socket);
    if (!tracked) return;
    sockets.delete(socket);
    const left = (perClient.get(tracked.client) ?? 1) - 1;
    if (left > 0) perClient.set(tracked.client, left);
    else perClient.delete(tracked.client);
  };
  const close = (socket: Socket) => {
    forget(socket);
    socket.destroy();
  };
  /**
   * Closes a connection that never sent a request, unless bytes arrive on it by the event loop's
   * next poll: a loaded loop may find it idle (by the clock, or by its timer, which runs before
   * the poll) with its first request already in the receive buffer, and destroying it then would
   * reset that request. That poll reads what had arrived; then the socket is spared (its request
   * makes it busy; a request trickled too slowly is Node's headersTimeout's to close).
   */
  const checking = new Set<Socket>();
  const closeIfSilent = (socket: Socket) => {
    // Once per socket and poll, however many connections arrive in it.
    if (checking.has(socket)) return;
    checking.add(socket);
    const read = socket.bytesRead;
    setImmediate(() => {
      checking.delete(socket);
      if (sockets.get(socket)?.served === false && socket.bytesRead === read) close(socket);
    });
  };
  /** Which of two idle sockets makes room first: one that never sent a request, then the longest idle. */
  const closesFirst = (a: Tracked, b: Tracked) => (a.served === b.served ? a.idleSince < b.idleSince : !a.served);
  /** The idle socket (of `client`, when given) to close to make room, or undefined when all are busy. */
  const evictable = (client?: string) => {
    let found: [Socket, Tracked] | undefined;
    for (const entry of sockets) {
      if (entry[1].busy > 0 || (client !== undefined && entry[1].client !== client)) continue;
      if (!found || closesFirst(entry[1], found[1])) found = entry;
    }
    return found?.[0];
  };

  server.on('connection', (socket: Socket) => {
    const at = now();
    for (const [open, tracked] of sockets) if (!tracked.served && at - tracked.idleSince >= idleMs) closeIfSilent(open);
    const client = socket.remoteAddress ?? '';
    if ((perClient.get(client) ?? 0) >= maxPerClient) {
      const evicted = evictable(client);
      if (!evicted) return socket.destroy();
      close(evicted);
    }
    if (sockets.size >= maxConnections) {
      const evicted = evictable();
      if (!evicted) return socket.destroy();
      close(evicted);
    }
    sockets.set(socket, { client, busy: 0, served: false, idleSince: at });
    perClient.set(client, (perClient.get(client) ?? 0) + 1);
    // A client that closed its side counts no more: a loaded loop reaches the socket's 'close' only
    // after the connections that client opens next (in place of requests it gave up), and counting
    // both would refuse them although the client holds no more than its cap.
    socket.once('end', () => forget(socket)).once('close', () => forget(socket));
    // Node's own timer, for the time no connection arrives to run the check above.
    socket.setTimeout(idleMs);
  });
  server.on('request', (request, response) => {
    const tracked = sockets.get(request.socket);
    if (!tracked) return;
    tracked.busy++;
    tracked.served = true;
    response.once('close', () => {
      tracked.busy--;
      tracked.idleSince = now();
    });
  });
  // A listener here keeps Node from destroying every socket that times out: only one that never
  // sent a request is closed (one no longer counted is ending: Node closes it after its response).
  server.on('timeout', (socket: Socket) => {
    if (sockets.get(socket)?.served === false) closeIfSilent(socket);
  });
  return server;
}
