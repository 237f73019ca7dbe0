import type {
  CacheControlEphemeral,
  ContentBlockParam,
  MessageCreateParamsNonStreaming,
  MessageParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages/messages';
import * as z from 'zod';
import type { ContentBlock, Message, MessageRequest } from '../records/messages.js';
import { parseOrThrow } from '../shared/validation.js';

/*
 * The ledger's request in the Anthropic Messages wire shape, with its prompt-cache breakpoints.
 * Apart from the adapter (anthropic.ts) so that the simulator's client can send the same bytes
 * without loading the SDK: the SDK is imported for its types only here.
 */

const EPHEMERAL: CacheControlEphemeral = { type: 'ephemeral' };

/** Anthropic requires an object schema at the root of every tool's input schema. */
const ObjectSchema = z.looseObject({ type: z.literal('object') });

/** The request with its cache breakpoints. Pure: exported for tests. */
export function toAnthropicParams(request: MessageRequest): MessageCreateParamsNonStreaming {
  const tools = request.tools?.map((tool, i, all): Tool => ({
    name: tool.name,
    description: tool.description,
    input_schema: parseOrThrow(ObjectSchema, tool.input_schema, `input schema of tool ${tool.name}`),
    ...(i === all.length - 1 ? { cache_control: EPHEMERAL } : {}),
  }));
  return {
    model: request.model,
    max_tokens: request.max_tokens,
    ...(request.system === undefined ? {} : { system: [{ type: 'text', text: request.system, cache_control: EPHEMERAL }] }),
    ...(tools === undefined || tools.length === 0 ? {} : { tools }),
    messages: request.messages.map((message, i, all) => toMessageParam(message, i === all.length - 1)),
  };
}

/** One message; the last one of the conversation carries the breakpoint on its last block. */
function toMessageParam(message: Message, last: boolean): MessageParam {
  // Always blocks, never the string shorthand: the last message needs a block for its breakpoint,
  // and the same message must render the same way on the next turn for the prefix to match.
  const content: ContentBlock[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
  const lastIndex = content.length - 1;
  return { role: message.role, content: content.map((block, i) => toBlockParam(block, last && i === lastIndex)) };
}

function toBlockParam(block: ContentBlock, breakpoint: boolean): ContentBlockParam {
  const cache = breakpoint ? { cache_control: EPHEMERAL } : {};
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text, ...cache };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: block.input, ...cache };
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: block.tool_use_id,
        content: block.content,
        ...(block.is_error === undefined ? {} : { is_error: block.is_error }),
        ...cache,
      };
  }
}

