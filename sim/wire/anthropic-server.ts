import { createHash } from 'node:crypto';
import * as z from 'zod';
import { MessageRequest, type ContentBlock, type Message } from '../../lambdas/records/messages.js';
import { ANTHROPIC_VERSIONS } from './anthropic-versions.js';
import { conversationProblem } from './conversation.js';
import { answeringModel, checkStartOptions, header, MODEL_SNAPSHOTS, NON_EMPTY_STRING, parseJson, startWireServer, type WireReply, type WireRequest, type WireServer } from './http.js';
import { askPolicy, fitToMaxTokens, type Fault, type Policy } from './policy.js';
import { BreakpointCache, estimateTokens, type PromptBlock } from './prompt-cache.js';

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
  /** Model ids the server knows (at least one); any other is a 404 `not_found_error`. */
  models: readonly string[];
  /**
   * The models' context window in tokens (estimated as characters / 4): a prompt over it is a 400
   * "prompt is too long: N tokens > W maximum", and one whose input plus `max_tokens` is over it a
   * 400 "input length and `max_tokens` exceed context limit: N + M > W, decrease input length or
   * `max_tokens` and try again", as the Messages API answers. @default 200_000
   */
  contextWindow?: number;
  /**
   * The model each requested id answers as (the answer's `model`), as the real API names the dated
   * snapshot an alias resolved to: `{ 'claude-sonnet-4-5': 'claude-sonnet-4-5-20250929' }`. An id
   * not named answers as itself. @default {} (every model answers as itself)
   */
  snapshots?: Readonly<Record<string, string>>;
  /** The loopback port. @default 0 (a free one; read it from `url`) */
  port?: number;
}

const SAMPLING_PARAMETERS = ['temperature', 'top_p', 'top_k'] as const;
const MAX_BREAKPOINTS = 4;

const CacheControl = z.strictObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() });
const cacheable = { cache_control: CacheControl.nullish() };
const Text = z.strictObject({ type: z.literal('text'), text: z.string().min(1), ...cacheable });
const ToolUse = z.strictObject({
  type: z.literal('tool_use'),
  id: z.string().regex(/^[a-zA-Z0-9_-]+$/),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  ...cacheable,
});
const ToolResult = z.strictObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(Text)]).optional(),
  is_error: z.boolean().optional(),
  ...cacheable,
});
const Block = z.discriminatedUnion('type', [Text, ToolUse, ToolResult]);
const WireMessage = z.strictObject({ role: z.enum(['user', 'assistant']), content: z.union([z.string().min(1), z.array(Block).min(1)]) });
const WireTool = z.strictObject({
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,128}$/),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
  type: z.literal('custom').nullish(),
  ...cacheable,
});
export const WireRequestBody = z.strictObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  system: z.union([z.string(), z.array(Text)]).optional(),
  messages: z.array(WireMessage).min(1),
  tools: z.array(WireTool).optional(),
  temperature: z.number().min(0).max(1).optional(),
  top_p: z.number().min(0).max(1).optional(),
  top_k: z.number().int().positive().optional(),
  stop_sequences: z.array(z.string()).optional(),
  metadata: z.strictObject({ user_id: z.string().nullish() }).optional(),
  stream: z.boolean().optional(),
});
export type WireRequestBody = z.infer<typeof WireRequestBody>;

/** The server behind savepoint/sim's startAnthropicServer (sim/wire/servers.ts, which loads this module when one starts). */
export async function startAnthropicServer(options: AnthropicServerOptions): Promise<WireServer> {
  checkStartOptions('startAnthropicServer', options, { apiKey: NON_EMPTY_STRING, snapshots: MODEL_SNAPSHOTS });
  const cache = new BreakpointCache();
  return startWireServer(
    {
      fault: anthropicFault,
      failure: (status, message) => error(status, status === 413 ? 'request_too_large' : 'api_error', message),
      handle: (request) => handle(request, options, cache),
    },
    { port: options.port },
  );
}

