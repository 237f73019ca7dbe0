import { InvalidInputError } from '../lambdas/shared/errors.js';
import { DROPPED, inProcessFetch, jsonReply, serveHttp, type HttpService, type ServiceReply, type ServiceRequest } from './in-process.js';

/**
 * The HTTP plumbing of a simulated provider (Stripe-style JSON API): its error answers are
 * `{ error: { type, message } }`, which savepoint's `JsonHttpClient` reads back into the error contract.
 */
export class ProviderApiError extends Error {
  /** The status it answers with. */
  readonly status: number;
  /** The `error.type` of its body. */
  readonly type: 'invalid_request_error' | 'idempotency_error' | 'api_error';

  constructor(status: number, type: 'invalid_request_error' | 'idempotency_error' | 'api_error', message: string) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

export { DROPPED, jsonReply, type ServiceReply, type ServiceRequest };

/** A request body as JSON, or a 400 that says it is not. */
export function parseJsonBody(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new ProviderApiError(400, 'invalid_request_error', '(root): request body is not valid JSON');
  }
}

/** A simulated provider served by `serveProvider`. */
export interface ServedProvider {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** Reaches the provider in process (no socket), for the agent's clients in the local engine; other URLs go to the network. */
  readonly fetch: typeof fetch;
  /** Stops serving and closes the provider's journal. */
  close(): Promise<void>;
}

/**
 * Serves `handle` as a simulated provider, on loopback and in process: errors answer in the
 * provider's shape (`ProviderApiError` as itself, invalid input as 400, anything else as 500), and
 * closing the server closes `journal` too (also when listening fails: no file descriptor is leaked).
 */
export async function serveProvider(
  handle: (request: ServiceRequest) => Promise<ServiceReply | typeof DROPPED>,
  options: { port?: number; journal: { close(): void } },
): Promise<ServedProvider> {
  const service: HttpService = (request) => handle(request).catch(errorReply);
  let served;
  try {
    served = await serveHttp(service, {
      port: options.port,
      tooLarge: () => jsonReply(413, { error: { type: 'invalid_request_error', message: 'request body too large' } }),
      failed: errorReply,
    });
  } catch (error) {
    options.journal.close(); // e.g. the port is taken
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    url: served.url,
    port: served.port,
    fetch: inProcessFetch(served.url, service),
    close: () => (closing ??= served.close().finally(() => options.journal.close())),
  };
}

function errorReply(error: unknown): ServiceReply {
  if (error instanceof ProviderApiError) return jsonReply(error.status, { error: { type: error.type, message: error.message } });
  // A failed zod parse (parseOrThrow) is the caller's fault; anything else is ours.
  if (error instanceof InvalidInputError) return jsonReply(400, { error: { type: 'invalid_request_error', message: error.message } });
  return jsonReply(500, { error: { type: 'api_error', message: error instanceof Error ? error.message : String(error) } });
}
