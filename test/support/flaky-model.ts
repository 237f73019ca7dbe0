import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A model endpoint in front of the simulated one that answers 503 while `down(request)` says so
 * (a provider's outage): a real HTTP server on loopback. `cleanup` is given its closing.
 */
export async function flakyModel(target: () => string, down: (request: number) => boolean, cleanup: (close: () => Promise<void>) => void): Promise<string> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (down(++requests)) {
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'outage' } }));
        return;
      }
      fetch(`${target()}${req.url}`, { method: 'POST', headers: req.headers as Record<string, string>, body: Buffer.concat(chunks) })
        .then(async (answer) => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text()))
        .catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.unref();
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
