import { nodeHttp } from '../lambdas/shared/node-http.js';

/**
 * What the client reads of an answer (a `fetch` Response has it): its status and its text.
 */
export interface Answer {
  readonly ok: boolean;
  readonly status: number;
  text(): Promise<string>;
}

/** How the client sends one request: `fetch`, or one of the two below. */
export type Send = (url: string, init: { method: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal }) => Promise<Answer>;

/**
 * One request to a loopback address over `node:http`, for `serve`'s runs API on this machine:
 * the same request and answer as `fetch` sends and reads, without loading fetch's implementation
 * (Node's bundled undici, with TLS and HTTP/2: ~100 ms of CPU in a process that only asks a
 * question, half of what `savepoint status` may cost: issue 38). Each request on its own
 * connection, closed after it (a command asks once or twice).
 */
export const loopbackRequest: Send = (url, init) =>
  new Promise((resolve, reject) => {
    // fetch gives up on a server that sends nothing for 5 minutes (undici's headersTimeout and
    // bodyTimeout); so does this, or a serve that hangs (suspended with Ctrl-Z: its socket still
    // takes connections) would hold `status`, `wait` and the MCP server's reads for ever.
    let silence: ReturnType<typeof setTimeout> | undefined;
    const quiet = () => {
      clearTimeout(silence);
      silence = setTimeout(() => request.destroy(new Error(`${init.method} ${new URL(url).origin}: nothing received for ${LOOPBACK_SILENCE_MS / 1000} s`)), LOOPBACK_SILENCE_MS);
    };
    const fail = (error: Error) => (clearTimeout(silence), reject(error));
    const request = nodeHttp().request(url, { method: init.method, headers: { ...init.headers, connection: 'close' }, ...(init.signal && { signal: init.signal }) }, (response) => {
      quiet();
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => (quiet(), chunks.push(chunk)));
      response.on('error', fail);
      response.on('end', () => {
        clearTimeout(silence);
        const status = response.statusCode ?? 0;
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ ok: status >= 200 && status < 300, status, text: async () => text });
      });
    });
    request.on('error', fail);
    quiet();
    request.end(init.body);
  });

/** How long a loopback request waits for its answer's next bytes: fetch's (undici's) 300 s. */
export const LOOPBACK_SILENCE_MS = 300_000;

/** Whether `base` is a loopback `http://` address (what `serve` publishes), which loopbackRequest reaches. */
export function isLoopback(base: string): boolean {
  return /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\//.test(base);
}

/**
 * Whether `error` is a connection to a local engine that has ended (refused, or reset as it
 * closed): no answer came, and the engine that would have given it is gone.
 */
export function engineGone(error: unknown): boolean {
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth += 1) {
    const code = (at as { code?: unknown }).code;
    if (code === 'ECONNRESET' || code === 'ECONNREFUSED' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') return true;
  }
  return false;
}
