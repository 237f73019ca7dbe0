import { BaseAnthropic } from '@anthropic-ai/sdk/client';
import { Messages } from '@anthropic-ai/sdk/resources/messages/messages';
import type { Message as AnthropicMessage } from '@anthropic-ai/sdk/resources/messages/messages';
import { InvalidInputError, TerminalError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { MessageResponse, withoutCutCalls, type MessageRequest, type ModelClient } from '../records/messages.js';
import { classifyAnthropicError } from './anthropic-errors.js';
import { toAnthropicParams } from './anthropic-params.js';
import { DEFAULT_MODEL_TIMEOUT_MS, maxTokensWithin } from '../shared/timing.js';

export { toAnthropicParams } from './anthropic-params.js';

export interface AnthropicClientOptions {
  apiKey: string;
  /** @default https://api.anthropic.com (the SDK's default) */
  baseUrl?: string | undefined;
  /** Budget of one call, connection to last byte (streamed or not). @default 60_000 */
  timeoutMs?: number | undefined;
}

/**
 * Above this `max_tokens`, a call is streamed: the Anthropic SDK estimates a generation at 128,000
 * tokens an hour and asks for streaming past 10 minutes ("Streaming is required for operations that
 * may take longer than 10 minutes", its `calculateNonstreamingTimeout`).
 */
export const STREAM_ABOVE_TOKENS = maxTokensWithin(10 * 60_000);

/**
 * A `ModelClient` on the Anthropic Messages API through the official SDK. The ledger's message shape
 * is Anthropic's, so the translation is mostly about prompt caching: three `cache_control`
 * breakpoints (system prompt, last tool, last block of the conversation) make every turn read the
 * previous turn's prefix from the cache and write its own. Per-turn content (e.g. a budget hint)
 * must therefore go into the latest user turn, never into the system prompt.
 */
export class AnthropicModelClient implements ModelClient {
  readonly #client: MessagesClient;
  readonly #timeoutMs: number;

  constructor(options: AnthropicClientOptions) {
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
    this.#client = new MessagesClient({
      apiKey: options.apiKey,
      // Pass the URL explicitly: the SDK would otherwise read ANTHROPIC_BASE_URL itself, unchecked.
      baseURL: options.baseUrl ?? 'https://api.anthropic.com',
      // The state machine retries, once and visibly; an SDK retry would hide attempts from it.
      maxRetries: 0,
      timeout: this.#timeoutMs,
    });
  }

  async createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse> {
    const params = toAnthropicParams(request);
    let message: AnthropicMessage;
    const options = signal === undefined ? {} : { signal };
    try {
      // The SDK refuses a non-streaming request it expects to pass 10 minutes: a long one is
      // streamed, and its events assembled into the same message.
      message = params.max_tokens > STREAM_ABOVE_TOKENS ? await this.#client.messages.stream(params, options).finalMessage() : await this.#client.messages.create(params, options);
    } catch (error) {
      throw classifyAnthropicError(error, Date.now(), { endpoint: this.#client.baseURL, timeoutMs: this.#timeoutMs });
    }
    return fromAnthropicMessage(message);
  }
}

/** The SDK's message back in the ledger's shape, validated: model output is outside input. */
export function fromAnthropicMessage(message: AnthropicMessage): MessageResponse {
  const stop = stopReason(message.stop_reason);
  const blocks = message.content.map((block) => {
    if (block.type === 'text') return { type: 'text', text: block.text };
    if (block.type === 'tool_use') return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
    // Thinking and server-tool blocks only come when requested, and savepoint requests neither.
    throw new InvalidInputError(`invalid anthropic response: unexpected content block of type ${block.type}`);
  });
  // A cut answer's last tool_use may hold half its input: none of its calls is made (records/messages.ts).
  const content = stop === 'max_tokens' ? withoutCutCalls(blocks) : blocks;
  const usage = message.usage;
  return parseOrThrow(
    MessageResponse(),
    {
      id: message.id,
      type: 'message',
      role: 'assistant',
      model: message.model,
      content,
      stop_reason: stop,
      usage: {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
        cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
      },
    },
    'anthropic response',
  );
}

function stopReason(reason: AnthropicMessage['stop_reason']): MessageResponse['stop_reason'] {
  switch (reason) {
    case 'end_turn':
    case 'tool_use':
    case 'max_tokens':
    case 'stop_sequence':
      return reason;
    case 'model_context_window_exceeded':
      // The answer was cut where the window ended: to the loop this is a truncated turn.
      return 'max_tokens';
    case 'refusal':
      throw new TerminalError('anthropic model refused to answer (stop_reason refusal) — the conversation triggered the model’s safety policy; review the prompt and the tool results it was given');
    default:
      throw new InvalidInputError(`invalid anthropic response: unsupported stop_reason ${String(reason)}`);
  }
}

/**
 * The SDK's client with the Messages API only: the full `Anthropic` client holds every resource
 * (beta, admin, tool runners), about 400 KB of a CallModel bundle that no step calls.
 */
class MessagesClient extends BaseAnthropic {
  readonly messages = new Messages(this);
}
