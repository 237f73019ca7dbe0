import * as z from 'zod';
/**
 * The wire shape of a messages API (Anthropic Messages, the de facto shape of tool-using chat
 * models). The simulated model speaks it over HTTP; real providers plug in behind `ModelClient`.
 * Responses are outside input: `MessageResponse` validates them before the ledger records them.
 */
export declare const TextBlock: z.ZodObject<{
    type: z.ZodLiteral<"text">;
    text: z.ZodString;
}, z.core.$strip>;
export declare const ToolUseBlock: z.ZodObject<{
    type: z.ZodLiteral<"tool_use">;
    id: z.ZodString;
    name: z.ZodString;
    input: z.ZodRecord<z.ZodString, z.ZodUnknown>;
}, z.core.$strip>;
export declare const ToolResultBlock: z.ZodObject<{
    type: z.ZodLiteral<"tool_result">;
    tool_use_id: z.ZodString;
    content: z.ZodString;
    is_error: z.ZodOptional<z.ZodBoolean>;
}, z.core.$strip>;
export type TextBlock = z.infer<typeof TextBlock>;
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;
export declare const ContentBlock: z.ZodDiscriminatedUnion<[z.ZodObject<{
    type: z.ZodLiteral<"text">;
    text: z.ZodString;
}, z.core.$strip>, z.ZodObject<{
    type: z.ZodLiteral<"tool_use">;
    id: z.ZodString;
    name: z.ZodString;
    input: z.ZodRecord<z.ZodString, z.ZodUnknown>;
}, z.core.$strip>, z.ZodObject<{
    type: z.ZodLiteral<"tool_result">;
    tool_use_id: z.ZodString;
    content: z.ZodString;
    is_error: z.ZodOptional<z.ZodBoolean>;
}, z.core.$strip>], "type">;
export type ContentBlock = z.infer<typeof ContentBlock>;
export declare const Message: z.ZodObject<{
    role: z.ZodEnum<{
        assistant: "assistant";
        user: "user";
    }>;
    content: z.ZodUnion<readonly [z.ZodString, z.ZodArray<z.ZodDiscriminatedUnion<[z.ZodObject<{
        type: z.ZodLiteral<"text">;
        text: z.ZodString;
    }, z.core.$strip>, z.ZodObject<{
        type: z.ZodLiteral<"tool_use">;
        id: z.ZodString;
        name: z.ZodString;
        input: z.ZodRecord<z.ZodString, z.ZodUnknown>;
    }, z.core.$strip>, z.ZodObject<{
        type: z.ZodLiteral<"tool_result">;
        tool_use_id: z.ZodString;
        content: z.ZodString;
        is_error: z.ZodOptional<z.ZodBoolean>;
    }, z.core.$strip>], "type">>]>;
}, z.core.$strip>;
export type Message = z.infer<typeof Message>;
export declare const ToolSpec: z.ZodObject<{
    name: z.ZodString;
    description: z.ZodString;
    input_schema: z.ZodRecord<z.ZodString, z.ZodUnknown>;
}, z.core.$strip>;
export declare const MessageRequest: z.ZodObject<{
    model: z.ZodString;
    max_tokens: z.ZodNumber;
    system: z.ZodOptional<z.ZodString>;
    messages: z.ZodArray<z.ZodObject<{
        role: z.ZodEnum<{
            assistant: "assistant";
            user: "user";
        }>;
        content: z.ZodUnion<readonly [z.ZodString, z.ZodArray<z.ZodDiscriminatedUnion<[z.ZodObject<{
            type: z.ZodLiteral<"text">;
            text: z.ZodString;
        }, z.core.$strip>, z.ZodObject<{
            type: z.ZodLiteral<"tool_use">;
            id: z.ZodString;
            name: z.ZodString;
            input: z.ZodRecord<z.ZodString, z.ZodUnknown>;
        }, z.core.$strip>, z.ZodObject<{
            type: z.ZodLiteral<"tool_result">;
            tool_use_id: z.ZodString;
            content: z.ZodString;
            is_error: z.ZodOptional<z.ZodBoolean>;
        }, z.core.$strip>], "type">>]>;
    }, z.core.$strip>>;
    tools: z.ZodOptional<z.ZodArray<z.ZodObject<{
        name: z.ZodString;
        description: z.ZodString;
        input_schema: z.ZodRecord<z.ZodString, z.ZodUnknown>;
    }, z.core.$strip>>>;
}, z.core.$strip>;
export type MessageRequest = z.infer<typeof MessageRequest>;
export declare const Usage: z.ZodObject<{
    input_tokens: z.ZodNumber;
    output_tokens: z.ZodNumber;
    cache_read_input_tokens: z.ZodOptional<z.ZodNumber>;
    cache_creation_input_tokens: z.ZodOptional<z.ZodNumber>;
}, z.core.$strip>;
export type Usage = z.infer<typeof Usage>;
export declare const MessageResponse: z.ZodObject<{
    id: z.ZodString;
    type: z.ZodLiteral<"message">;
    role: z.ZodLiteral<"assistant">;
    model: z.ZodString;
    content: z.ZodArray<z.ZodDiscriminatedUnion<[z.ZodObject<{
        type: z.ZodLiteral<"text">;
        text: z.ZodString;
    }, z.core.$strip>, z.ZodObject<{
        type: z.ZodLiteral<"tool_use">;
        id: z.ZodString;
        name: z.ZodString;
        input: z.ZodRecord<z.ZodString, z.ZodUnknown>;
    }, z.core.$strip>], "type">>;
    stop_reason: z.ZodEnum<{
        end_turn: "end_turn";
        max_tokens: "max_tokens";
        stop_sequence: "stop_sequence";
        tool_use: "tool_use";
    }>;
    usage: z.ZodObject<{
        input_tokens: z.ZodNumber;
        output_tokens: z.ZodNumber;
        cache_read_input_tokens: z.ZodOptional<z.ZodNumber>;
        cache_creation_input_tokens: z.ZodOptional<z.ZodNumber>;
    }, z.core.$strip>;
}, z.core.$strip>;
export type MessageResponse = z.infer<typeof MessageResponse>;
/** One model call. Implementations map provider faults to the error names of shared/errors.ts. */
export interface ModelClient {
    createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse>;
}
/** Every input token a call read, cached or not: what the token budget counts (the same with caching on or off). */
export declare function inputTokensOf(usage: Usage): number;
