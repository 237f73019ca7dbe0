import * as z from 'zod';
import { MessageRequest, type ContentBlock } from '../../lambdas/records/messages.js';
import { type WireReply, type WireServer } from './http.js';
import { type Fault, type Policy } from './policy.js';
import { type PromptBlock } from './prompt-cache.js';
/**
 * A strict local Anthropic Messages API (`POST /v1/messages`): checks the key (`x-api-key`, or
 * `Authorization: Bearer`, which is what the SDK sends since 1.0) and `anthropic-version`, the body's shape (unknown fields are refused, as the real API does), the
 * conversation rules and the model id; answers 400/401/404 in the documented error shape
 * (`{ type: 'error', error: { type, message } }`), otherwise the policy's reply with usage that
 * models prompt caching (see prompt-cache.ts).
 */
/** What {@link startAnthropicServer} serves. */
export interface AnthropicServerOptions {
    /** Decides each accepted request's answer (the server only checks and speaks the wire). */
    policy: Policy;
    /** The one key the server accepts; any other is a 401 `authentication_error`. */
    apiKey: string;
    /** Model ids the server knows; any other is a 404 `not_found_error`. */
    models: readonly string[];
    /** The loopback port. @default 0 (a free one; read it from `url`) */
    port?: number;
}
/**
 * The API versions the server speaks. `@anthropic-ai/sdk` 1.x sends 2026-10-21, which refuses the
 * sampling parameters (temperature, top_p, top_k) with a 400; older clients, such as the hand-written
 * `HttpMessagesClient`, send 2023-06-01.
 */
