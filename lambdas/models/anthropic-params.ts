import type {
  CacheControlEphemeral,
  ContentBlockParam,
  MessageCreateParamsNonStreaming,
  MessageParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages/messages';
import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import type { ContentBlock, Message, MessageRequest } from '../records/messages.js';
import { parseOrThrow } from '../shared/validation.js';

/*
 * The ledger's request in the Anthropic Messages wire shape, with its prompt-cache breakpoints.
 * Apart from the adapter (anthropic.ts) so that the simulator's client can send the same bytes
 * without loading the SDK: the SDK is imported for its types only here.
 */

const EPHEMERAL: CacheControlEphemeral = { type: 'ephemeral' };

/** Anthropic requires an object schema at the root of every tool's input schema. */
const ObjectSchema = schemaOnFirstUse(() => z.looseObject({ type: z.literal('object') }));

/** The request with its cache breakpoints. Pure: exported for tests. */
export function toAnthropicParams(request: MessageRequest): MessageCreateParamsNonStreaming {
  const tools = request.tools?.map((tool, i, all): Tool => ({
    name: tool.name,
    description: tool.description,
    input_schema: checkedSchema(tool),
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

/**
 * A tool's input schema, checked (and copied, as the check returns it) once per schema object when
 * that object is frozen: the agent's tools hand the same frozen schema every turn (define/tool.ts
 * `toolSpecs`), and a frozen object's root `type` cannot change after its check. A schema not
 * frozen (a caller's own request) is checked on every request.
 */
function checkedSchema(tool: { name: string; input_schema: Record<string, unknown> }): Tool['input_schema'] {
  const schema = tool.input_schema;
  const frozen = Object.isFrozen(schema);
  let checked = frozen ? checkedSchemas.get(schema) : undefined;
  if (checked === undefined) {
    checked = parseOrThrow(ObjectSchema(), schema, `input schema of tool ${tool.name}`);
    if (frozen) checkedSchemas.set(schema, Object.freeze(checked));
  }
  return checked;
}
const checkedSchemas = new WeakMap<object, Tool['input_schema']>();

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

