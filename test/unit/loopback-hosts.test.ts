import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loopbackHosts } from '../../lambdas/shared/loopback-hosts.js';
import { consoleProxy } from '../../console/proxy.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<number> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** A GET over a real socket, with the Host header a browser would send. */
function get(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest({ hostname: '127.0.0.1', port, path, headers: { host } }, (answer) => {
      let body = '';
      answer.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('the Host headers a loopback server answers to', () => {
  it("names each loopback host with the port, and also without it on port 80 (a browser leaves http's own port out)", () => {
    expect([...loopbackHosts(4321)]).toEqual(['127.0.0.1:4321', 'localhost:4321', '[::1]:4321']);
    expect([...loopbackHosts(80)]).toEqual(['127.0.0.1:80', '127.0.0.1', 'localhost:80', 'localhost', '[::1]:80', '[::1]']);
  });

  it('lets the console behind `savepoint serve --port 80` be reached at http://127.0.0.1/, and still refuses another name', async () => {
    const consolePort = await listen((_request, response) => response.end('console'));
    const proxy = consoleProxy(`http://127.0.0.1:${consolePort}`, () => 80);
    const front = await listen((request, response) => {
      if (!proxy(request, response)) response.writeHead(404).end();
    });
    expect(await get(front, '/', '127.0.0.1')).toEqual({ status: 200, body: 'console' });
    expect(await get(front, '/', '127.0.0.1:80')).toEqual({ status: 200, body: 'console' });
    expect((await get(front, '/', 'evil.example')).status).toBe(403);
  });
});
