import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback proxy in front of a runs API (`origin`: serve's, or a local stack's): each request
 * forwarded as it came. `cutAnswerOf(method, path)`, once for such a request: it is forwarded, the
 * API's whole answer read, and the client's connection cut without a byte of it (the answer lost,
 * the request landed). `hold(method, path)`: the next such request not cut waits (`reached`) until
 * `release()`, then is forwarded. `seen`: each request with the status the API answered.
 */
export async function startProxy(origin: string) {
  const seen: { method: string; path: string; status: number }[] = [];
  const cuts: { method: string; path: string }[] = [];
  const holds: { method: string; path: string; reached: () => void; released: Promise<void> }[] = [];
  const takeFirst = <T extends { method: string; path: string }>(list: T[], method: string, path: string) => {
    const at = list.findIndex((entry) => entry.method === method && path.endsWith(entry.path));
    return at >= 0 ? list.splice(at, 1)[0] : undefined;
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const method = request.method ?? 'GET';
      const path = request.url ?? '/';
      const cut = takeFirst(cuts, method, path) !== undefined;
      const held = cut ? undefined : takeFirst(holds, method, path);
      if (held) {
        held.reached();
        await held.released;
      }
      const { host: _host, ...headers } = request.headers as IncomingHttpHeaders;
      const forwarded = httpRequest(`${origin}${path}`, { method, headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => body.push(chunk));
        answer.on('end', () => {
          seen.push({ method, path: path.replace(/^\/[^/]+\/v1/, ''), status: answer.statusCode ?? 0 });
          if (cut) return void request.socket.destroy();
          response.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(body));
        });
      });
      forwarded.on('error', () => request.socket.destroy());
      forwarded.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    cutAnswerOf: (method: string, path: string) => void cuts.push({ method, path }),
    hold(method: string, path: string) {
      let reached!: () => void;
      let release!: () => void;
      const held = { reached: new Promise<void>((resolve) => (reached = resolve)), release: () => release() };
      holds.push({ method, path, reached, released: new Promise<void>((resolve) => (release = resolve)) });
      return held;
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
