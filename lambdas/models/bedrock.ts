import { DEFAULT_MODEL_TIMEOUT_MS } from '../shared/timing.js';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  type ContentBlock as BedrockBlock,
  type ConverseCommandInput,
  type ConverseCommandOutput,
  type Message as BedrockMessage,
  type Tool,
} from '@aws-sdk/client-bedrock-runtime';
import * as z from 'zod';
import { InvalidInputError, TerminalError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { MessageResponse, unparsedArguments, withoutCutCalls, type ContentBlock, type Message, type MessageRequest, type ModelClient } from '../records/messages.js';
import { classifyBedrockError } from './bedrock-errors.js';

export interface BedrockClientOptions {
  region: string;
  /** e.g. a VPC endpoint, or the local wire server. @default the regional endpoint */
  endpoint?: string | undefined;
  /** @default the SDK's provider chain (the Lambda role on AWS) */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined } | undefined;
  /** Budget of one call. @default 60_000 */
  timeoutMs?: number | undefined;
  /**
   * Whether to send `cachePoint` blocks. Models without prompt caching refuse them (a
   * ValidationException): turn off for those. @default true
   */
  promptCaching?: boolean | undefined;
}

/**
 * A `ModelClient` on the Bedrock Converse API through `@aws-sdk/client-bedrock-runtime`: IAM, no key.
 * Translates the ledger's Anthropic-like shape to Converse (`toolUse` / `toolResult` blocks,
 * `toolSpec.inputSchema.json`) and places three `cachePoint` blocks — after the system prompt, after
 * the tools and after the last block of the conversation — so that each turn reads the previous
 * turn's prefix from the cache.
 */
export class BedrockModelClient implements ModelClient {
  readonly #client: BedrockRuntimeClient;
  readonly #caching: boolean;
  /** Named in a connection error. */
  readonly #endpoint: string;
  /** Named when a call outlives it. */
  readonly #timeoutMs: number;

