/**
 * Whether a CallModel Task's output in an execution's history (Lambda's, `{ Payload }`) is a model
 * turn it made, not only a decision. CallModel decides before it calls (lambdas/steps/call-model.ts
 * CallModelResult): a decision that called no model (a stop before the call, a compaction, a
 * handoff) answers without a `turn`; the run's end decided after a final answer comes with its
 * turn. An output that cannot be read counts as a turn.
 */
export function madeTurn(output: string | undefined): boolean {
  try {
    return (JSON.parse(output ?? '{}') as { Payload?: { turn?: unknown } }).Payload?.turn !== undefined;
  } catch {
    return true;
  }
}
