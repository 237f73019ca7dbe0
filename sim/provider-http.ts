import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidInputError } from '../lambdas/shared/errors.js';

/**
 * The HTTP plumbing of a simulated provider (Stripe-style JSON API): its error answers are
 * `{ error: { type, message } }`, which savepoint's `JsonHttpClient` reads back into the error contract.
 */
export class ProviderApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: 'invalid_request_error' | 'idempotency_error' | 'api_error',
    message: string,
  ) {
    super(message);
  }
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** A request body as JSON, or a 400 that says it is not. */
export function parseJsonBody(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new ProviderApiError(400, 'invalid_request_error', '(root): request body is not valid JSON');
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * Serves `handle` on loopback as a simulated provider: errors answer in the provider's shape
 * (`ProviderApiError` as itself, invalid input as 400, anything else as 500), and closing the server
 * closes `journal` too (also when listening fails: no file descriptor is leaked).
 */
export async function serveProvider(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  options: { port?: number; journal: { close(): void } },
): Promise<{ port: number; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent || res.destroyed) return;
      if (error instanceof ProviderApiError) return sendJson(res, error.status, { error: { type: error.type, message: error.message } });
      // A failed zod parse (parseOrThrow) is the caller's fault; anything else is ours.
      if (error instanceof InvalidInputError) return sendJson(res, 400, { error: { type: 'invalid_request_error', message: error.message } });
      sendJson(res, 500, { error: { type: 'api_error', message: error instanceof Error ? error.message : String(error) } });
    });
  });
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => {
      options.journal.close(); // e.g. the port is taken
      reject(error);
    };
    server.once('error', onError);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', onError);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve, reject) => {
      server.close((error) => {
        options.journal.close();
        if (error) reject(error);
        else resolve();
      });
      // fetch keeps connections alive; without this close() waits for them to idle out.
      server.closeAllConnections();
    }));
  return { port, close };
}
