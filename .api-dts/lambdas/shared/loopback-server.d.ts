import { type RequestListener, type Server } from 'node:http';
/**
 * The connection limits of every HTTP server the local engine opens (the approval API, the Step
 * Functions endpoint, the ledger endpoint, the DynamoDB emulator, the console, the CloudFormation
 * endpoint). Any local program can open connections to loopback, and each one costs the engine a
 * file descriptor: 20,000 idle ones once left it none for its own files. So a server here
 *
 *   - holds at most `maxConnections` sockets, and at most `maxPerClient` from one address;
 *   - when a new connection would pass a cap, closes the longest-idle socket of that pool (one
 *     with no request in progress) to make room, and refuses the newcomer only when every socket
 *     is busy: idle connections, however many are opened, cannot keep a real client out;
 *   - closes a socket idle for `idleMs` (by `now`, checked whenever a connection arrives, and by
 *     Node's own socket timer), and bounds a request's headers and the whole request with Node's
 *     `headersTimeout` and `requestTimeout` (a slow-loris client that trickles bytes).
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
    /** A socket with no request in progress for this long is closed. @default 10_000 */
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
export declare const CONNECTION_LIMIT_DEFAULTS: {
    readonly maxConnections: 128;
    readonly maxPerClient: 64;
    readonly idleMs: 10000;
    readonly headersMs: 10000;
    readonly requestMs: 60000;
    readonly checkEveryMs: 1000;
};
/** An HTTP server (node:http's `createServer`) with `limits` applied. */
export declare function createLoopbackServer(listener: RequestListener, limits?: ConnectionLimits): Server;
/**
 * Applies `limits` to a server made elsewhere (dynalite makes its own): the caps, eviction and
 * idle closing above, and the timeouts that can be set on a server after it is made (Node's check
 * interval cannot: such a server keeps its default of 30 s).
 */
export declare function limitConnections(server: Server, limits?: ConnectionLimits): Server;