export declare const ANTHROPIC_VERSIONS: readonly ['2023-06-01', '2026-10-21'];
export declare const ANTHROPIC_VERSION = "2026-10-21";
export declare const WireRequestBody: z.ZodObject<{
    model: z.ZodString;
    max_tokens: z.ZodNumber;
    system: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodArray<z.ZodObject<{
        cache_control: z.ZodOptional<z.ZodNullable<z.ZodObject<{
            type: z.ZodLiteral<"ephemeral">;
            ttl: z.ZodOptional<z.ZodEnum<{
                "1h": "1h";
                "5m": "5m";
            }>>;
        }, z.core.$strict>>>;
        type: z.ZodLiteral<"text">;
        text: z.ZodString;
    }, z.core.$strict>>]>>;
    messages: z.ZodArray<z.ZodObject<{
        role: z.ZodEnum<{
            assistant: "assistant";
            user: "user";
        }>;
        content: z.ZodUnion<readonly [z.ZodString, z.ZodArray<z.ZodDiscriminatedUnion<[z.ZodObject<{
            cache_control: z.ZodOptional<z.ZodNullable<z.ZodObject<{
                type: z.ZodLiteral<"ephemeral">;
                ttl: z.ZodOptional<z.ZodEnum<{
                    "1h": "1h";
                    "5m": "5m";
                }>>;
            }, z.core.$strict>>>;
            type: z.ZodLiteral<"text">;
            text: z.ZodString;
        }, z.core.$strict>, z.ZodObject<{
            cache_control: z.ZodOptional<z.ZodNullable<z.ZodObject<{
                type: z.ZodLiteral<"ephemeral">;
                ttl: z.ZodOptional<z.ZodEnum<{
                    "1h": "1h";
                    "5m": "5m";
                }>>;
            }, z.core.$strict>>>;
            type: z.ZodLiteral<"tool_use">;
            id: z.ZodString;
            name: z.ZodString;
            input: z.ZodRecord<z.ZodString, z.ZodUnknown>;
        }, z.core.$strict>, z.ZodObject<{
            cache_control: z.ZodOptional<z.ZodNullable<z.ZodObject<{
                type: z.ZodLiteral<"ephemeral">;
                ttl: z.ZodOptional<z.ZodEnum<{
                    "1h": "1h";
                    "5m": "5m";
                }>>;
            }, z.core.$strict>>>;
            type: z.ZodLiteral<"tool_result">;
            tool_use_id: z.ZodString;
            content: z.ZodOptional<z.ZodUnion<readonly [z.ZodString, z.ZodArray<z.ZodObject<{
                cache_control: z.ZodOptional<z.ZodNullable<z.ZodObject<{
                    type: z.ZodLiteral<"ephemeral">;
                    ttl: z.ZodOptional<z.ZodEnum<{
                        "1h": "1h";
                        "5m": "5m";
                    }>>;
                }, z.core.$strict>>>;
                type: z.ZodLiteral<"text">;
                text: z.ZodString;
            }, z.core.$strict>>]>>;
            is_error: z.ZodOptional<z.ZodBoolean>;
        }, z.core.$strict>], "type">>]>;
    }, z.core.$strict>>;
    tools: z.ZodOptional<z.ZodArray<z.ZodObject<{
        cache_control: z.ZodOptional<z.ZodNullable<z.ZodObject<{
            type: z.ZodLiteral<"ephemeral">;
            ttl: z.ZodOptional<z.ZodEnum<{
                "1h": "1h";
                "5m": "5m";
            }>>;
        }, z.core.$strict>>>;
        name: z.ZodString;
        description: z.ZodOptional<z.ZodString>;
        input_schema: z.ZodRecord<z.ZodString, z.ZodUnknown>;
        type: z.ZodOptional<z.ZodNullable<z.ZodLiteral<"custom">>>;
    }, z.core.$strict>>>;
    temperature: z.ZodOptional<z.ZodNumber>;
    top_p: z.ZodOptional<z.ZodNumber>;
    top_k: z.ZodOptional<z.ZodNumber>;
    stop_sequences: z.ZodOptional<z.ZodArray<z.ZodString>>;
    metadata: z.ZodOptional<z.ZodObject<{
        user_id: z.ZodOptional<z.ZodNullable<z.ZodString>>;
    }, z.core.$strict>>;
    stream: z.ZodOptional<z.ZodBoolean>;
}, z.core.$strict>;
export type WireRequestBody = z.infer<typeof WireRequestBody>;
/**
 * Starts a strict Anthropic Messages API on 127.0.0.1 for tests that talk to it with the official
 * `@anthropic-ai/sdk`: a request the real API would refuse (an unknown field, a tool result that
 * answers no tool call, an unknown model, a wrong key) is refused in the real API's error shape, so
 * a test passes only for what the real API accepts. Streaming (`stream: true`) is served too.
 *
 * @example
 * ```ts
 * import Anthropic from '@anthropic-ai/sdk';
 * import { startAnthropicServer } from 'savepoint/sim';
 *
 * const server = await startAnthropicServer({
 *   apiKey: 'sk-test',
 *   models: ['claude-haiku-4-5'],
 *   policy: () => ({ content: [{ type: 'text', text: 'Hello.' }], stop_reason: 'end_turn' }),
 * });
 * const anthropic = new Anthropic({ apiKey: 'sk-test', baseURL: server.url, maxRetries: 0 });
 * const message = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
 * console.log(message.content); // [ { type: 'text', text: 'Hello.' } ]
 * server.failNext(1, { kind: 'overloaded' }); // the next request gets Anthropic's 529
 * await server.close();
 * ```
 */
export declare function startAnthropicServer(options: AnthropicServerOptions): Promise<WireServer>;
/**
 * A message as the Messages API streams it (https://docs.anthropic.com/en/docs/build-with-claude/streaming):
 * `message_start` with the usage so far, each block's start, deltas and stop (text in `text_delta`s,
 * a tool's input as `input_json_delta` pieces), `message_delta` with the stop reason and the output
 * tokens, `message_stop`.
 */
export declare function messageEvents(message: {
    content: ContentBlock[];
    stop_reason: string;
    usage: Record<string, number>;
} & Record<string, unknown>): string;
/** The prompt in Anthropic's cache order — tools, system, messages — each block without its marker. */
export declare function promptBlocks(body: WireRequestBody): PromptBlock[];
/** The wire request in the ledger's shape, for the conversation checks and the policy. */
export declare function toInternal(body: WireRequestBody): MessageRequest;
/** The documented error answers (https://docs.anthropic.com/en/api/errors). */
export declare function anthropicFault(fault: Fault): WireReply;
