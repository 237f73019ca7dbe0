import type { ToolDefinition } from '../define.js';
import type { ToolOutcome } from '../records/ledger-records.js';
/**
 * Where the harness's errors are translated, once: what a step's failure is to the state machine
 * (`stepError`), and what a failed attempt of a tool call is to the model and the ledger
 * (`failureOf`). The names themselves, and which are retried, are lambdas/shared/errors.ts's.
 */
/**
 * A step's error as the state machine sees it. AWS SDK and network faults (a throttled DynamoDB
 * write, a reset connection) are transient: renamed `Agent.Transient`, so the Retry fields handle
 * them. The harness's own errors keep their names; anything else (a bug) keeps its name and fails
 * the run instead of looping.
 */
export declare function stepError(error: unknown): unknown;
/** A tool call's outcome as the ledger records it and the model reads it. */
export type Outcome = {
    outcome: ToolOutcome;
    result: string;
    latencyMs: number;
};
/**
 * What a failed attempt of a tool call comes to: the one table from an error to what CallTool
 * does with it (it acts on the answer itself; nothing here touches the ledger).
 *
 *   the attempt threw                               a read                        a write
 *   ──────────────────────────────────────────────  ────────────────────────────  ─────────────────────────────────────────────
 *   the run's wall clock ran out (AttemptCut)        cut: skipped, unrecorded      cut: claim released, skipped
 *   the tool's timeout, a throw that is none of the  answer: timeout /             unknown outcome: with reconcile or idempotency
 *   harness's errors (a bug, a library's error), or  tool_failed (an               keys, release as Agent.Transient (the retry
 *   OutcomeUnknownError (sent, no answer: a client's  OutcomeUnknownError that       asks reconcile or re-sends the key); else
 *   deadline, a dropped answer)                      did not time out: release)    escalate: outcome_unknown, a person decides
 *   InvalidInputError (the provider refused it)      answer: invalid_request       answer: invalid_request
 *   MalformedResponseError (a TerminalError)         answer: malformed_response    fail: recorded, run fails
 *   TerminalError                                    fail: recorded, run fails     fail: recorded, run fails
 *   any other of the harness's errors (Transient…)   release                       release, nothing sent unanswered
 *
 * `release`: nothing is recorded (a write's claim is released) and the error goes to the state
 * machine, whose Retry fields decide (lambdas/shared/errors.ts names which are retried).
 */
export type Failure = 
/** The model is told: recorded as the call's result. */
{
    kind: 'answer';
    outcome: Outcome;
}
/** Recorded as the call's result (nothing can fix it by retrying), then the run fails with `error`. */
 | {
    kind: 'fail';
    outcome: Outcome;
    error: unknown;
}
/**
 * Not recorded: the claim is released and `error` goes to the state machine. `unknown`: the
 * request may have reached the provider (the retry reconciles or re-sends its key, after the
 * settle time); else the attempt did nothing.
 */
 | {
    kind: 'release';
    error: unknown;
    unknown: boolean;
}
/** A write whose outcome is unknown and that cannot be found out: recorded as `outcome_unknown`, a person decides; never sent again. */
 | {
    kind: 'undecidable';
    outcome: Outcome;
}
/** The run's wall clock ran out mid-call: nothing more is sent; BudgetCheck stops the run. */
 | {
    kind: 'cut';
    reason: string;
};
export declare function failureOf(tool: Pick<ToolDefinition, 'name' | 'effect' | 'reconcile' | 'idempotencyKeys'>, error: unknown, latencyMs: number): Failure;
/**
 * The outcome of a write escalated to a person: what the model is told (not to call it again) and
 * the ledger records; `why` says what is unknown.
 */
export declare function escalated(toolName: string, why: string): Outcome;
