import { createHash } from 'node:crypto';
import * as z from 'zod';
import { MessageRequest, unparsedOf, type ContentBlock, type Message } from '../../lambdas/records/messages.js';
import { answeringModel, checkStartOptions, header, MODEL_SNAPSHOTS, NO_STREAMING, NON_EMPTY_STRING, parseJson, startWireServer, type WireReply, type WireRequest, type WireServer } from './http.js';
import { toolSchemaProblem } from './json-schema.js';
import { askPolicy, fitToMaxTokens, type Fault, type Policy, type PolicyReply } from './policy.js';
import { estimateTokens, PrefixCache } from './prompt-cache.js';

/**
 * A strict local OpenAI Chat Completions API (`POST /v1/chat/completions`): checks
 * `Authorization: Bearer`, the body's shape (unknown fields refused, a token limit required), the
 * roles, that every `tool` message answers a `tool_calls` entry of the assistant message before it
 * and that every call is answered, the tool schemas and the model id; answers errors in OpenAI's
 * shape (`{ error: { message, type, param, code } }`), otherwise the policy's reply with
 * `cached_tokens` from automatic prefix caching (see prompt-cache.ts).
 */

/** What {@link startOpenAIServer} serves. */
export interface OpenAIServerOptions {
  /** Decides each accepted request's answer (the server only checks and speaks the wire). */
  policy: Policy;
  /** The one bearer key the server accepts; any other is a 401 `invalid_api_key`. */
  apiKey: string;
  /** Model ids the server knows (at least one); any other is a 404 `model_not_found`. */
  models: readonly string[];
  /**
   * The model each requested id answers as (the answer's `model`), as the real API names the dated
   * snapshot an alias resolved to: `{ 'claude-sonnet-4-5': 'claude-sonnet-4-5-20250929' }`. An id
   * not named answers as itself. @default {} (every model answers as itself)
   */
  snapshots?: Readonly<Record<string, string>>;
  /** The loopback port. @default 0 (a free one; read it from `url`) */
  port?: number;
}

