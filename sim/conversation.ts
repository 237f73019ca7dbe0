import * as z from 'zod';
import type { Message } from '../lambdas/records/messages.js';
import { clip } from '../lambdas/shared/text.js';

/**
 * Reading a conversation the way a scripted model policy (`AgentDefinition.dev.policy`) does: the
 * tool calls it made and what came back. A policy keeps no memory — every decision is recomputed
 * from the request — so these are pure functions of the messages.
 */
/** One tool call of a conversation, with its result when the conversation holds one. */
export interface RecordedCall {
  /** The tool call's id (`tool_use.id`). */
  id: string;
  /** The tool called. */
  name: string;
  /** The arguments the model gave. */
  input: Record<string, unknown>;
  /** Missing when the conversation holds no tool_result for the call. */
  result?: { content: string; isError: boolean };
}

/** A tool result read as `T`: its value, or what is wrong with it. */
export type ResultRead<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Every tool call of the conversation, in order, each with its result when there is one. */
export function readCalls(messages: readonly Message[]): RecordedCall[] {
  const calls: RecordedCall[] = [];
  const byId = new Map<string, RecordedCall>();
  for (const message of messages) {
    if (typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (message.role === 'assistant' && block.type === 'tool_use') {
        const call: RecordedCall = { id: block.id, name: block.name, input: block.input };
        calls.push(call);
        byId.set(block.id, call);
      } else if (message.role === 'user' && block.type === 'tool_result') {
        const call = byId.get(block.tool_use_id);
        if (call !== undefined) call.result = { content: block.content, isError: block.is_error === true };
      }
    }
  }
  return calls;
}

/** Reads a tool result as JSON of the given shape, or says what is wrong with it. */
export function readResult<S extends z.ZodType>(call: RecordedCall, schema: S): ResultRead<z.output<S>> {
  if (call.result === undefined) return { ok: false, problem: `${call.name} has no result` };
  if (call.result.isError) return { ok: false, problem: `${call.name} failed: ${describeToolError(call.result.content)}` };
  let json: unknown;
  try {
    json = JSON.parse(call.result.content);
  } catch {
    return { ok: false, problem: `${call.name} returned non-JSON: ${quote(call.result.content)}` };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue === undefined || issue.path.length === 0 ? '(root)' : issue.path.join('.');
  return { ok: false, problem: `${call.name} returned an unexpected shape (${where}: ${issue?.message ?? 'invalid'})` };
}

/** `{"error":"approval_rejected","reason":"…"}` → `approval_rejected: …`; anything else is quoted. */
export function describeToolError(content: string): string {
  try {
    const body: unknown = JSON.parse(content);
    const parsed = z.object({ error: z.string(), reason: z.string().optional(), message: z.string().optional() }).safeParse(body);
    if (parsed.success) {
      const detail = parsed.data.reason ?? parsed.data.message;
      return detail === undefined ? parsed.data.error : `${parsed.data.error}: ${quote(detail)}`;
    }
  } catch {
    // Not JSON: quote it as it is.
  }
  return quote(content);
}

/** Text in quotes, clipped to 200 characters. */
export function quote(text: string): string {
  return JSON.stringify(clip(text, 200));
}

