import * as z from 'zod';

/**
 * The wire shape of a messages API (Anthropic Messages, the de facto shape of tool-using chat
 * models). The simulated model speaks it over HTTP; real providers plug in behind `ModelClient`.
 * Responses are outside input: `MessageResponse` validates them before the ledger records them.
 */

export const TextBlock = z.object({ type: z.literal('text'), text: z.string() });
export const ToolUseBlock = z.object({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
});
export const ToolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.string(),
  is_error: z.boolean().optional(),
});
export type TextBlock = z.infer<typeof TextBlock>;
export type ToolUseBlock = z.infer<typeof ToolUseBlock>;
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;

export const ContentBlock = z.discriminatedUnion('type', [TextBlock, ToolUseBlock, ToolResultBlock]);
export type ContentBlock = z.infer<typeof ContentBlock>;

export const Message = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(ContentBlock)]),
});
export type Message = z.infer<typeof Message>;

export const ToolSpec = z.object({
  name: z.string(),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
});

export const MessageRequest = z.object({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  system: z.string().optional(),
  messages: z.array(Message).min(1),
  tools: z.array(ToolSpec).optional(),
});
export type MessageRequest = z.infer<typeof MessageRequest>;

export const Usage = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cache_read_input_tokens: z.number().int().nonnegative().optional(),
  /** Input tokens written to the provider's prompt cache (priced above plain input). */
  cache_creation_input_tokens: z.number().int().nonnegative().optional(),
});
export type Usage = z.infer<typeof Usage>;

export const MessageResponse = z.object({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string(),
  content: z.array(z.discriminatedUnion('type', [TextBlock, ToolUseBlock])),
  stop_reason: z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence']),
  usage: Usage,
});
export type MessageResponse = z.infer<typeof MessageResponse>;

/** One model call. Implementations map provider faults to the error names of shared/errors.ts. */
export interface ModelClient {
  createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse>;
}

/** Every input token a call read, cached or not: what the token budget counts (the same with caching on or off). */
export function inputTokensOf(usage: Usage): number {
  return usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
}