const TextPart = z.strictObject({ type: z.literal('text'), text: z.string() });
const Content = z.union([z.string(), z.array(TextPart).min(1)]);
const ToolCall = z.strictObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.strictObject({ name: z.string().min(1), arguments: z.string() }),
});
const WireMessage = z.discriminatedUnion('role', [
  z.strictObject({ role: z.enum(['system', 'developer']), content: Content, name: z.string().optional() }),
  z.strictObject({ role: z.literal('user'), content: Content, name: z.string().optional() }),
  z.strictObject({
    role: z.literal('assistant'),
    content: Content.nullish(),
    tool_calls: z.array(ToolCall).min(1).optional(),
    refusal: z.string().nullish(),
    name: z.string().optional(),
  }),
  z.strictObject({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: Content }),
]);
type WireMessage = z.infer<typeof WireMessage>;
const WireTool = z.strictObject({
  type: z.literal('function'),
  function: z.strictObject({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});
const WireBody = z
  .strictObject({
    model: z.string().min(1),
    messages: z.array(WireMessage).min(1),
    max_completion_tokens: z.number().int().positive().optional(),
    max_tokens: z.number().int().positive().optional(),
    tools: z.array(WireTool).optional(),
    tool_choice: z.union([z.enum(['none', 'auto', 'required']), z.record(z.string(), z.unknown())]).optional(),
    parallel_tool_calls: z.boolean().optional(),
    temperature: z.number().min(0).max(2).optional(),
    prompt_cache_key: z.string().optional(),
    user: z.string().optional(),
    n: z.literal(1).optional(),
    stream: z.literal(false).optional(),
  })
  .refine((b) => b.max_completion_tokens !== undefined || b.max_tokens !== undefined, {
    message: 'a token limit is required (max_completion_tokens)',
    path: ['max_completion_tokens'],
  });
type WireBody = z.infer<typeof WireBody>;

/** The server behind savepoint/sim's startOpenAIServer (sim/wire/servers.ts, which loads this module when one starts). */
export async function startOpenAIServer(options: OpenAIServerOptions): Promise<WireServer> {
  checkStartOptions('startOpenAIServer', options, { apiKey: NON_EMPTY_STRING, snapshots: MODEL_SNAPSHOTS });
  const cache = new PrefixCache();
  return startWireServer(
    {
      fault: openAIFault,
      failure: (status, message) => error(status, status === 413 ? 'invalid_request_error' : 'server_error', message, null, null),
      handle: (request) => handle(request, options, cache),
    },
    { port: options.port },
  );
}

function handle(request: WireRequest, options: OpenAIServerOptions, cache: PrefixCache): WireReply & { accepted?: unknown } {
  if (request.method !== 'POST' || request.path !== '/v1/chat/completions') {
    return error(404, 'invalid_request_error', `Invalid URL (${request.method} ${request.path})`, null, 'unknown_url');
  }
  const key = /^Bearer (.+)$/.exec(header(request, 'authorization') ?? '')?.[1];
  if (key !== options.apiKey) return incorrectKey(key);
  const json = parseJson(request.raw);
  if (!json.ok) return error(400, 'invalid_request_error', 'We could not parse the JSON body of your request.', null, null);
  if ((json.value as { stream?: unknown } | null)?.stream === true) {
    return error(400, 'invalid_request_error', `${NO_STREAMING}: stream: true is refused; send the request without stream (or stream: false)`, 'stream', 'unsupported_value');
  }
  const parsed = WireBody.safeParse(json.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = issue?.path.join('.') || null;
    return error(400, 'invalid_request_error', `Invalid parameter ${param ?? '(body)'}: ${issue?.message ?? 'invalid'}`, param, 'invalid_value');
  }
  const body = parsed.data;
  if (!options.models.includes(body.model)) {
    return error(404, 'invalid_request_error', `The model \`${body.model}\` does not exist or you do not have access to it.`, null, 'model_not_found');
  }
  for (const [i, tool] of (body.tools ?? []).entries()) {
    const problem = toolSchemaProblem(tool.function.parameters ?? { type: 'object', properties: {} });
    if (problem !== undefined) return error(400, 'invalid_request_error', `Invalid schema for function '${tool.function.name}': parameters ${problem}`, `tools[${i}].function.parameters`, 'invalid_function_parameters');
  }
  const problem = toolMessageProblem(body.messages);
  if (problem !== undefined) return error(400, 'invalid_request_error', problem.message, problem.param, null);
  const internal = toInternal(body);
  if (typeof internal === 'string') return error(400, 'invalid_request_error', internal, 'messages', null);

  const reply = fitToMaxTokens(askPolicy(options.policy, internal), body.max_completion_tokens ?? body.max_tokens ?? 0);
  // Tools first, then one line per message: later turns extend the rendering of earlier ones.
  const prompt = [JSON.stringify(body.tools ?? []), ...body.messages.map((m) => JSON.stringify(m))].join('\n');
  const promptTokens = estimateTokens(prompt.length);
  const cached = Math.min(cache.account(prompt), promptTokens);
  return {
    status: 200,
    headers: { 'x-request-id': `req_${hash(request.raw).slice(0, 24)}` },
    accepted: json.value,
    body: {
      id: `chatcmpl-${hash(request.raw).slice(0, 24)}`,
      object: 'chat.completion',
      created: 1_790_000_000,
      model: answeringModel(options.snapshots, body.model),
      choices: [{ index: 0, message: toAssistantMessage(reply), logprobs: null, finish_reason: FINISH[reply.stop_reason] }],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: reply.outputTokens,
        total_tokens: promptTokens + reply.outputTokens,
        prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      },
      service_tier: 'default',
      system_fingerprint: null,
    },
  };
}

const FINISH: Record<PolicyReply['stop_reason'], string> = { end_turn: 'stop', stop_sequence: 'stop', tool_use: 'tool_calls', max_tokens: 'length' };

function toAssistantMessage(reply: PolicyReply): Record<string, unknown> {
  const text = reply.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
  // A policy's call whose input is `unparsedArguments(text)` is a model writing `text` as its arguments.
  const calls = reply.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, type: 'function', function: { name: b.name, arguments: unparsedOf(b.input) ?? JSON.stringify(b.input) } }] : []));
  return { role: 'assistant', content: text === '' ? null : text, refusal: null, annotations: [], ...(calls.length === 0 ? {} : { tool_calls: calls }) };
}

