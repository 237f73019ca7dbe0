import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeHttp } from '../../lambdas/shared/node-http.js';
import { shownValue } from '../../lambdas/shared/text.js';
import { createServer as createHttp2Server, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { readBody } from '../in-process.js';
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
  /** Stops listening and drops open connections; a second call returns the first one's promise. */
  close(): Promise<void>;
}

export interface WireHandler {
  /** Checks and answers one request; a success carries the accepted body for `acceptedBodies()`. */
  handle(request: WireRequest): (WireReply & { accepted?: unknown }) | Promise<WireReply & { accepted?: unknown }>;
  fault(fault: Fault): WireReply;
  /**
   * The server's own refusals in the provider's error shape, so that the SDK raises its usual error
   * with the message: a body over the size limit (413) and a request whose handling threw (500).
   */
  failure(status: 413 | 500, message: string): WireReply;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** How the OpenAI and Bedrock servers' refusal of a streaming request begins (only Anthropic's streams). */
export const NO_STREAMING = 'this local server serves no streaming';

/** One start option's rule: what it must be (for the message) and the test. */
export type OptionRule = readonly [expected: string, ok: (value: unknown) => boolean];

/** A start option that must be a non-empty string (a key, a region). */
export const NON_EMPTY_STRING: OptionRule = ['a non-empty string', (value) => typeof value === 'string' && value !== ''];

/** `snapshots` of the servers whose answers name their model (Anthropic's, OpenAI's): requested id → the model it answers as. */
export const MODEL_SNAPSHOTS: OptionRule = [
  'an object of model id → the model it answers as (non-empty strings), or left out',
  (value) => value === undefined || (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((name) => typeof name === 'string' && name !== '')),
];

/** The model an answer names: the snapshot `snapshots` resolves the requested id to, else the id itself. */
export function answeringModel(snapshots: Readonly<Record<string, string>> | undefined, requested: string): string {
  return snapshots !== undefined && Object.hasOwn(snapshots, requested) ? snapshots[requested]! : requested;
}

/** The options every wire server takes. */
const SHARED_RULES: Readonly<Record<string, OptionRule>> = {
  policy: ['a function (request) => { content, stop_reason }', (value) => typeof value === 'function'],
  // None would leave every model unknown: each request refused, 404, by a server that started fine.
  models: ['a non-empty array of model ids (strings)', (value) => Array.isArray(value) && value.length > 0 && value.every((id) => typeof id === 'string' && id !== '')],
  port: ['an integer from 0 to 65535, or left out', (value) => value === undefined || (Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 65535)],
};

/**
 * A wire server's start options, checked before anything listens (plain-JavaScript callers, `as
 * any`): a TypeError naming the server, the option and the value. Unchecked, a string port
 * listened on a Unix socket of that name, a string of models accepted any substring of it as a
 * model, a missing policy failed every request and a missing key accepted requests without one.
 */
export function checkStartOptions(server: string, options: unknown, own: Readonly<Record<string, OptionRule>>): void {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${server}: options must be an object, got ${shownValue(options)}`);
  for (const [name, [expected, ok]] of Object.entries({ ...SHARED_RULES, ...own })) {
    const value = (options as Record<string, unknown>)[name];
    if (!ok(value)) throw new TypeError(`${server}: ${name} must be ${expected}, got ${shownValue(value)}`);
  }
}

export interface WireServerOptions {
  port?: number | undefined;
  /** @default 'http1' */
  protocol?: 'http1' | 'http2';
}

type Request = IncomingMessage | Http2ServerRequest;
type Response = ServerResponse | Http2ServerResponse;

export async function startWireServer(handler: WireHandler, options: WireServerOptions = {}): Promise<WireServer> {
  let requests = 0;
  const faults: Fault[] = [];
  const accepted: unknown[] = [];

  const listener = (req: Request, res: Response): void => {
    requests += 1;
    readBody(req, MAX_BODY_BYTES)
      .then(async (raw) => {
        const fault = faults.shift();
        if (fault !== undefined) return send(res, handler.fault(fault));
        if (raw === undefined) return send(res, handler.failure(413, `request body exceeds ${MAX_BODY_BYTES} bytes`));
        const path = new URL(req.url ?? '/', 'http://localhost').pathname;
        const reply = await handler.handle({ method: req.method ?? '', path, headers: req.headers, raw });
        if (reply.accepted !== undefined) accepted.push(reply.accepted);
        send(res, reply);
      })
      .catch((error: unknown) => {
        if (res.headersSent) return res.destroy();
        send(res, handler.failure(500, error instanceof Error ? error.message : String(error)));
      });
  };
  const sessions = new Set<Http2Session>();
  const server = options.protocol === 'http2' ? createHttp2Server(listener) : nodeHttp().createServer(listener);
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port: bound } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;

  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    requestCount: () => requests,
    failNext: (count, fault) => {
      for (let i = 0; i < count; i += 1) faults.push(fault);
    },
    acceptedBodies: () => accepted,
    // Once, however often it is called (a test's `finally` and its `afterEach`): a second
    // server.close() rejects with "Server is not running".
    close: () =>
      (closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive connections (HTTP/2 sessions) would hold close() until they idle out.
        if ('closeAllConnections' in server) server.closeAllConnections();
        for (const session of sessions) session.destroy();
      })),
  };
}

/** The first value of a header, or undefined when absent or blank. */
export function header(request: WireRequest, name: string): string | undefined {
  const value = request.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.trim() === '' ? undefined : first;
}

export function parseJson(raw: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch {
    return { ok: false };
  }
}

function send(res: Response, reply: WireReply): void {
  const text = reply.events ?? JSON.stringify(reply.body);
  res.writeHead(reply.status, { ...reply.headers, 'content-type': reply.events === undefined ? 'application/json' : 'text/event-stream', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
