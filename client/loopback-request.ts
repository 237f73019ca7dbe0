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
    const request = nodeHttp().request(url, { method: init.method, headers: { ...init.headers, connection: 'close' }, ...(init.signal && { signal: init.signal }) }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ ok: status >= 200 && status < 300, status, text: async () => text });
      });
    });
    request.on('error', reject);
    request.end(init.body);
  });

/** Whether `base` is a loopback `http://` address (what `serve` publishes), which loopbackRequest reaches. */
export function isLoopback(base: string): boolean {
  return /^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\//.test(base);
}
