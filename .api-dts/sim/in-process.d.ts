import type { Readable } from 'node:stream';
import { type ConnectionLimits } from '../lambdas/shared/loopback-server.js';
/**
 * A simulated service as one function from request to reply, with no socket: served on loopback by
 * `serveHttp` (for other processes, and the HTTP clients' own tests), and called in process by
 * `inProcessFetch` (for the engine's own steps, so that a local agent step pays no HTTP round trip:
 * a loopback `fetch` costs more than the rest of the step). Both go through the same function, so a
 * status code, an error body or a dropped answer is the same either way.
 */
export interface ServiceRequest {
    readonly method: string;
    /** Path and query, e.g. `/v1/orders/o_1?expand=items`. */
    readonly url: string;
    /** Lowercase names, as node:http gives them. */
    readonly headers: Readonly<Record<string, string | undefined>>;
    readonly body: string;
}
export interface ServiceReply {
    readonly status: number;
    readonly headers?: Readonly<Record<string, string>>;
    readonly body: string;
}
/** The answer that never comes: the connection is cut after the service acted (a lost response). */
export declare const DROPPED: unique symbol;
export type HttpService = (request: ServiceRequest) => Promise<ServiceReply | typeof DROPPED>;
/** A JSON reply. */
export declare function jsonReply(status: number, body: unknown, headers?: Record<string, string>): ServiceReply;
/**
 * A `fetch` that answers requests to `origin` (e.g. `http://127.0.0.1:4010`) by calling `service`
 * in process, and sends any other request to `fallback` (the network): a URL pointed elsewhere
 * still goes where it points. Like fetch, it rejects with the signal's reason when aborted, and
 * with `TypeError: fetch failed` when the answer is dropped.
 */
export declare function inProcessFetch(origin: string, service: HttpService, fallback?: typeof fetch): typeof fetch;
export interface HttpServed {
    readonly url: string;
    readonly port: number;
    close(): Promise<void>;
}
/**
 * Serves `service` on 127.0.0.1 (`port`, or any free one). A body over `maxBodyBytes` is answered
 * with `tooLarge` (read to the end all the same, so that the answer can be sent); a service that
 * throws is answered with `failed(error)`. Its connections are bounded by `limits`
 * (lambdas/shared/loopback-server.ts).
 */
export declare function serveHttp(service: HttpService, options: {
    port?: number;
    maxBodyBytes?: number;
    tooLarge: () => ServiceReply;
    failed: (error: unknown) => ServiceReply;
    limits?: ConnectionLimits;
}): Promise<HttpServed>;
/** The body as text, or undefined past the limit (read to the end all the same, so an answer can be sent). */
export declare function readBody(req: Readable, maxBytes: number): Promise<string | undefined>;
