import type { MessageRequest, MessageResponse } from '../../lambdas/records/messages.js';

/**
 * What the wire servers answer with. A server checks and parses its provider's request, hands it
 * to the policy in the ledger's own shape (`MessageRequest`), and translates the policy's reply
 * into the provider's success shape. The policy decides; the server only speaks the wire.
 */
export interface PolicyReply {
  /** The answer's blocks: text and tool calls, in the ledger's (Anthropic's) shape. */
  content: MessageResponse['content'];
  /** Why the answer ends: `end_turn`, `tool_use` or `max_tokens`. */
  stop_reason: MessageResponse['stop_reason'];
}

/** Decides a wire server's answer to a request it accepted, given in the ledger's shape whatever the provider. */
export type Policy = (request: MessageRequest) => PolicyReply;

/**
 * Faults a test can inject for the next N requests, each answered in the provider's documented
 * error shape before the request is looked at (as a provider's front door would):
 * - `rate_limit`: 429 with `retry-after` when `retryAfterSeconds` is given;
 * - `overloaded`: Anthropic 529 `overloaded_error`, Bedrock `ServiceUnavailableException` (or
 *   `ThrottlingException` via `rate_limit`), OpenAI 503;
 * - `server_error`: 500;
 * - `spend_cap`: Anthropic "credit balance is too low", OpenAI 429 `insufficient_quota`, Bedrock
 *   `AccessDeniedException` for an invalid payment instrument;
 * - `auth`: the provider's answer to a bad key or signature.
 */
export type FaultKind = 'rate_limit' | 'overloaded' | 'server_error' | 'spend_cap' | 'auth';

/** A fault a wire server answers with instead of looking at the request (`WireServer.failNext`). */
export interface Fault {
  /** Which error the provider answers. */
  readonly kind: FaultKind;
  /** The `retry-after` header of a `rate_limit` or `overloaded` answer, in seconds. @default none */
  readonly retryAfterSeconds?: number;
}

/** Every {@link FaultKind}, for tests that go through them all. */
export const FAULT_KINDS: readonly FaultKind[] = ['rate_limit', 'overloaded', 'server_error', 'spend_cap', 'auth'];

/** Output tokens as the servers bill them: about four characters of JSON per token. */
export function outputTokens(content: PolicyReply['content']): number {
  return Math.ceil(JSON.stringify(content).length / 4);
}

/**
 * The reply cut to `maxTokens`, as a model out of budget mid-answer: text is truncated, no tool
 * call is complete enough to return, and the stop reason says so.
 */
export function fitToMaxTokens(reply: PolicyReply, maxTokens: number): PolicyReply & { outputTokens: number } {
  const tokens = outputTokens(reply.content);
  if (tokens <= maxTokens) return { ...reply, outputTokens: tokens };
  const content = reply.content.flatMap((b) => (b.type === 'text' ? [{ ...b, text: b.text.slice(0, maxTokens * 4) }] : []));
  return { content, stop_reason: 'max_tokens', outputTokens: maxTokens };
}
