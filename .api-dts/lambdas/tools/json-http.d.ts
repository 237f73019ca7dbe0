import * as z from 'zod';
import { type Timers } from '../shared/ports.js';
/**
 * JSON over HTTP for an agent's tool backends, translating every failure into savepoint's error
 * contract (the state machine retries on `error.name`):
 * - 5xx and 429 → `HttpTransientError`, and a connection that could not be made →
 *   `TransientError` (both `Agent.Transient`): the same call may succeed later;
 * - a request that may have reached the provider and got no answer (its deadline passed, it was
 *   aborted, the connection dropped) → `OutcomeUnknownError` (an `Agent.Transient`): a write's
 *   outcome is unknown, so CallTool resends it only under its idempotency key or after the tool's
 *   `reconcile`, and escalates it otherwise; a read that timed out is told to the model;
 * - 400 / 404 → `HttpInvalidInputError` (`Agent.InvalidInput`): the arguments are wrong; the
 *   provider's message says why (a tool returns it to the model);
 * - 401 / 403 / 409 / 422 and any other 4xx → `HttpTerminalError` (`Agent.Terminal`);
 * - a 2xx body that does not match the schema → `MalformedResponseError` (an `Agent.Terminal`:
 *   the provider broke its contract; a read shows it to the model instead). An empty 2xx body (a
 *   204) is `undefined` to the schema: `z.undefined()` accepts it.
 *
 * The three `Http…Error`s carry the answer's `status` and `body` (`HttpAnswer`).
 */
/** Where a `JsonHttpClient` sends its requests and how long each may take. */
export interface JsonHttpClientOptions {
    /** e.g. `http://127.0.0.1:54321` */
    readonly baseUrl: string;
    /**
     * A limit per request, including reading the body, besides the caller's signal. A tool passes
     * its `context.signal`, which is aborted when the tool's own time runs out (its `timeoutMs`, the
     * run's wall clock, the step's deadline): that is the request's deadline, and no shorter one is
     * set unless given here. @default none with a signal; 10_000 without one
     */
    readonly timeoutMs?: number;
    /** @default globalThis.fetch */
    readonly fetch?: typeof fetch;
    /** Where `timeoutMs` is timed (a test's clock times it out with no real wait). @default real timers */
    readonly timers?: Timers;
}
/** The methods `JsonHttpClient` sends. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
/** One request's options. */
export interface JsonRequestOptions {
    /** Sent as JSON. @default no body */
    readonly body?: unknown;
    /** Sent as `Idempotency-Key` (the header payment APIs deduplicate on). */
    readonly idempotencyKey?: string;
    /** Aborts the request: a tool passes its `context.signal`. @default none (bounded by `timeoutMs`) */
    readonly signal?: AbortSignal;
}
/** `{ data: [item…] }`, the shape list routes answer with: the schema of one. */
export declare const listOf: <S extends z.ZodType>(item: S) => z.ZodObject<{
    data: z.ZodArray<S>;
}, z.core.$strip>;
/**
 * A JSON HTTP client for a tool's backend whose every failure is one of savepoint's errors (above).
 *
 * @example
 * ```ts
 * import * as z from 'zod';
 * import { HttpInvalidInputError, JsonHttpClient } from 'savepoint';
 *
 * const http = new JsonHttpClient({ baseUrl: 'https://payments.example.com' });
 * const Refund = z.object({ id: z.string(), status: z.string() });
 * const refund = await http.post('/refunds', Refund, { body: { amount: 500 }, idempotencyKey: 'run-1:turn-3:call-1' });
 * await http.patch(`/refunds/${refund.id}`, Refund, { body: { note: 'checked' } });
 * try {
 *   await http.delete(`/holds/${refund.id}`, z.undefined()); // a 204
 * } catch (error) {
 *   if (!(error instanceof HttpInvalidInputError && error.status === 404)) throw error; // gone already
 * }
 * ```
 */
export declare class JsonHttpClient {
    #private;
    constructor(options: JsonHttpClientOptions);
    /** `GET path`, its answer parsed by `schema`. */
    get<S extends z.ZodType>(path: string, schema: S, options?: JsonRequestOptions): Promise<z.output<S>>;
    /** `POST path` with `options.body`, its answer parsed by `schema`. */
    post<S extends z.ZodType>(path: string, schema: S, options?: JsonRequestOptions): Promise<z.output<S>>;
    /** `PUT path` with `options.body`, its answer parsed by `schema`. */
    put<S extends z.ZodType>(path: string, schema: S, options?: JsonRequestOptions): Promise<z.output<S>>;
    /** `PATCH path` with `options.body`, its answer parsed by `schema`. */
    patch<S extends z.ZodType>(path: string, schema: S, options?: JsonRequestOptions): Promise<z.output<S>>;
    /** `DELETE path`, its answer parsed by `schema` (`z.undefined()` for a 204). */
    delete<S extends z.ZodType>(path: string, schema: S, options?: JsonRequestOptions): Promise<z.output<S>>;
    /** Sends one request and parses its answer by `schema`; every failure is one of savepoint's errors. */
    request<S extends z.ZodType>(method: HttpMethod, path: string, schema: S, options?: JsonRequestOptions): Promise<z.output<S>>;
}
