import type { ModelPolicy } from '../../lambdas/define.js';

/** A tool call a scripted model asks for. */
export interface ScriptedCall {
  readonly id: string;
  readonly name: string;
  readonly input: Readonly<Record<string, unknown>>;
}

/** A tool result as the model read it. */
export interface ReadResult {
  id: string;
  content: string;
}

/**
 * A dev model of two turns: the first asks for `calls` all at once (one turn, the calls side by
 * side), the second hands the tool results it was given — in the order the request carries them —
 * to `read` and ends the run.
 */
export function oneTurnPolicy(calls: readonly ScriptedCall[], read: (results: ReadResult[]) => void): ModelPolicy {
  return (request) => {
    const turns = request.messages.filter((message) => message.role === 'assistant').length;
    if (turns === 0) return { content: calls.map((call) => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: { ...call.input } })), stop_reason: 'tool_use' };
    const last = request.messages.at(-1)!;
    read(Array.isArray(last.content) ? last.content.flatMap((block) => (block.type === 'tool_result' ? [{ id: block.tool_use_id, content: String(block.content) }] : [])) : []);
    return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
  };
}
