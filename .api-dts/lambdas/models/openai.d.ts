import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions/completions';
import { MessageResponse, type MessageRequest, type ModelClient } from '../records/messages.js';
export interface OpenAIClientOptions {
    apiKey: string;
    /** @default https://api.openai.com/v1 (the SDK's default) */
    baseUrl?: string | undefined;
    organization?: string | undefined;
    project?: string | undefined;
    /** Budget of one call, connection to last byte. @default 60_000 */
    timeoutMs?: number | undefined;
}
/**
 * A `ModelClient` on OpenAI Chat Completions with function tools, through the official SDK.
 * OpenAI caches prompt prefixes by itself (from 1024 tokens): nothing to mark, but the rendering of
 * a conversation must stay byte-stable from turn to turn, which this translation guarantees by
 * being a pure function of the ledger's messages.
 */
export declare class OpenAIModelClient implements ModelClient {
    #private;
    constructor(options: OpenAIClientOptions);
    createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse>;
}
/** The ledger's request as Chat Completions parameters. Pure: exported for tests. */
export declare function toOpenAIParams(request: MessageRequest): ChatCompletionCreateParamsNonStreaming;
/** The SDK's completion back in the ledger's shape, validated: model output is outside input. */
export declare function fromChatCompletion(completion: ChatCompletion): MessageResponse;
