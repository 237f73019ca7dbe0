import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { untilAborted } from '../lambdas/shared/deadline.js';
import { createLoopbackServer, type ConnectionLimits } from '../lambdas/shared/loopback-server.js';

/**
 * A simulated service as one function from request to reply, with no socket: served on loopback by
 * `serveHttp` (for other processes, and the HTTP clients' own tests), and called in process by
 * `inProcessFetch` (for the engine's own steps, so that a local agent step pays no HTTP round trip:
 * a loopback `fetch` costs more than the rest of the step). Both go through the same function, so a
 * status code, an error body or a dropped answer is the same either way.
 */

/** A request to a simulated service. */
export interface ServiceRequest {
  /** `GET`, `POST`, … */
  readonly method: string;
  /** Path and query, e.g. `/v1/orders/o_1?expand=items`. */
  readonly url: string;
  /** Lowercase names, as node:http gives them. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The body as text (empty for none). */
  readonly body: string;
}

/** A simulated service's answer. */
export interface ServiceReply {
  /** The status code. */
  readonly status: number;
  /** Response headers. @default none */
  readonly headers?: Readonly<Record<string, string>>;
  /** The body as text. */
  readonly body: string;
}

/** The answer that never comes: the connection is cut after the service acted (a lost response). */
export const DROPPED = Symbol('dropped');

export type HttpService = (request: ServiceRequest) => Promise<ServiceReply | typeof DROPPED>;

