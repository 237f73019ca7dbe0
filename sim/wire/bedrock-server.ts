import { createHash } from 'node:crypto';
import * as z from 'zod';
import { MessageRequest, type ContentBlock, type Message } from '../../lambdas/records/messages.js';
import { conversationProblem } from './conversation.js';
import { checkStartOptions, NO_STREAMING, NON_EMPTY_STRING, parseJson, startWireServer, type OptionRule, type WireReply, type WireRequest, type WireServer } from './http.js';
import { askPolicy, fitToMaxTokens, type Fault, type Policy } from './policy.js';
import { BreakpointCache, type PromptBlock } from './prompt-cache.js';
import { sigV4Problem } from './sigv4.js';

/**
 * A strict local Bedrock Runtime Converse API (`POST /model/{modelId}/converse`, HTTP/2 cleartext
 * like the SDK's default handler): checks the SigV4 signature (service `bedrock`, the configured
 * region, `x-amz-date`, known key, signature recomputed), the body's shape (unknown fields refused,
 * one member per content block union, `maxTokens` required), the conversation rules and the model
 * id; answers errors as Bedrock does (`x-amzn-errortype` + `{ message }`), otherwise the policy's
 * reply with usage that models Claude's prompt caching on `cachePoint` blocks.
 */

/** What {@link startBedrockServer} serves. */
export interface BedrockServerOptions {
  /** Decides each accepted request's answer (the server only checks and speaks the wire). */
  policy: Policy;
  /** The region a request must be signed for. */
  region: string;
  /** Access key id → secret access key of the identities the server accepts. */
  credentials: Record<string, string>;
  /** Model ids the server knows (at least one); any other is a 400 `ValidationException` ("The provided model identifier is invalid."). */
  models: readonly string[];
  /** The loopback port. @default 0 (a free one; read it from `url`) */
  port?: number;
}

const MAX_CACHE_POINTS = 4;

const CREDENTIALS: OptionRule = [
  'an object of access key id → secret access key (strings)',
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((secret) => typeof secret === 'string' && secret !== ''),
];

const CachePoint = z.strictObject({ cachePoint: z.strictObject({ type: z.literal('default'), ttl: z.enum(['5m', '1h']).optional() }) });
const Text = z.strictObject({ text: z.string().min(1) });
const ToolUse = z.strictObject({
  toolUse: z.strictObject({ toolUseId: z.string().regex(/^[a-zA-Z0-9_-]+$/), name: z.string().min(1), input: z.record(z.string(), z.unknown()) }),
});
const ToolResult = z.strictObject({
  toolResult: z.strictObject({
    toolUseId: z.string().min(1),
    content: z.array(z.union([Text, z.strictObject({ json: z.record(z.string(), z.unknown()) })])).min(1),
    status: z.enum(['success', 'error']).optional(),
  }),
});
const Block = z.union([Text, ToolUse, ToolResult, CachePoint]);
type Block = z.infer<typeof Block>;
const WireMessage = z.strictObject({ role: z.enum(['user', 'assistant']), content: z.array(Block).min(1) });
const ToolSpec = z.strictObject({
  toolSpec: z.strictObject({
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
    description: z.string().min(1).optional(),
    inputSchema: z.strictObject({ json: z.record(z.string(), z.unknown()) }),
    strict: z.boolean().optional(),
  }),
});
const WireBody = z.strictObject({
  messages: z.array(WireMessage).min(1),
  system: z.array(z.union([Text, CachePoint])).optional(),
  inferenceConfig: z.strictObject({
    maxTokens: z.number().int().positive(),
    temperature: z.number().min(0).max(1).optional(),
    topP: z.number().min(0).max(1).optional(),
    stopSequences: z.array(z.string()).optional(),
  }),
  toolConfig: z.strictObject({ tools: z.array(z.union([ToolSpec, CachePoint])).min(1), toolChoice: z.record(z.string(), z.unknown()).optional() }).optional(),
});
type WireBody = z.infer<typeof WireBody>;

/** The server behind savepoint/sim's startBedrockServer (sim/wire/servers.ts, which loads this module when one starts). */
export async function startBedrockServer(options: BedrockServerOptions): Promise<WireServer> {
  checkStartOptions('startBedrockServer', options, { region: NON_EMPTY_STRING, credentials: CREDENTIALS });
  const cache = new BreakpointCache();
  const secrets = new Map(Object.entries(options.credentials));
  return startWireServer(
    {
      fault: bedrockFault,
      // Bedrock refuses an input over its limit as a ValidationException.
      failure: (status, message) => (status === 413 ? error(400, 'ValidationException', message) : error(500, 'InternalServerException', message)),
      handle: (request) => handle(request, options, secrets, cache),
    },
    { port: options.port, protocol: 'http2' },
  );
}

