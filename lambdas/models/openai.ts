import OpenAI from 'openai';
import { DEFAULT_MODEL_TIMEOUT_MS } from '../shared/timing.js';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions/completions';
import * as z from 'zod';
import { InvalidInputError, TerminalError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { MessageResponse, unparsedArguments, withoutCutCalls, type Message, type MessageRequest, type ModelClient, type ToolUseBlock } from '../records/messages.js';
import { classifyOpenAIError } from './openai-errors.js';

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
export class OpenAIModelClient implements ModelClient {
  readonly #client: OpenAI;
  readonly #timeoutMs: number;

  constructor(options: OpenAIClientOptions) {
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
    this.#client = new OpenAI({
      apiKey: options.apiKey,
      // Explicit, so that the SDK does not read OPENAI_BASE_URL & co. itself, unchecked.
      baseURL: options.baseUrl ?? 'https://api.openai.com/v1',
      organization: options.organization ?? null,
      project: options.project ?? null,
      // The state machine retries, once and visibly; an SDK retry would hide attempts from it.
      maxRetries: 0,
      timeout: this.#timeoutMs,
    });
  }

  async createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse> {
    const params = toOpenAIParams(request);
    let completion: ChatCompletion;
    try {
      completion = await this.#client.chat.completions.create(params, signal === undefined ? {} : { signal });
    } catch (error) {
      throw classifyOpenAIError(error, Date.now(), { endpoint: this.#client.baseURL, timeoutMs: this.#timeoutMs });
    }
    return fromChatCompletion(completion);
  }
}

/** The ledger's request as Chat Completions parameters. Pure: exported for tests. */
export function toOpenAIParams(request: MessageRequest): ChatCompletionCreateParamsNonStreaming {
  const tools = request.tools?.map(
    (tool): ChatCompletionTool => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.input_schema } }),
  );
  return {
    model: request.model,
    // `max_tokens` is deprecated and refused by reasoning models; this counts the same budget.
    max_completion_tokens: request.max_tokens,
    messages: [...(request.system === undefined ? [] : [{ role: 'system' as const, content: request.system }]), ...request.messages.flatMap(toMessageParams)],
    ...(tools === undefined || tools.length === 0 ? {} : { tools }),
  };
}

/**
 * One ledger message as one or more chat messages. A user turn carrying tool results becomes one
 * `tool` message per result — they must directly follow the assistant message that made the calls —
 * then one `user` message for any text.
 */
function toMessageParams(message: Message): ChatCompletionMessageParam[] {
  if (typeof message.content === 'string') return [{ role: message.role, content: message.content }];
  const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
  if (message.role === 'assistant') {
    const calls = message.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
    return [
      {
        role: 'assistant',
        content: text === '' ? null : text,
        ...(calls.length === 0
          ? {}
          : { tool_calls: calls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.input) } })) }),
      },
    ];
  }
  const results: ChatCompletionMessageParam[] = message.content.flatMap((b) =>
    b.type !== 'tool_result'
      ? []
      : // Chat Completions has no error flag on a tool message: the model reads it from the content.
        [{ role: 'tool' as const, tool_call_id: b.tool_use_id, content: b.is_error === true ? `ERROR: ${b.content}` : b.content }],
  );
  return text === '' ? results : [...results, { role: 'user', content: text }];
}

const Arguments = z.record(z.string(), z.unknown());

/** `text` parsed, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The SDK's completion back in the ledger's shape, validated: model output is outside input. */
export function fromChatCompletion(completion: ChatCompletion): MessageResponse {
  const choice = completion.choices[0];
  if (choice === undefined) throw new InvalidInputError('invalid openai response: no choices');
  const { message, finish_reason: finish } = choice;
  if (message.refusal) throw new TerminalError(`openai model refused to answer: ${message.refusal} — review the prompt and the tool results it was given`);
  if (finish === 'content_filter') throw new TerminalError('openai content filter stopped the answer (finish_reason content_filter) — review the prompt and the tool results it was given');

  const toolUses = (message.tool_calls ?? []).map((call): ToolUseBlock => {
    if (call.type !== 'function') throw new InvalidInputError(`invalid openai response: unexpected tool call of type ${call.type}`);
    // Arguments that are not a JSON object are the model's mistake, answered to it as one
    // (conversation/tool-calls.ts), not a failed run: kept as it wrote them.
    const input = Arguments.safeParse(parseJson(call.function.arguments));
    return { type: 'tool_use', id: call.id, name: call.function.name, input: input.success ? input.data : unparsedArguments(call.function.arguments) };
  });
  const content = [...(message.content ? [{ type: 'text' as const, text: message.content }] : []), ...toolUses];
  const cached = completion.usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const prompt = completion.usage?.prompt_tokens ?? 0;
  return parseOrThrow(
    MessageResponse(),
    {
      id: completion.id,
      type: 'message',
      role: 'assistant',
      model: completion.model,
      // A cut answer may hold a half-written call: none of its calls is made (records/messages.ts).
      content: finish === 'length' ? withoutCutCalls(content) : content,
      stop_reason: finish === 'length' ? 'max_tokens' : toolUses.length > 0 ? 'tool_use' : finish === 'stop' ? 'end_turn' : unsupported(finish),
      usage: {
        // prompt_tokens includes the cached ones; the ledger counts them apart, as Anthropic does.
        input_tokens: prompt - cached,
        output_tokens: completion.usage?.completion_tokens ?? 0,
        cache_read_input_tokens: cached,
        // OpenAI does not bill cache writes apart.
        cache_creation_input_tokens: 0,
      },
    },
    'openai response',
  );
}

function unsupported(finish: string): never {
  throw new InvalidInputError(`invalid openai response: unsupported finish_reason ${finish}`);
}
