import { MessageResponse, type MessageRequest } from '../../lambdas/records/messages.js';
import { schemaOnFirstUse } from '../../lambdas/shared/on-first-use.js';

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

/**
 * Decides a wire server's answer to a request it accepted, given in the ledger's shape whatever the
 * provider. A policy that throws, or replies with something other than a {@link PolicyReply}, gets
 * the request a 500 in the provider's error shape, its message naming the policy.
 */
export type Policy = (request: MessageRequest) => PolicyReply;

/**
 * Faults a test can inject for the next N requests, each answered in the provider's documented
 * error shape before the request is looked at (as a provider's front door would):
 * - `rate_limit`: 429 with `retry-after` when `retryAfterSeconds` is given;
 * - `overloaded`: Anthropic 529 `overloaded_error`, Bedrock `ServiceUnavailableException` (or
 *   `ThrottlingException` via `rate_limit`), OpenAI 503;
 * - `server_error`: 500;
 * - `spend_cap`: Anthropic "credit balance is too low" (or another of its caps: `Fault.spendCap`), OpenAI 429 `insufficient_quota`, Bedrock
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
  /**
   * Which of Anthropic's documented spend caps a `spend_cap` answers: `credits` (400 "Your credit
   * balance is too low"), `tier` (the usage tier's monthly cap: 429 `rate_limit_error` with
   * `error.details.error_code` `enforced_spend_limit_reached` and no `retry-after`), `limit` (a spend
   * limit the organization set: 400 "You have reached your specified API usage limits"). The other
   * providers have one answer. @default 'credits'
   */
  readonly spendCap?: 'credits' | 'tier' | 'limit';
}

/** Every {@link FaultKind}, for tests that go through them all. */
export const FAULT_KINDS: readonly FaultKind[] = ['rate_limit', 'overloaded', 'server_error', 'spend_cap', 'auth'];

const Reply = schemaOnFirstUse(() => MessageResponse().pick({ content: true, stop_reason: true }));

/**
 * The policy's reply to `request`, checked: a policy that throws, or replies with something other
 * than `{ content, stop_reason }` (a block the wire cannot carry, no content, a Promise), fails the
 * request with an error that names the policy — which the server answers as a 500 in its
 * provider's shape — instead of an unexplained TypeError or an answer no provider gives.
 */
export function askPolicy(policy: Policy, request: MessageRequest): PolicyReply {
  let reply: unknown;
  try {
    reply = policy(request);
  } catch (error) {
    throw new Error(`the server's policy threw: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (typeof (reply as { then?: unknown } | null)?.then === 'function') {
    throw new Error("the server's policy returned a Promise: a policy answers synchronously with { content, stop_reason }");
  }
  const parsed = Reply().safeParse(reply);
  // The reply as the policy gave it (checked, not rewritten by the check).
  if (parsed.success) return reply as PolicyReply;
  const issue = parsed.error.issues[0];
  throw new Error(`the server's policy replied with no valid { content, stop_reason }: ${issue?.path.join('.') || '(reply)'}: ${issue?.message ?? 'invalid'}`);
}

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