function handle(request: WireRequest, options: AnthropicServerOptions, cache: BreakpointCache): WireReply & { accepted?: unknown } {
  if (request.method !== 'POST' || request.path !== '/v1/messages') return error(404, 'not_found_error', `no route ${request.method} ${request.path}`);
  const key = header(request, 'x-api-key') ?? /^Bearer (.+)$/.exec(header(request, 'authorization') ?? '')?.[1];
  if (key !== options.apiKey) return error(401, 'authentication_error', 'invalid x-api-key');
  const version = header(request, 'anthropic-version');
  if (!ANTHROPIC_VERSIONS.some((v) => v === version)) {
    return error(400, 'invalid_request_error', `anthropic-version: expected one of ${ANTHROPIC_VERSIONS.join(', ')}, got ${version ?? '(none)'}`);
  }
  if (!header(request, 'content-type')?.startsWith('application/json')) return error(400, 'invalid_request_error', 'content-type must be application/json');
  const json = parseJson(request.raw);
  if (!json.ok) return error(400, 'invalid_request_error', 'request body is not valid JSON');
  const parsed = WireRequestBody.safeParse(json.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return error(400, 'invalid_request_error', `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  const body = parsed.data;
  const sampling = version === '2026-10-21' ? SAMPLING_PARAMETERS.find((p) => body[p] !== undefined) : undefined;
  if (sampling !== undefined) return error(400, 'invalid_request_error', `${sampling}: not supported in anthropic-version 2026-10-21`);
  if (!options.models.includes(body.model)) return error(404, 'not_found_error', `model: ${body.model}`);

  const blocks = promptBlocks(body);
  const breakpoints = blocks.filter((b) => b.breakpoint).length;
  if (breakpoints > MAX_BREAKPOINTS) return error(400, 'invalid_request_error', `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints}.`);
  const window = options.contextWindow ?? 200_000;
  const input = estimateTokens(blocks.reduce((chars, block) => chars + block.text.length, 0));
  if (input > window) return error(400, 'invalid_request_error', `prompt is too long: ${input} tokens > ${window} maximum`);
  if (input + body.max_tokens > window) {
    return error(400, 'invalid_request_error', `input length and \`max_tokens\` exceed context limit: ${input} + ${body.max_tokens} > ${window}, decrease input length or \`max_tokens\` and try again`);
  }
  const translated = MessageRequest().safeParse(toInternal(body));
  if (!translated.success) return error(400, 'invalid_request_error', translated.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  const internal = translated.data;
  const problem = conversationProblem(internal);
  if (problem !== undefined) return error(400, 'invalid_request_error', problem);

  const reply = fitToMaxTokens(askPolicy(options.policy, internal), body.max_tokens);
  const usage = cache.account(blocks);
  const message = {
      id: `msg_${createHash('sha256').update(request.raw).digest('hex').slice(0, 24)}`,
      type: 'message',
      role: 'assistant',
      model: answeringModel(options.snapshots, body.model),
      content: reply.content,
      stop_reason: reply.stop_reason,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input,
        cache_creation_input_tokens: usage.cacheWrite,
        cache_read_input_tokens: usage.cacheRead,
        output_tokens: reply.outputTokens,
      },
  };
  const headers = { 'request-id': requestId(request.raw) };
  if (body.stream === true) return { status: 200, headers, accepted: json.value, body: undefined, events: messageEvents(message) };
  return { status: 200, headers, accepted: json.value, body: message };
}

/**
 * A message as the Messages API streams it (https://docs.anthropic.com/en/docs/build-with-claude/streaming):
 * `message_start` with the usage so far, each block's start, deltas and stop (text in `text_delta`s,
 * a tool's input as `input_json_delta` pieces), `message_delta` with the stop reason and the output
 * tokens, `message_stop`.
 */
export function messageEvents(message: { content: ContentBlock[]; stop_reason: string; usage: Record<string, number> } & Record<string, unknown>): string {
  const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const pieces = (text: string) => text.match(/[\s\S]{1,16}/g) ?? [''];
  const { content, stop_reason, usage, ...rest } = message;
  const events = [event('message_start', { message: { ...rest, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } })];
  content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      for (const text of pieces(block.text)) events.push(event('content_block_delta', { index, delta: { type: 'text_delta', text } }));
    } else if (block.type === 'tool_use') {
      events.push(event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }));
      for (const partial_json of pieces(JSON.stringify(block.input))) events.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }));
    }
    events.push(event('content_block_stop', { index }));
  });
  events.push(event('message_delta', { delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: usage['output_tokens'] } }));
  events.push(event('message_stop', {}));
  return events.join('');
}

