import type { Message as AnthropicMessage } from '@anthropic-ai/sdk/resources/messages/messages';
import { MessageResponse, type MessageRequest, type ModelClient } from '../records/messages.js';
export { toAnthropicParams } from './anthropic-params.js';
export interface AnthropicClientOptions {
    apiKey: string;
    /** @default https://api.anthropic.com (the SDK's default) */
    baseUrl?: string | undefined;
    /** Budget of one call, connection to last byte (streamed or not). @default 60_000 */
    timeoutMs?: number | undefined;
}
/**
 * Above this `max_tokens`, a call is streamed: the Anthropic SDK estimates a generation at 128,000
 * tokens an hour and asks for streaming past 10 minutes ("Streaming is required for operations that
 * may take longer than 10 minutes", its `calculateNonstreamingTimeout`).
 */
export declare const STREAM_ABOVE_TOKENS: number;
/**
 * A `ModelClient` on the Anthropic Messages API through the official SDK. The ledger's message shape
 * is Anthropic's, so the translation is mostly about prompt caching: three `cache_control`
 * breakpoints (system prompt, last tool, last block of the conversation) make every turn read the
 * previous turn's prefix from the cache and write its own. Per-turn content (e.g. a budget hint)
 * must therefore go into the latest user turn, never into the system prompt.
 */
export declare class AnthropicModelClient implements ModelClient {
    #private;
    constructor(options: AnthropicClientOptions);
    createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse>;
}
/** The SDK's message back in the ledger's shape, validated: model output is outside input. */
export declare function fromAnthropicMessage(message: AnthropicMessage): MessageResponse;
