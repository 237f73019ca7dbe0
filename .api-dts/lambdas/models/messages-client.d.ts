import { type Timers } from '../shared/ports.js';
import { MessageResponse, type MessageRequest, type ModelClient } from '../records/messages.js';
export interface HttpMessagesClientOptions {
    /** e.g. `http://127.0.0.1:4010` or `https://api.anthropic.com`; `/v1/messages` is appended. */
    baseUrl: string;
    apiKey: string;
    /** Budget of one call, connection to last byte. @default 60_000 */
    timeoutMs?: number;
    /** Where `timeoutMs` is timed (a test's clock times it out with no real wait). @default real timers */
    timers?: Timers;
    fetch?: typeof fetch;
    /**
     * Send `cache_control` breakpoints (system prompt, last tool, last block of the conversation),
     * as the Anthropic adapter does; off, the request carries none and nothing is cached (the
     * baseline of `npm run bench -- --cost`). @default true
     */
    promptCaching?: boolean;
}
/**
 * A `ModelClient` speaking the Anthropic Messages wire format over HTTP. Provider faults become the
 * error names the state machine retries on (shared/errors.ts): throttling and transient faults are
 * retried, refusals are not, and a response of the wrong shape is invalid input — the model's output
 * is outside input to the run.
 */
export declare class HttpMessagesClient implements ModelClient {
    #private;
    constructor(options: HttpMessagesClientOptions);
    createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse>;
}