/** OpenAI's pairing rule: tool messages answer the calls of the assistant message right before them, all of them. */
function toolMessageProblem(messages: readonly WireMessage[]): { message: string; param: string } | undefined {
  let open: Set<string> | undefined;
  for (const [i, message] of messages.entries()) {
    if (message.role === 'tool') {
      if (open === undefined || !open.has(message.tool_call_id)) {
        return { message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", param: `messages.[${i}].role` };
      }
      open.delete(message.tool_call_id);
      continue;
    }
    if (open !== undefined && open.size > 0) return unanswered(open, i);
    open = message.role === 'assistant' && message.tool_calls ? new Set(message.tool_calls.map((c) => c.id)) : undefined;
  }
  return open !== undefined && open.size > 0 ? unanswered(open, messages.length) : undefined;
}

function unanswered(open: Set<string>, i: number): { message: string; param: string } {
  return {
    message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`,
    param: `messages.[${i}]`,
  };
}

/** The wire request in the ledger's shape for the policy (consecutive same-role messages merged), or why not. */
function toInternal(body: WireBody): MessageRequest | string {
  const text = (content: z.infer<typeof Content> | null | undefined): string =>
    typeof content === 'string' ? content : (content ?? []).map((p) => p.text).join('');
  const system = body.messages.flatMap((m) => (m.role === 'system' || m.role === 'developer' ? [text(m.content)] : []));
  const messages: Message[] = [];
  for (const m of body.messages) {
    let role: Message['role'];
    let blocks: ContentBlock[];
    if (m.role === 'system' || m.role === 'developer') continue;
    if (m.role === 'tool') {
      role = 'user';
      blocks = [{ type: 'tool_result', tool_use_id: m.tool_call_id, content: text(m.content) }];
    } else if (m.role === 'user') {
      role = 'user';
      blocks = [{ type: 'text', text: text(m.content) }];
    } else if (m.role === 'assistant') {
      role = 'assistant';
      blocks = text(m.content) === '' ? [] : [{ type: 'text', text: text(m.content) }];
      for (const call of m.tool_calls ?? []) {
        const input = parseJson(call.function.arguments);
        if (!input.ok) return `tool call ${call.id}: function.arguments is not valid JSON`;
        blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input: input.value as Record<string, unknown> });
      }
    } else {
      continue;
    }
    const previous = messages.at(-1);
    if (previous?.role === role && Array.isArray(previous.content)) previous.content.push(...blocks);
    else messages.push({ role, content: blocks });
  }
  const parsed = MessageRequest().safeParse({
    model: body.model,
    max_tokens: body.max_completion_tokens ?? body.max_tokens,
    ...(system.length === 0 ? {} : { system: system.join('\n') }),
    messages,
    ...(body.tools === undefined
      ? {}
      : { tools: body.tools.map((t) => ({ name: t.function.name, description: t.function.description ?? '', input_schema: t.function.parameters ?? {} })) }),
  });
  return parsed.success ? parsed.data : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
}

/** The documented error answers (https://platform.openai.com/docs/guides/error-codes). */
export function openAIFault(fault: Fault): WireReply {
  const retryAfter: Record<string, string> = fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
  switch (fault.kind) {
    case 'rate_limit':
      return error(429, 'requests', 'Rate limit reached for requests per min (RPM): Limit 3, Used 3, Requested 1.', null, 'rate_limit_exceeded', retryAfter);
    case 'overloaded':
      return error(503, 'server_error', 'The engine is currently overloaded, please try again later.', null, null, retryAfter);
    case 'server_error':
      return error(500, 'server_error', 'The server had an error while processing your request. Sorry about that!', null, null);
    case 'spend_cap':
      return error(429, 'insufficient_quota', 'You exceeded your current quota, please check your plan and billing details.', null, 'insufficient_quota');
    case 'auth':
      return incorrectKey('sk-revoked');
  }
}

function incorrectKey(key: string | undefined): WireReply {
  return error(401, 'invalid_request_error', `Incorrect API key provided: ${key === undefined ? '(none)' : `${key.slice(0, 3)}***`}.`, null, 'invalid_api_key');
}

function error(status: number, type: string, message: string, param: string | null, code: string | null, headers: Record<string, string> = {}): WireReply {
  return { status, headers, body: { error: { message, type, param, code } } };
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
