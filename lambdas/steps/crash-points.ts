/**
 * The boundaries of a step where the process running it can die. Steps announce each boundary to
 * a `CrashPoints` port: on AWS it does nothing; the local engine can be told to end the process
 * there (a real SIGKILL, see local/crash.ts), which is how every boundary is proven recoverable.
 *
 *   CallTool          before-claim ─ claim ─ after-claim ─ provider call ─ after-commit ─ record ─ after-record ─ return
 *   CallModel         model call ─ model-call ─ record ─ model-recorded ─ return
 *   RequestApproval   store the pending approval ─ awaiting-approval ─ (the execution waits for a person)
 */
export const CrashPoint = {
  /** Nothing of this tool call is in the ledger yet. */
  BeforeClaim: 'before-claim',
  /** The call is claimed (in flight, leased); the outside system has not seen it. */
  AfterClaim: 'after-claim',
  /** The outside system answered — a refund is paid — but the ledger does not know: the unknown-outcome window. */
  AfterCommit: 'after-commit',
  /** The tool's outcome is recorded; the state machine has not heard back. */
  AfterRecord: 'after-record',
  /** In the middle of a model call: the provider answered (and billed), the answer is not recorded. */
  ModelCall: 'model-call',
  /** The model's turn is recorded; the state machine has not heard back. */
  ModelRecorded: 'model-recorded',
  /** A pending approval is stored and the run waits for a person. */
  AwaitingApproval: 'awaiting-approval',
} as const;

export type CrashPoint = (typeof CrashPoint)[keyof typeof CrashPoint];
export const CRASH_POINTS = Object.values(CrashPoint);

export interface CrashPoints {
  /** The step reached `point`; `tools` names the tool calls it concerns (for a model turn: the ones it asks for). */
  reached(point: CrashPoint, tools: readonly string[]): void;
}

/** What runs on AWS: a boundary is just a boundary. */
export const noCrashes: CrashPoints = { reached: () => undefined };
