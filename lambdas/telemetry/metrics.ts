import type { ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
import { inputTokensOf } from '../records/messages.js';
import { providerAndModel, responseModelOf, toolErrorType } from './spans.js';

/**
 * A run's GenAI metrics, derived from its sealed ledger records by pure functions (as its spans
 * are, spans.ts): the measurements one completed record contributes, which export.ts records on the
 * official SDK's histograms.
 *
 * Conventions: the GenAI client metrics of semantic-conventions v1.45.0 (the version the spans
 * follow):
 *
 *   gen_ai.client.token.usage         histogram {token}  one point per model turn and token type
 *                                                        (gen_ai.token.type input / output)
 *   gen_ai.client.operation.duration  histogram s        one point per model turn (chat) and per
 *                                                        tool call (execute_tool)
 *
 * Cached tokens: the conventions count them inside the input tokens (as `gen_ai.usage.input_tokens`
 * on the span), and v1.45.0 defines no token type for them, so the `input` point is Anthropic's
 * `input_tokens` plus the cache reads and writes: the sum the ledger's counters hold. The split by
 * cache is on each `chat` span (`gen_ai.usage.cache_read.input_tokens`, `…cache_creation…`).
 *
 * Only the attempt that wrote a record measures it (tracing-ledger.ts), so the points of a run add
 * up to the ledger's figures; `savepoint trace` sends no metrics (a second send would count twice).
 */

export const TOKEN_USAGE = 'gen_ai.client.token.usage';
export const OPERATION_DURATION = 'gen_ai.client.operation.duration';

/** The bucket boundaries the conventions ask for (ExplicitBucketBoundaries). */
export const BUCKETS = {
  [TOKEN_USAGE]: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  [OPERATION_DURATION]: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
} as const;

export interface Measurement {
  readonly metric: typeof TOKEN_USAGE | typeof OPERATION_DURATION;
  readonly value: number;
  readonly attributes: Readonly<Record<string, string>>;
}

/** A model turn: its input and output tokens, and how long the call took. */
export function turnMeasurements(turn: TurnRecord): Measurement[] {
  const { provider, model } = providerAndModel(turn.model);
  const attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': provider, 'gen_ai.request.model': model, 'gen_ai.response.model': responseModelOf(turn) };
  return [
    { metric: TOKEN_USAGE, value: inputTokensOf(turn.usage), attributes: { ...attributes, 'gen_ai.token.type': 'input' } },
    { metric: TOKEN_USAGE, value: turn.usage.output_tokens, attributes: { ...attributes, 'gen_ai.token.type': 'output' } },
    { metric: OPERATION_DURATION, value: turn.latencyMs / 1000, attributes },
  ];
}

/**
 * A completed tool call: how long it took (`execute_tool`, a well-known operation name), with
 * `error.type` when the tool answered an error (the code it recorded, as on its span: spans.ts
 * `toolErrorType`). A refused call (rejected or expired approval) ran nothing and measures nothing.
 */
export function callMeasurements(call: ToolCallRecord): Measurement[] {
  if (call.status !== 'completed' || call.outcome === 'rejected' || call.outcome === 'expired' || call.latencyMs === undefined) return [];
  const attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': call.name, ...(call.outcome === 'error' && { 'error.type': toolErrorType(call) }) };
  return [{ metric: OPERATION_DURATION, value: call.latencyMs / 1000, attributes }];
}
