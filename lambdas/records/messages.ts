import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';

/**
 * The wire shape of a messages API (Anthropic Messages, the de facto shape of tool-using chat
 * models). The simulated model speaks it over HTTP; real providers plug in behind `ModelClient`.
 * Responses are outside input: `MessageResponse` validates them before the ledger records them.
 */

/** A text block: what the model said, or the user's prompt. */
export const TextBlock = schemaOnFirstUse(() => z.object({ type: z.literal('text'), text: z.string() }));
/** A tool call the model asks for: its id, the tool's name and the arguments. */
export const ToolUseBlock = schemaOnFirstUse(() => z.object({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
}));
/**
 * The one key of a tool call's input when the model wrote its arguments as something other than a
 * JSON object (a Chat Completions `arguments` string that does not parse): what it wrote, kept as
 * it wrote it. The call is recorded and answered to the model as its mistake (never run) — a
 * model's slip, not a failed run. The turn goes back to the model with the call's arguments as this
 * object, valid JSON: a request whose arguments do not parse is one a provider may refuse (the
 * strict OpenAI server of savepoint/sim does).
 */
export const UNPARSED_ARGUMENTS = 'savepoint:unparsedArguments';

/** The arguments a model wrote that are not a JSON object, as a tool call's input (`UNPARSED_ARGUMENTS`). */
export function unparsedArguments(written: string): Record<string, unknown> {
  return { [UNPARSED_ARGUMENTS]: written };
}

/** What the model wrote, when `input` holds arguments that were not a JSON object; else undefined. */
export function unparsedOf(input: unknown): string | undefined {
  if (input === null || typeof input !== 'object') return undefined;
  const written = (input as Record<string, unknown>)[UNPARSED_ARGUMENTS];
  return typeof written === 'string' && Object.keys(input).length === 1 ? written : undefined;
}

/**
 * An answer cut off at its output cap (`max_tokens`, or the model's context window filling up) may
 * end in a tool call whose input is incomplete — Anthropic: "If Claude's response is cut off due to
 * hitting the max_tokens limit, and the truncated response contains an incomplete tool use block,
 * you'll need to retry the request"; OpenAI's `length` and Bedrock's `max_tokens` alike. No call of
 * a cut answer is made, whatever its input looks like (a half-written string still validates): each
 * becomes a text block saying so, which the model reads in its own turn when it is asked again (and
 * which keeps that turn from being empty, which providers refuse). Every adapter applies it.
 */
export function withoutCutCalls<B extends { type: string }>(content: readonly (B | ToolUseBlock)[]): (B | TextBlock)[] {
  return content.map((block) => (isToolUse(block) ? cutCall(block.name) : block));
}

/** The text that stands for a call cut off at the output cap (`withoutCutCalls`). */
export function cutCall(name: string): TextBlock {
  return { type: 'text', text: `(a call of ${name}, cut off at max_tokens before its input was complete: not made)` };
}

function isToolUse(block: { type: string }): block is ToolUseBlock {
  return block.type === 'tool_use';
}

/** A tool call's result, answered to the model in the next user message (`is_error` for a failure it may correct). */
export const ToolResultBlock = schemaOnFirstUse(() => z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.string(),
  is_error: z.boolean().optional(),
}));
/** A text block: what the model said, or the user's prompt. */
export type TextBlock = z.infer<ReturnType<typeof TextBlock>>;
/** A tool call the model asks for: its id, the tool's name and the arguments. */
export type ToolUseBlock = z.infer<ReturnType<typeof ToolUseBlock>>;
/** A tool call's result, answered to the model in the next user message (`is_error` for a failure it may correct). */
export type ToolResultBlock = z.infer<ReturnType<typeof ToolResultBlock>>;

/** One block of a message: text, a tool call or a tool result. */
export const ContentBlock = schemaOnFirstUse(() => z.discriminatedUnion('type', [TextBlock(), ToolUseBlock(), ToolResultBlock()]));
/** One block of a message: text, a tool call or a tool result. */
export type ContentBlock = z.infer<ReturnType<typeof ContentBlock>>;

/** One message of the conversation: the user's (prompts, tool results) or the model's. */
export const Message = schemaOnFirstUse(() => z.object({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(ContentBlock())]),
}));
/** One message of the conversation: the user's (prompts, tool results) or the model's. */
export type Message = z.infer<ReturnType<typeof Message>>;

/** A tool as the model is told of it: its name, description and JSON Schema. */
export const ToolSpec = schemaOnFirstUse(() => z.object({
  name: z.string(),
  description: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
}));

/** One model call's request: the model, the output cap, the system prompt, the conversation and the tools. */
export const MessageRequest = schemaOnFirstUse(() => z.object({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  system: z.string().optional(),
  messages: z.array(Message()).min(1),
  tools: z.array(ToolSpec()).optional(),
}));
/** One model call's request: the model, the output cap, the system prompt, the conversation and the tools. */
export type MessageRequest = z.infer<ReturnType<typeof MessageRequest>>;

/** The tokens one model call read and wrote, as its provider counted them. */
export const Usage = schemaOnFirstUse(() => z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cache_read_input_tokens: z.number().int().nonnegative().optional(),
  /** Input tokens written to the provider's prompt cache (priced above plain input). */
  cache_creation_input_tokens: z.number().int().nonnegative().optional(),
}));
/** The tokens one model call read and wrote, as its provider counted them. */
export type Usage = z.infer<ReturnType<typeof Usage>>;

/** One model call's answer: its content, why it stopped and what it used. */
export const MessageResponse = schemaOnFirstUse(() => z.object({
  /**
   * The provider's id of this answer (Anthropic's `msg_…`, OpenAI's `chatcmpl-…`), when it gives
   * one: Bedrock's Converse API names none, and its adapter leaves it out rather than make one up.
   */
  id: z.string().optional(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  /**
   * The model that answered, as the provider names it in its answer (the dated snapshot an alias
   * resolved to, say), when it does: Bedrock's Converse API does not, and its adapter leaves it out.
   */
  model: z.string().optional(),
  content: z.array(z.discriminatedUnion('type', [TextBlock(), ToolUseBlock()])),
  stop_reason: z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence']),
  usage: Usage(),
}));
/** One model call's answer: its content, why it stopped and what it used. */
export type MessageResponse = z.infer<ReturnType<typeof MessageResponse>>;

/** One model call. Implementations map provider faults to the error names of shared/errors.ts. */
export interface ModelClient {
  /** Makes the call; throws the error whose name the state machine retries by (or not). */
  createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse>;
}

/** Every input token a call read, cached or not: what the token budget counts (the same with caching on or off). */
export function inputTokensOf(usage: Usage): number {
  return usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0);
}