  constructor(options: BedrockClientOptions) {
    this.#endpoint = options.endpoint ?? `https://bedrock-runtime.${options.region}.amazonaws.com`;
    this.#caching = options.promptCaching ?? true;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
    this.#client = new BedrockRuntimeClient({
      region: options.region,
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
      // The state machine retries, once and visibly; an SDK retry would hide attempts from it.
      maxAttempts: 1,
      // The client's own default handler (HTTP/2), with a deadline.
      requestHandler: { requestTimeout: this.#timeoutMs, disableConcurrentStreams: true },
    });
  }

  async createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse> {
    const input = toConverseInput(request, this.#caching);
    let output: ConverseCommandOutput;
    try {
      output = await this.#client.send(new ConverseCommand(input), signal === undefined ? {} : { abortSignal: signal });
    } catch (error) {
      throw classifyBedrockError(error, Date.now(), { endpoint: this.#endpoint, timeoutMs: this.#timeoutMs });
    }
    return fromConverseOutput(output);
  }
}

const CACHE_POINT = { cachePoint: { type: 'default' } } as const;

/** Tool inputs and schemas are JSON already (the ledger holds JSON); this proves it to the SDK's type. */
const Json = z.json();
function document(value: Record<string, unknown>, what: string): z.infer<typeof Json> {
  return parseOrThrow(Json, value, what);
}

/** The ledger's request as Converse input, with its cache points. Pure: exported for tests. */
export function toConverseInput(request: MessageRequest, caching = true): ConverseCommandInput {
  const cache = caching ? [CACHE_POINT] : [];
  const tools = (request.tools ?? []).map((tool): Tool => ({ toolSpec: { name: tool.name, description: tool.description, inputSchema: { json: document(tool.input_schema, `input schema of tool ${tool.name}`) } } }));
  return {
    modelId: request.model,
    ...(request.system === undefined ? {} : { system: [{ text: request.system }, ...cache] }),
    messages: request.messages.map((message, i, all): BedrockMessage => {
      const content = toBlocks(message);
      return { role: message.role, content: i === all.length - 1 ? [...content, ...cache] : content };
    }),
    inferenceConfig: { maxTokens: request.max_tokens },
    ...(tools.length === 0 ? {} : { toolConfig: { tools: [...tools, ...cache] } }),
  };
}

function toBlocks(message: Message): BedrockBlock[] {
  if (typeof message.content === 'string') return [{ text: message.content }];
  return message.content.map((block): BedrockBlock => {
    switch (block.type) {
      case 'text':
        return { text: block.text };
      case 'tool_use':
        return { toolUse: { toolUseId: block.id, name: block.name, input: document(block.input, `input of tool call ${block.id}`) } };
      case 'tool_result':
        return { toolResult: { toolUseId: block.tool_use_id, content: [{ text: block.content }], ...(block.is_error === true ? { status: 'error' } : {}) } };
    }
  });
}

const ToolInput = z.record(z.string(), z.unknown());

/** The SDK's output back in the ledger's shape, validated: model output is outside input. */
export function fromConverseOutput(output: ConverseCommandOutput): MessageResponse {
  const message = output.output?.message;
  if (message === undefined) throw new InvalidInputError('invalid bedrock response: no output message');
  const stop = stopReason(output.stopReason);
  const blocks = (message.content ?? []).map((block): ContentBlock => {
    if (block.text !== undefined) return { type: 'text', text: block.text };
    if (block.toolUse !== undefined) {
      const { toolUseId, name, input } = block.toolUse;
      // Input that is no JSON object is the model's mistake, answered to it (conversation/tool-calls.ts), as on the other providers.
      const parsed = ToolInput.safeParse(input);
      return { type: 'tool_use', id: toolUseId ?? '', name: name ?? '', input: parsed.success ? parsed.data : unparsedArguments(JSON.stringify(input ?? null)) };
    }
    // Reasoning, citations, images: never requested, so never expected.
    throw new InvalidInputError(`invalid bedrock response: unexpected content block ${Object.keys(block).join(', ')}`);
  });
  // A cut answer's last toolUse may hold half its input: none of its calls is made (records/messages.ts).
  const content = stop === 'max_tokens' ? withoutCutCalls(blocks) : blocks;
  const usage = output.usage;
  return parseOrThrow(
    MessageResponse(),
    {
      // No `id` and no `model`: Converse names neither its answer nor the model that wrote it, and
      // none is made up (the turn's span has no gen_ai.response.id; its .model is the id asked for).
      type: 'message',
      role: 'assistant',
      content,
      stop_reason: stop,
      usage: {
        // Converse counts cache reads and writes apart from inputTokens, as Anthropic does.
        input_tokens: usage?.inputTokens ?? 0,
        output_tokens: usage?.outputTokens ?? 0,
        cache_read_input_tokens: usage?.cacheReadInputTokens ?? 0,
        cache_creation_input_tokens: usage?.cacheWriteInputTokens ?? 0,
      },
    },
    'bedrock response',
  );
}

function stopReason(reason: ConverseCommandOutput['stopReason']): MessageResponse['stop_reason'] {
  switch (reason) {
    case 'end_turn':
    case 'tool_use':
    case 'max_tokens':
    case 'stop_sequence':
      return reason;
    case 'model_context_window_exceeded':
      return 'max_tokens';
    case 'guardrail_intervened':
    case 'content_filtered':
      throw new TerminalError(`bedrock stopped the answer (stopReason ${reason}) — review the prompt, the tool results and the guardrail’s configuration`);
    case 'malformed_model_output':
    case 'malformed_tool_use':
      throw new InvalidInputError(`invalid model output: bedrock reported stopReason ${reason}`);
    default:
      throw new InvalidInputError(`invalid bedrock response: unsupported stopReason ${String(reason)}`);
  }
}