/** A JSON reply. */
export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): ServiceReply {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/**
 * A `fetch` that answers requests to `origin` (e.g. `http://127.0.0.1:4010`) by calling `service`
 * in process, and sends any other request to `fallback` (the network): a URL pointed elsewhere
 * still goes where it points. Like fetch, it rejects with the signal's reason when aborted, and
 * with `TypeError: fetch failed` when the answer is dropped.
 */
export function inProcessFetch(origin: string, service: HttpService, fallback: typeof fetch = globalThis.fetch): typeof fetch {
  const served = new URL(origin).origin;
  return async (input, init) => {
    const request = input instanceof Request ? input : undefined;
    const url = servedPath(served, typeof input === 'string' ? input : undefined) ?? new URL(request?.url ?? String(input));
    if (url.origin !== served) return fallback(input, init);
    const signal = init?.signal ?? request?.signal;
    signal?.throwIfAborted();
    const body = init?.body ?? (request && (await request.text()));
    const replying = service({
      method: (init?.method ?? request?.method ?? 'GET').toUpperCase(),
      url: `${url.pathname}${url.search}`,
      headers: headerRecord(init?.headers ?? request?.headers),
      body: typeof body === 'string' || body === undefined || body === null ? (body ?? '') : await new Response(body).text(),
    });
    // As a socket does: an abort while the service works ends the request at once, with the
    // signal's reason (the service goes on, as a server does with a request whose client left).
    const reply = signal ? await untilAborted(replying, signal) : await replying;
    if (reply === DROPPED) throw new TypeError('fetch failed', { cause: new Error('other side closed (the service dropped its answer)') });
    return new (InProcessResponse ??= inProcessResponseClass())(reply.body, reply.status, reply.headers);
  };
}

/**
 * A URL on the served origin, as `new URL(text)` would read it, without parsing it: the text is the
 * origin, then a path (and query) made only of characters the URL parser keeps as they are, with
 * no dot segment (which it would resolve). Undefined for any other text, which `new URL` reads.
 */
function servedPath(served: string, text: string | undefined): Pick<URL, 'origin' | 'pathname' | 'search'> | undefined {
  if (text === undefined || !text.startsWith(served) || text.charCodeAt(served.length) !== 47 /* '/' */) return undefined;
  const rest = text.slice(served.length);
  if (!KEPT_AS_IS.test(rest) || DOT_SEGMENT.test(rest)) return undefined;
  const query = rest.indexOf('?');
  return query < 0 ? { origin: served, pathname: rest, search: '' } : { origin: served, pathname: rest.slice(0, query), search: query === rest.length - 1 ? '' : rest.slice(query) };
}
/** A path and query the URL parser writes back unchanged: unreserved and sub-delimiter characters but the quote (which a query of an http URL escapes), ':', '@', '/', '?' and '%'. */
const KEPT_AS_IS = /^[A-Za-z0-9\-._~!$&()*+,;=:@/?%]*$/;
/** A `.` or `..` segment of the path (before any query), which the parser resolves. */
const DOT_SEGMENT = /^[^?]*\/\.\.?(?:[/?]|$)/;


/**
 * A Response whose body is already a string: `text()` and `json()` hand it over without the web
 * stream a `new Response(text)` builds and reads back (~10× the cost of the rest of an in-process
 * call). Everything else is a Response's: status, headers, `ok`; the body as a stream is built
 * only when asked for, and then the reads go through it, so a body is used once either way.
 * Defined on the first in-process answer, not when this module loads: reading the global
 * `Response` loads Node's fetch (undici, and HTTP/2 with it), which every CLI command that
 * imports this module paid at start (~10 ms of `savepoint status`'s CPU).
 */
let InProcessResponse: ReturnType<typeof inProcessResponseClass> | undefined;

const inProcessResponseClass = () => class InProcessResponse extends Response {
  readonly #text: string;
  #used = false;
  #stream: Response["body"] | undefined;

  readonly #headerFields: Readonly<Record<string, string>> | undefined;
  #headers: Headers | undefined;

  /** The headers are made into a `Headers` when first read (the clients read the status and the text). */
  constructor(text: string, status: number, headers?: Readonly<Record<string, string>>) {
    super(null, { status });
    this.#text = text;
    this.#headerFields = headers;
  }

  override get headers(): Headers {
    return (this.#headers ??= new Headers(this.#headerFields));
  }

  override get body(): Response["body"] {
    return (this.#stream ??= this.#used ? null : new Response(this.#text).body);
  }

  override get bodyUsed(): boolean {
    return this.#used || (this.#stream?.locked ?? false);
  }

  #take(): Promise<string> {
    if (this.#stream) return new Response(this.#stream).text();
    if (this.#used) return Promise.reject(new TypeError('Body is unusable: Body has already been read'));
    this.#used = true;
    return Promise.resolve(this.#text);
  }

  override text(): Promise<string> {
    return this.#take();
  }

  override async json(): Promise<any> {
    return JSON.parse(await this.#take());
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    return new TextEncoder().encode(await this.#take()).buffer as ArrayBuffer;
  }

  override async blob(): Promise<Blob> {
    return new Blob([await this.#take()], { type: this.headers.get('content-type') ?? '' });
  }

  override clone(): Response {
    if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
    const headers = Object.fromEntries(this.headers);
    if (!this.#stream) return new InProcessResponse(this.#text, this.status, headers);
    // The body was taken as a stream: each gets a branch of it.
    const [mine, theirs] = this.#stream.tee();
    this.#stream = mine;
    return new Response(theirs, { status: this.status, headers });
  }
};

/**
 * Request headers as node:http gives them (lowercase names). A plain object (what the clients
 * pass) is read as it is; anything else goes through `Headers`, which is several times slower.
 */
function headerRecord(init: HeadersInit | undefined): Record<string, string> {
  if (init === undefined) return {};
  if (Array.isArray(init) || init instanceof Headers || typeof init !== 'object') return Object.fromEntries(new Headers(init));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(init)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    // As Headers combines a repeated name (here: the same name in two cases).
    headers[key] = key in headers ? `${headers[key]}, ${String(value).trim()}` : String(value).trim();
  }
  return headers;
}

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
export async function serveHttp(
  service: HttpService,
  options: { port?: number; maxBodyBytes?: number; tooLarge: () => ServiceReply; failed: (error: unknown) => ServiceReply; limits?: ConnectionLimits },
): Promise<HttpServed> {
  const maxBodyBytes = options.maxBodyBytes ?? 8 * 1024 * 1024;
  const server = createLoopbackServer((req, res) => {
    readBody(req, maxBodyBytes)
      .then((body) =>
        body === undefined
          ? options.tooLarge()
          : service({ method: req.method ?? 'GET', url: req.url ?? '/', headers: flatHeaders(req.headers), body }),
      )
      .catch(options.failed)
      .then((reply) => {
        if (reply === DROPPED) res.socket?.destroy();
        else send(res, reply);
      })
      .catch(() => res.destroy());
  }, options.limits);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Clients keep connections alive; without this close() waits for them to idle out.
        server.closeAllConnections();
      }),
  };
}

function flatHeaders(headers: IncomingMessage['headers']): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

/** The body as text, or undefined past the limit (read to the end all the same, so an answer can be sent). */
export function readBody(req: Readable, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > maxBytes ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, reply: ServiceReply): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(reply.status, { ...reply.headers, 'content-length': Buffer.byteLength(reply.body) });
  res.end(reply.body);
}
