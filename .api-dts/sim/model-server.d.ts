import type { ModelPolicy } from '../lambdas/define.js';
import { type HttpService } from './in-process.js';
import { type FaultOptions } from './random.js';
/**
 * The simulated model provider: a real HTTP server speaking the Anthropic Messages wire format,
 * answering with the scripted policy of the agent it serves (`AgentDefinition.dev.policy`). Runs exercise the same client, status codes
 * and error bodies as against a real provider, without a network or a bill.
 *
 * It models prompt caching as Anthropic bills it (sim/wire/prompt-cache.ts, the same model the
 * strict Anthropic wire server uses): a `cache_control` breakpoint caches the prefix up to it,
 * a later request reads the longest byte-identical cached prefix, and usage reports
 * `cache_creation_input_tokens` and `cache_read_input_tokens` apart from plain input. A request
 * without breakpoints is billed as plain input throughout: the uncached baseline.
 */
export interface ModelServer {
    url: string;
    port: number;
    /**
     * A `fetch` for the model client that answers requests to `url` in process (the same service,
     * no socket: what the local engine's steps use) and sends any other URL to the network.
     */
    fetch: typeof fetch;
    close(): Promise<void>;
    /** Requests received, faulted ones included. */
    requestCount(): number;
}
export declare function estimateTokens(value: unknown): number;
export interface ModelServerOptions {
    policy: ModelPolicy;
    port?: number;
    faults?: FaultOptions;
    /** The shortest prefix a breakpoint caches. @default 1024 tokens (Anthropic's for Sonnet-class models) */
    minCacheableTokens?: number;
}
export declare function startModelServer(opts: ModelServerOptions): Promise<ModelServer>;
/** The simulated model as a function from request to reply: served over HTTP, or called in process. */
export declare function modelService(opts: ModelServerOptions): {
    service: HttpService;
    requestCount(): number;
};