async function handle(
  request: WireRequest,
  options: BedrockServerOptions,
  secrets: ReadonlyMap<string, string>,
  cache: BreakpointCache,
): Promise<WireReply & { accepted?: unknown }> {
  if (request.method === 'POST' && /^\/model\/[^/]+\/converse-stream$/.test(request.path)) {
    return error(404, 'UnknownOperationException', `${NO_STREAMING}: ConverseStream (${request.method} ${request.path}) is not served; send Converse (ConverseCommand)`);
  }
  const route = /^\/model\/([^/]+)\/converse$/.exec(request.path);
  if (request.method !== 'POST' || route === null) return error(404, 'UnknownOperationException', `no operation at ${request.method} ${request.path}`);
  const signature = await sigV4Problem(request, { region: options.region, service: 'bedrock', secrets });
  if (signature !== undefined) return error(signature.name === 'IncompleteSignatureException' ? 400 : 403, signature.name, signature.message);
  const modelId = decodeURIComponent(route[1] ?? '');
  if (!options.models.includes(modelId)) return error(400, 'ValidationException', 'The provided model identifier is invalid.');

  const json = parseJson(request.raw);
  if (!json.ok) return error(400, 'SerializationException', 'Request body is not valid JSON');
  const parsed = WireBody.safeParse(json.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return error(400, 'ValidationException', `1 validation error detected: Value at '${issue?.path.join('.') || '(body)'}' failed to satisfy constraint: ${issue?.message ?? 'invalid'}`);
  }
  const body = parsed.data;
  const blocks = promptBlocks(body);
  if (typeof blocks === 'string') return error(400, 'ValidationException', blocks);
  const points = blocks.filter((b) => b.breakpoint).length;
  if (points > MAX_CACHE_POINTS) return error(400, 'ValidationException', `The number of cache points (${points}) exceeds the maximum of ${MAX_CACHE_POINTS}.`);
  const translated = MessageRequest().safeParse(toInternal(body, modelId));
  if (!translated.success) return error(400, 'ValidationException', translated.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  const problem = conversationProblem(translated.data);
  if (problem !== undefined) return error(400, 'ValidationException', problem);

  const reply = fitToMaxTokens(askPolicy(options.policy, translated.data), body.inferenceConfig.maxTokens);
  const usage = cache.account(blocks);
  return {
    status: 200,
    headers: { 'x-amzn-requestid': requestId(request.raw) },
    accepted: json.value,
    body: {
      output: {
        message: {
          role: 'assistant',
          content: reply.content.map((b) => (b.type === 'text' ? { text: b.text } : { toolUse: { toolUseId: b.id, name: b.name, input: b.input } })),
        },
      },
      stopReason: reply.stop_reason,
      usage: {
        inputTokens: usage.input,
        outputTokens: reply.outputTokens,
        totalTokens: usage.input + usage.cacheRead + usage.cacheWrite + reply.outputTokens,
        cacheReadInputTokens: usage.cacheRead,
        cacheWriteInputTokens: usage.cacheWrite,
      },
      metrics: { latencyMs: 1 },
    },
  };
}

/**
 * The prompt in Claude's cache order (tools, system, messages); a `cachePoint` marks the block
 * before it. A cache point with nothing before it is refused.
 */
function promptBlocks(body: WireBody): PromptBlock[] | string {
  const out: { text: string; breakpoint: boolean }[] = [];
  const add = (where: string, blocks: readonly object[]): string | undefined => {
    for (const block of blocks) {
      if ('cachePoint' in block) {
        const previous = out.at(-1);
        if (previous === undefined || previous.breakpoint) return `${where}: a cachePoint must follow content`;
        previous.breakpoint = true;
      } else {
        out.push({ text: `${where}:${JSON.stringify(block)}`, breakpoint: false });
      }
    }
    return undefined;
  };
  const problem =
    add('tools', body.toolConfig?.tools ?? []) ??
    add('system', body.system ?? []) ??
    body.messages.map((m) => add(m.role, m.content)).find((p) => p !== undefined);
  return problem ?? out;
}

/** The wire request in the ledger's shape, for the conversation checks and the policy. */
function toInternal(body: WireBody, model: string): unknown {
  const system = (body.system ?? []).flatMap((b) => ('text' in b ? [b.text] : [])).join('\n');
  const messages: Message[] = body.messages.map((m) => ({ role: m.role, content: m.content.flatMap(toInternalBlock) }));
  const tools = (body.toolConfig?.tools ?? []).flatMap((t) =>
    'toolSpec' in t ? [{ name: t.toolSpec.name, description: t.toolSpec.description ?? '', input_schema: t.toolSpec.inputSchema.json }] : [],
  );
  return { model, max_tokens: body.inferenceConfig.maxTokens, ...(system === '' ? {} : { system }), messages, ...(tools.length === 0 ? {} : { tools }) };
}

function toInternalBlock(block: Block): ContentBlock[] {
  if ('cachePoint' in block) return [];
  if ('text' in block) return [{ type: 'text', text: block.text }];
  if ('toolUse' in block) return [{ type: 'tool_use', id: block.toolUse.toolUseId, name: block.toolUse.name, input: block.toolUse.input }];
  const { toolUseId, content, status } = block.toolResult;
  const text = content.map((c) => ('text' in c ? c.text : JSON.stringify(c.json))).join('');
  return [{ type: 'tool_result', tool_use_id: toolUseId, content: text, ...(status === 'error' ? { is_error: true } : {}) }];
}

/** The documented error answers of Converse (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html). */
export function bedrockFault(fault: Fault): WireReply {
  const retryAfter: Record<string, string> = fault.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.retryAfterSeconds) };
  switch (fault.kind) {
    case 'rate_limit':
      return error(429, 'ThrottlingException', 'Too many requests, please wait before trying again.', retryAfter);
    case 'overloaded':
      return error(503, 'ServiceUnavailableException', 'Bedrock is unable to process your request.', retryAfter);
    case 'server_error':
      return error(500, 'InternalServerException', 'The server encountered an error processing your request.');
    case 'spend_cap':
      return error(403, 'AccessDeniedException', 'Model access is denied due to INVALID_PAYMENT_INSTRUMENT:A valid payment instrument must be provided.');
    case 'auth':
      return error(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
  }
}

function error(status: number, name: string, message: string, headers: Record<string, string> = {}): WireReply {
  return { status, headers: { 'x-amzn-errortype': name, 'x-amzn-requestid': requestId(message), ...headers }, body: { message } };
}

function requestId(seed: string): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
