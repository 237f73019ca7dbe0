import type { MessageRequest } from '../../lambdas/records/messages.js';
import { toolSchemaProblem, type KnownValid } from './json-schema.js';

/**
 * The conversation rules the providers enforce, checked on the ledger's shape once a server has
 * translated its wire request into it. Returns the first problem, worded like a provider's 400, or
 * undefined when the conversation is well formed. `known`: tool schemas found valid before (toolSchemaProblem).
 */
export function conversationProblem(request: MessageRequest, known?: KnownValid): string | undefined {
  const tools = new Set<string>();
  for (const [i, tool] of (request.tools ?? []).entries()) {
    if (tools.has(tool.name)) return `tools.${i}: tool names must be unique (${tool.name})`;
    tools.add(tool.name);
    const problem = toolSchemaProblem(tool.input_schema, known);
    if (problem !== undefined) return `tools.${i}.input_schema ${problem}`;
  }

  const seenToolUseIds = new Set<string>();
  let pending: Set<string> = new Set();
  for (const [i, message] of request.messages.entries()) {
    const at = `messages.${i}`;
    const expected = i % 2 === 0 ? 'user' : 'assistant';
    if (message.role !== expected) return `${at}: roles must alternate between "user" and "assistant", starting with "user"`;
    const blocks = typeof message.content === 'string' ? [{ type: 'text' as const, text: message.content }] : message.content;
    if (blocks.length === 0) return `${at}.content: must not be empty`;

    if (message.role === 'user') {
      const answered = new Set<string>();
      let textSeen = false;
      for (const [j, block] of blocks.entries()) {
        if (block.type === 'tool_use') return `${at}.content.${j}: tool_use blocks may only appear in assistant messages`;
        if (block.type === 'text') {
          textSeen = true;
          continue;
        }
        if (textSeen) return `${at}.content.${j}: tool_result blocks must come before any text in a user message`;
        if (!pending.has(block.tool_use_id)) {
          return `${at}.content.${j}: unexpected tool_use_id ${block.tool_use_id} in tool_result: each tool_result must answer a tool_use of the previous assistant message`;
        }
        if (answered.has(block.tool_use_id)) return `${at}.content.${j}: duplicate tool_result for ${block.tool_use_id}`;
        answered.add(block.tool_use_id);
      }
      const unanswered = [...pending].filter((id) => !answered.has(id));
      if (unanswered.length > 0) {
        return `${at}: tool_use ids were found without tool_result blocks immediately after: ${unanswered.join(', ')}`;
      }
      pending = new Set();
      continue;
    }

    for (const [j, block] of blocks.entries()) {
      if (block.type === 'tool_result') return `${at}.content.${j}: tool_result blocks may only appear in user messages`;
      if (block.type !== 'tool_use') continue;
      if (seenToolUseIds.has(block.id)) return `${at}.content.${j}: tool_use ids must be unique (${block.id})`;
      if (!tools.has(block.name)) return `${at}.content.${j}: tool_use names a tool that is not declared: ${block.name}`;
      seenToolUseIds.add(block.id);
      pending.add(block.id);
    }
  }
  // A trailing assistant turn with tool calls is a request for the model to continue without the
  // results, which the providers refuse as well.
  if (pending.size > 0) return `messages: tool_use ids were found without tool_result blocks immediately after: ${[...pending].join(', ')}`;
  return undefined;
}
