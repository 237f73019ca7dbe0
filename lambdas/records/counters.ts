/**
 * A run's counters: the sums its steps add, each exactly once (ledger/protocol.ts `countStep`),
 * which its budgets, its report and every sum of runs' costs read.
 */

export interface Counters {
  steps: number;
  modelTurns: number;
  toolCalls: number;
  /** Every input token the model read: plain, written to and read from the prompt cache. */
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those read from the prompt cache (billed at the cache-read price). */
  cachedInputTokens: number;
  /** Dollars × 1e6, so that atomic ADDs stay exact. */
  costMicros: number;
  /** Time spent waiting for people's decisions (not work: the wall-clock budget excludes it). */
  approvalWaitMs?: number;
  /**
   * What the model call in flight may cost at most, reserved before it was sent (tokens; dollars ×
   * 1e6) and settled to its real usage when its turn is counted: zero between calls. A call that
   * died unrecorded stays reserved until a retry settles it, so the ledger never shows less than
   * it may have cost.
   */
  reservedTokens?: number;
  reservedMicros?: number;
  /**
   * History events the steps recorded for their own retried errors and the waits their errors
   * start (lambdas/guards/history.ts `meteredStep`): what the handoff's bound adds to the
   * definition's worst case. A sum over the run's executions; each takes the difference.
   */
  historyEvents?: number;
  /**
   * Child runs (`defineAgentTool`) whose budget the run reserved and has not yet settled with what
   * they spent (tools/child-runs.ts): while one is, the run's spend is not final, and its own
   * parent does not settle it yet.
   */
  childRunsOpen?: number;
  /**
   * Of `costMicros`, the child runs' part (`defineAgentTool`, tools/child-runs.ts): each child's
   * budget while it is reserved, what it spent once settled. The run's hard budget counts it; its
   * fleet lease does not (ledger/fleet-leases.ts), since each child run leases its own spend.
   * Absent on a run that reserved no child, and not counted by 0.22.0 and earlier: a reservation
   * of theirs counts in the run's lease as it did (more counted, never less).
   */
  childCostMicros?: number;
}

export const ZERO_COUNTERS: Counters = {
  steps: 0,
  modelTurns: 0,
  toolCalls: 0,
  inputTokens: 0,
  outputTokens: 0,
  cachedInputTokens: 0,
  costMicros: 0,
};
