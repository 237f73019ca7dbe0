import { DROPPED, jsonReply, type ServiceReply, type ServiceRequest } from './in-process.js';
/**
 * The HTTP plumbing of a simulated provider (Stripe-style JSON API): its error answers are
 * `{ error: { type, message } }`, which savepoint's `JsonHttpClient` reads back into the error contract.
 */
export declare class ProviderApiError extends Error {
    readonly status: number;
    readonly type: 'invalid_request_error' | 'idempotency_error' | 'api_error';
    constructor(status: number, type: 'invalid_request_error' | 'idempotency_error' | 'api_error', message: string);
}
export { DROPPED, jsonReply, type ServiceReply, type ServiceRequest };
/** A request body as JSON, or a 400 that says it is not. */
export declare function parseJsonBody(raw: string): unknown;
export interface ServedProvider {
    readonly url: string;
    readonly port: number;
    /** Reaches the provider in process (no socket), for the agent's clients in the local engine; other URLs go to the network. */
    readonly fetch: typeof fetch;
    close(): Promise<void>;
}
/**
 * Serves `handle` as a simulated provider, on loopback and in process: errors answer in the
 * provider's shape (`ProviderApiError` as itself, invalid input as 400, anything else as 500), and
 * closing the server closes `journal` too (also when listening fails: no file descriptor is leaked).
 */
export declare function serveProvider(handle: (request: ServiceRequest) => Promise<ServiceReply | typeof DROPPED>, options: {
    port?: number;
    journal: {
        close(): void;
    };
}): Promise<ServedProvider>;
