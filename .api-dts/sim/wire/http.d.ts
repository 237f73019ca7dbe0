import { type IncomingMessage } from 'node:http';
import type { Fault } from './policy.js';
/**
 * The plumbing the three wire servers share: a real `node:http` server on 127.0.0.1 (port 0 unless
 * told) — or `node:http2` cleartext for Bedrock, whose SDK client speaks only HTTP/2 — a request counter (SDK retries are off: one call, one request), a queue of injected faults,
 * and the parsed body of every request the server accepted, for tests to assert on.
 */
export interface WireReply {
    status: number;
    headers?: Record<string, string>;
    body: unknown;
    /** A server-sent event stream instead of a JSON body (a streamed answer): sent as is, `text/event-stream`. */
    events?: string;
}
export interface WireRequest {
    method: string;
    path: string;
    headers: IncomingMessage['headers'];
    /** The body as received: strict checks compare bytes, not re-serialized JSON. */
    raw: string;
}
/** A running wire server (`startAnthropicServer`, `startOpenAIServer`, `startBedrockServer`). */
export interface WireServer {
    /** `http://127.0.0.1:<port>`: the SDK's base URL (OpenAI's with `/v1`, Bedrock's `endpoint`). */
    readonly url: string;
    /** The port it listens on. */
    readonly port: number;
    /** Requests received, faulted and refused ones included. */
    requestCount(): number;
    /** Answer the next `count` requests with `fault` (queued after any faults already pending). */
    failNext(count: number, fault: Fault): void;
    /** Bodies (parsed JSON) of the requests that passed the checks and got a success answer, in order. */
    acceptedBodies(): readonly unknown[];
    /** Stops listening and drops open connections. */
    close(): Promise<void>;
}
export interface WireHandler {
    /** Checks and answers one request; a success carries the accepted body for `acceptedBodies()`. */
    handle(request: WireRequest): (WireReply & {
        accepted?: unknown;
    }) | Promise<WireReply & {
        accepted?: unknown;
    }>;
    fault(fault: Fault): WireReply;
}
export interface WireServerOptions {
    port?: number | undefined;
    /** @default 'http1' */
    protocol?: 'http1' | 'http2';
}
export declare function startWireServer(handler: WireHandler, options?: WireServerOptions): Promise<WireServer>;
/** The first value of a header, or undefined when absent or blank. */
export declare function header(request: WireRequest, name: string): string | undefined;
export declare function parseJson(raw: string): {
    ok: true;
    value: unknown;
} | {
    ok: false;
};
