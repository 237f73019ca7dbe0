import type { ToolDefinition } from '../define.js';
import type { ToolOutcome } from '../records/ledger-records.js';
import { ErrorNames, InvalidInputError, MalformedResponseError, OutcomeUnknownError, TerminalError, TransientError } from '../shared/errors.js';
import { AttemptCut } from './attempt.js';

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
export function stepError(error: unknown): unknown {
  if (!(error instanceof Error) || isHarnessError(error)) return error;
  const sdk = error as Error & { $retryable?: unknown; $fault?: string; code?: string };
  const network = ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE'].includes(sdk.code ?? '');
  if (sdk.$retryable || sdk.$fault === 'server' || network || error.name === 'TimeoutError') {
    return new TransientError(`${error.name}: ${error.message}`, { cause: error });
  }
  return error;
}

/** A tool call's outcome as the ledger records it and the model reads it. */
export type Outcome = { outcome: ToolOutcome; result: string; latencyMs: number };

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
  | { kind: 'answer'; outcome: Outcome }
  /** Recorded as the call's result (nothing can fix it by retrying), then the run fails with `error`. */
  | { kind: 'fail'; outcome: Outcome; error: unknown }
  /**
   * Not recorded: the claim is released and `error` goes to the state machine. `unknown`: the
   * request may have reached the provider (the retry reconciles or re-sends its key, after the
   * settle time); else the attempt did nothing.
   */
  | { kind: 'release'; error: unknown; unknown: boolean }
  /** A write whose outcome is unknown and that cannot be found out: recorded as `outcome_unknown`, a person decides; never sent again. */
  | { kind: 'undecidable'; outcome: Outcome }
  /** The run's wall clock ran out mid-call: nothing more is sent; the next decision stops the run. */
  | { kind: 'cut'; reason: string };

export function failureOf(tool: Pick<ToolDefinition, 'name' | 'effect' | 'reconcile' | 'idempotencyKeys'>, error: unknown, latencyMs: number): Failure {
  const answer = (code: string, message: string): Failure => ({ kind: 'answer', outcome: { outcome: 'error', result: JSON.stringify({ error: code, message }), latencyMs } });
  if (error instanceof AttemptCut && error.cut.kind === 'wallClock') return { kind: 'cut', reason: error.message };
  // A request sent whose answer never came: for a read that ran out of time, the model is told
  // (it would time out again: retrying would fail the run without telling it); a dropped answer
  // is retried. For a write, an unknown outcome like a timeout.
  const sentUnanswered = error instanceof OutcomeUnknownError;
  if (sentUnanswered && tool.effect === 'read' && !error.timedOut) return { kind: 'release', error, unknown: false };
  if (error instanceof AttemptCut || !isHarnessError(error) || sentUnanswered) {
    const timedOut = error instanceof AttemptCut || (sentUnanswered && error.timedOut);
    const message = error instanceof AttemptCut ? error.message : `${tool.name} failed: ${error instanceof Error ? error.message : String(error)}`;
    // A read changed nothing: the model is told and may try otherwise.
    if (tool.effect === 'read') return answer(timedOut ? 'timeout' : 'tool_failed', message);
    // A write may have taken effect: its outcome is unknown. Retried through the claim, which
    // asks `reconcile` first or re-sends the same idempotency key — never sent blindly again.
    if (tool.reconcile || tool.idempotencyKeys) {
      const retry = tool.reconcile ? 'asks reconcile first, after the settle time' : 're-sends the same idempotency key';
      return { kind: 'release', error: new TransientError(`outcome unknown: ${message}; the retry ${retry}`, { cause: error }), unknown: true };
    }
    return { kind: 'undecidable', outcome: escalated(tool.name, message) };
  }
  // The provider refused the request (e.g. more than is left to refund): the model sees why.
  if (error instanceof InvalidInputError) return answer('invalid_request', error.message);
  // A read that came back garbled changed nothing: the model sees it (the loop detector stops a
  // model that keeps asking again).
  if (error instanceof MalformedResponseError && tool.effect === 'read') return answer('malformed_response', error.message);
  if (error instanceof TerminalError) return { kind: 'fail', outcome: { outcome: 'error', result: JSON.stringify({ error: 'terminal', message: error.message }), latencyMs }, error };
  return { kind: 'release', error, unknown: false };
}

/**
 * The outcome of a write escalated to a person: what the model is told (not to call it again) and
 * the ledger records; `why` says what is unknown.
 */
export function escalated(toolName: string, why: string): Outcome {
  const message = `${toolName}: the outcome is unknown (${why}); escalated to a person to check with the provider. It was not sent again: do not call ${toolName} for this again.`;
  return { outcome: 'error', result: JSON.stringify({ error: 'outcome_unknown', escalated: true, message }), latencyMs: 0 };
}

/**
 * A tool that ran and returned a value with no JSON (a BigInt, a cycle, a function): what it did
 * cannot be recorded or shown. A read changed nothing: the model is told. A write's effect took
 * place, so it is not an unknown outcome to send again (each retry would re-send it for the same
 * answer): recorded as this error, never sent again, and the run fails — a fault of the tool's
 * code that no retry mends. `error`: what serializing the value threw.
 */
export function unrecordableResult(tool: Pick<ToolDefinition, 'name' | 'effect'>, error: unknown, latencyMs: number): Failure {
  const why = error instanceof Error ? error.message : String(error);
  const message = `${tool.name} returned a value that is not JSON (${why})`;
  if (tool.effect === 'read') return { kind: 'answer', outcome: { outcome: 'error', result: JSON.stringify({ error: 'tool_failed', message }), latencyMs } };
  const recorded = `${message}: it ran and is not sent again; its result could not be recorded`;
  return { kind: 'fail', outcome: { outcome: 'error', result: JSON.stringify({ error: 'unrecordable_result', message: recorded }), latencyMs }, error: new TerminalError(recorded) };
}

/**
 * Whether an attempt's error is the tool's own fault — its code's, its library's or its
 * provider's, not one of the harness's errors (a deadline, a refusal it was told to make, a cut):
 * what the operator's log is told of, with its stack (CallToolDeps `onToolFailure`).
 */
export function isToolFault(error: unknown): boolean {
  return !(error instanceof AttemptCut) && !isHarnessError(error);
}

/** Whether `error` is one of the harness's own (errors.ts): its name says what it means. */
export function isHarnessError(error: unknown): boolean {
  return error instanceof Error && OWN_NAMES.has(error.name);
}

const OWN_NAMES = new Set<string>(Object.values(ErrorNames));


