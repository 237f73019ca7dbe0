import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A model endpoint in front of a simulated one (set `target` once the stack that serves it is up),
 * answering 503 (an outage) while `down` is true: CallModel exhausts its retries and the run
 * fails, a failed run for a test to resume.
 */
export async function modelWithOutage(): Promise<{ url: string; target: string; down: boolean; close(): Promise<void> }> {
  const model = {
    url: '',
    target: '',
    down: false,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    if (model.down) return response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'outage' } }));
    const answer = await fetch(`${model.target}${request.url}`, { method: 'POST', headers: request.headers as Record<string, string>, body });
    response.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  model.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return model;
}
