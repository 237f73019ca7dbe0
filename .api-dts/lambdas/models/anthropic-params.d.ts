import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages/messages';
import type { MessageRequest } from '../records/messages.js';
/** The request with its cache breakpoints. Pure: exported for tests. */
export declare function toAnthropicParams(request: MessageRequest): MessageCreateParamsNonStreaming;