/** The prompt in Anthropic's cache order — tools, system, messages — each block without its marker. */
export function promptBlocks(body: WireRequestBody): PromptBlock[] {
  const marked = <T extends { cache_control?: unknown }>(value: T): PromptBlock => {
    const { cache_control, ...rest } = value;
    return { text: JSON.stringify(rest), breakpoint: cache_control != null };
  };
  const system = typeof body.system === 'string' ? [{ type: 'text' as const, text: body.system }] : (body.system ?? []);
  // The string shorthand renders as the one text block it stands for.
  const messages = body.messages.flatMap((message) =>
    (typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content).map((block) => {
      const { text, breakpoint } = marked(block);
      return { text: `${message.role}:${text}`, breakpoint };
    }),
  );
  return [...(body.tools ?? []).map(marked), ...system.map(marked), ...messages];
}

/** The wire request in the ledger's shape, for the conversation checks and the policy. */
export function toInternal(body: WireRequestBody): MessageRequest {
  const system = typeof body.system === 'string' ? body.system : body.system?.map((b) => b.text).join('\n');
  const messages: Message[] = body.messages.map((message) => ({
    role: message.role,
    content:
      typeof message.content === 'string'
        ? message.content
        : message.content.map((block): ContentBlock => {
            if (block.type === 'text') return { type: 'text', text: block.text };
            if (block.type === 'tool_use') return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
            const content = typeof block.content === 'string' ? block.content : (block.content ?? []).map((t) => t.text).join('');
            return { type: 'tool_result', tool_use_id: block.tool_use_id, content, ...(block.is_error === undefined ? {} : { is_error: block.is_error }) };
          }),
  }));
  return {
    model: body.model,
    max_tokens: body.max_tokens,
    ...(system === undefined ? {} : { system }),
    messages,
    ...(body.tools === undefined ? {} : { tools: body.tools.map((t) => ({ name: t.name, description: t.description ?? '', input_schema: t.input_schema })) }),
  };
}

/** The documented error answers (https://docs.anthropic.com/en/api/errors). */
export function anthropicFault(fault: Fault): WireReply {
  switch (fault.kind) {
    case 'rate_limit':
      return error(429, 'rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute.', retryAfter(fault));
    case 'overloaded':
      return error(529, 'overloaded_error', 'Overloaded', retryAfter(fault));
    case 'server_error':
      return error(500, 'api_error', 'Internal server error');
    case 'spend_cap':
      // https://platform.claude.com/docs/en/api/rate-limits (the tier's cap) and /en/api/errors (a limit you set).
      if (fault.spendCap === 'tier') {
        return error(429, 'rate_limit_error', "You have reached your API usage limits: your organization has crossed its monthly API usage threshold, set based on your organization's API tier. You will regain access on 2027-01-01 at 00:00 UTC.", {}, { error_code: 'enforced_spend_limit_reached' });
      }
      if (fault.spendCap === 'limit') return error(400, 'invalid_request_error', 'You have reached your specified API usage limits. You will regain access on 2027-01-01 at 00:00 UTC.');
      return error(400, 'invalid_request_error', 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.');
    case 'auth':
      return error(401, 'authentication_error', 'invalid x-api-key');
  }
}

function retryAfter(fault: Fault): Record<string, string> {
  return fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
}

function error(status: number, type: string, message: string, headers: Record<string, string> = {}, details?: Record<string, string>): WireReply {
  return { status, headers: { 'request-id': requestId(message), ...headers }, body: { type: 'error', error: { type, message, ...(details && { details }) }, request_id: requestId(message) } };
}

function requestId(seed: string): string {
  return `req_${createHash('sha256').update(seed).digest('hex').slice(0, 24)}`;
}
