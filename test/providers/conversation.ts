import type { Message, MessageRequest, MessageResponse, ModelClient } from '../../lambdas/records/messages.js';
import type { Policy } from '../../sim/wire/policy.js';

/**
 * A small scripted tool-using conversation every adapter must carry round trip: the model looks an
 * order up, then refunds it (text and a tool call in one turn), then ends. The system prompt is long
 * enough (> 1024 tokens at 4 characters a token) for the prefix to be cacheable.
 */

export const SYSTEM = `You reconcile refunds. ${'Check every refund against its order and its payment before acting. '.repeat(80)}`;

export const TOOLS: NonNullable<MessageRequest['tools']> = [
  {
    name: 'lookup_order',
    description: 'Look an order up by id.',
    input_schema: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'], additionalProperties: false },
  },
  {
    name: 'issue_refund',
    description: 'Refund an order.',
    input_schema: {
      type: 'object',
      properties: { order_id: { type: 'string' }, amount_cents: { type: 'integer', minimum: 1 } },
      required: ['order_id', 'amount_cents'],
    },
  },
];

/** Decides from the conversation alone, like the simulator: the same request gets the same reply. */
export const scriptedPolicy: Policy = (request) => {
  const results = request.messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result')));
  if (results.length === 0) {
    return { content: [{ type: 'tool_use', id: 'call_lookup_1', name: 'lookup_order', input: { order_id: 'ord_1' } }], stop_reason: 'tool_use' };
  }
  if (results.length === 1) {
    return {
      content: [
        { type: 'text', text: 'The order was paid; refunding it.' },
        { type: 'tool_use', id: 'call_refund_1', name: 'issue_refund', input: { order_id: 'ord_1', amount_cents: 1250 } },
      ],
      stop_reason: 'tool_use',
    };
  }
  return { content: [{ type: 'text', text: 'Refunded ord_1: 12.50.' }], stop_reason: 'end_turn' };
};

export function firstRequest(model: string): MessageRequest {
  return { model, max_tokens: 1024, system: SYSTEM, tools: TOOLS, messages: [{ role: 'user', content: 'Reconcile order ord_1.' }] };
}

/** Tool results as the harness would record them: the lookup succeeds, the refund fails once. */
function toolResults(response: MessageResponse): Message {
  return {
    role: 'user',
    content: response.content.flatMap((block) =>
      block.type !== 'tool_use'
        ? []
        : block.name === 'lookup_order'
          ? [{ type: 'tool_result' as const, tool_use_id: block.id, content: JSON.stringify({ id: 'ord_1', paid_cents: 1250 }) }]
          : [{ type: 'tool_result' as const, tool_use_id: block.id, content: 'payments provider refused: duplicate', is_error: true }],
    ),
  };
}

/** Runs the conversation to its end (at most `maxTurns`) and returns each turn's response. */
export async function runConversation(client: ModelClient, model: string, maxTurns = 5): Promise<MessageResponse[]> {
  const request = firstRequest(model);
  const responses: MessageResponse[] = [];
  for (let turn = 0; turn < maxTurns; turn += 1) {
    const response = await client.createMessage(request);
    responses.push(response);
    if (response.stop_reason !== 'tool_use') break;
    request.messages.push({ role: 'assistant', content: response.content }, toolResults(response));
  }
  return responses;
}
