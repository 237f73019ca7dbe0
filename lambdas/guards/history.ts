import { createHash } from 'node:crypto';
import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import type { RunRecord } from '../records/ledger-records.js';
import { HISTORY_EVENT_LIMIT } from '../shared/limits.js';
import { ErrorNames, TransientError } from '../shared/errors.js';
import type { GuardLedger } from '../ledger/ledger.js';
import { UNKEYED_COUNT } from '../ledger/ledger.js';
import type { Clock } from '../shared/ports.js';

/**
 * Continue-as-new: a Standard execution holds at most 25,000 history events (a hard quota). A long
 * run hands itself to a new execution before it gets there.
 *
 * How the events are counted: never by asking Step Functions (`GetExecutionHistory` is a
 * control-plane call on a per-account bucket refilling 20/s: a fleet of long runs emptied it, issue
 * 34). Each decision — CallModel's, before every model call, the execution's first included —
 * carries in its own result (`$.budget.result.history`, seeded from StartRun's) a conservative bound
 * of the events its execution has made up to that decision's Task, and adds to it every event the
 * definition (infra/agent-state-machine.ts) can make until the next decision's Task:
 *
 * - the path the last decision sent the run on (`next`): its Choice (ToolCallsOrStop), then a
 *   model turn CallModel made (the ToolCalls Map and one CallTool per tool call the recorded turn
 *   asked for), resumed tool calls (ResumeToolCalls and the Map), a compaction or a
 *   budget-extension wait; and the next decision's Task;
 * - every Task entry at its worst: each retry its Retry fields allow (MaxAttempts) of the errors no
 *   step records — Lambda's own faults, States.Timeout, Agent.Transient — each attempt 3 events
 *   (TaskScheduled, TaskStarted, TaskFailed; 4 on a task-token wait, with TaskSubmitted) over the
 *   Task's 2 (entered, exited). `$$.State.RetryCount` would say how many retries a Task made
 *   (AWS documents it in the context object), but aws-local-stepfunctions does not set `$$.State`,
 *   and the twin must run the definition as AWS does: so the bound takes MaxAttempts;
 * - the rest from what the steps record (`historyEvents` on the run record, `meteredStep`): every
 *   retried error a step raises itself (a throttled model, an open breaker, a held lease) and every
 *   loop its Catch starts (a retry-after or settle wait, an approval or child-run wait), written before the
 *   step throws. Those would otherwise be unbounded: a loop has no MaxAttempts.
 *
 * The price of MaxAttempts: the bound is 4–8× the real count (a Lambda Task that made 5 events is
 * bounded at 53), so a long run hands off every ~2,500 real events instead of ~20,000, while a
 * 100-step run never does. `test/longruns/history-bound.test.ts` runs the synthesized definition
 * with injected failures and checks the bound against the twin's own count at every decision.
 */
export const DEFAULT_HANDOFF_THRESHOLD = 20_000;

/**
 * The definition's retriers (infra/agent-state-machine.ts: LAMBDA_RETRY, TIMEOUT_RETRY,
 * RETRY.transient), by what no step records: their MaxAttempts. test/infra/history-bound.test.ts
 * reads them back from the synthesized ASL, so a changed Retry field fails there, not silently here.
 */
export const UNRECORDED_RETRIES = { lambda: 8, timeout: 2, transient: 6 } as const;
/** The errors a step records (`meteredStep`) before it throws them; every other retried error is in UNRECORDED_RETRIES. */
export const RECORDED_ERRORS = [ErrorNames.ModelThrottled, ErrorNames.CircuitOpen, ErrorNames.LeaseHeld, ErrorNames.ModelRetryAfter, ErrorNames.SettleWait, ErrorNames.ApprovalNeeded, ErrorNames.ChildRunPending] as const;

/** A Lambda Task entered once, every unrecorded retry made: 2 + 3 × (1 + 16) = 53. */
export const LAMBDA_TASK_EVENTS = 2 + 3 * (1 + UNRECORDED_RETRIES.lambda + UNRECORDED_RETRIES.timeout + UNRECORDED_RETRIES.transient);
/** A task-token wait (RequestApproval, RequestBudgetExtension: no States.Timeout retrier), 4 events an attempt: 62. */
export const TOKEN_TASK_EVENTS = 2 + 4 * (1 + UNRECORDED_RETRIES.lambda + UNRECORDED_RETRIES.transient);
/** A Pass, Choice or Wait state: entered, exited. */
const STATE_EVENTS = 2;
/** A Map state: entered, started, succeeded, exited; each iteration: started, succeeded. */
const MAP_EVENTS = 4;
const ITERATION_EVENTS = 2;
/** Before the first decision (CallModel's): ExecutionStarted, StartRun, StartOrResume. */
export const EVENTS_AT_START = 1 + LAMBDA_TASK_EVENTS + STATE_EVENTS;

/** What a recorded error adds: the failed attempt of a retry, or the loop a Catch starts and the Task it enters again. */
export function recordedEvents(errorName: string): number {
  switch (errorName) {
    case ErrorNames.ModelRetryAfter: // ReadRetryAfter, RetryAfterSeconds, WaitRetryAfter, CallModel again
    case ErrorNames.SettleWait: // ReadSettleWait, SettleSeconds, WaitSettle, CallTool again
      return 3 * STATE_EVENTS + LAMBDA_TASK_EVENTS;
    case ErrorNames.ApprovalNeeded: // RequestApproval, CallTool again
    case ErrorNames.ChildRunPending: // AwaitChildRun (a token wait on CallTool's function), CallTool again
      return TOKEN_TASK_EVENTS + LAMBDA_TASK_EVENTS;
    default:
      return 3;
  }
}

/** Where a decision sent the run: what the next one adds. */
export const HistoryNext = schemaOnFirstUse(() => z.union([
  /** CallModel called the model for turn `model` in the deciding invocation: its tool calls, then CallModel again. */
  z.object({ model: z.number().int().min(1) }),
  /**
   * BudgetCheck let a model turn through: CallModel, which decides again before it calls. Only
   * definitions before 0.8.0 have a BudgetCheck state (an execution still running on one of their
   * versions, a successor it hands off to); its path's Choice and CallModel Task are as `model`'s
   * opening, so the same arithmetic bounds it.
   */
  z.object({ callModel: z.literal(true) }),
  z.object({ tools: z.number().int().min(0) }),
  z.object({ compact: z.literal(true) }),
  z.object({ extension: z.literal(true) }),
]));
export type HistoryNext = z.infer<ReturnType<typeof HistoryNext>>;

export const HistoryBound = schemaOnFirstUse(() => z.object({
  /** The most events the execution has made, up to the decision that wrote this (its Task included; at the start, up to the first one, excluded). */
  events: z.number().int().min(0),
  /** The run's `historyEvents` then: what the steps recorded since is added to the next bound. */
  meter: z.number().int().min(0),
  /** Where the run went from there (absent: the execution's start). */
  next: HistoryNext().optional(),
}));
export type HistoryBound = z.infer<ReturnType<typeof HistoryBound>>;

/** What a new execution of a run knows of its history (StartRun's result): its start, at the run's meter. */
export function historyAtStart(meter: number): HistoryBound {
  return { events: EVENTS_AT_START, meter };
}

/** The events a path between two decisions can make, the second decision's Task included. `toolCallsOf`: the tool calls turn `t` recorded. */
export function pathEvents(next: HistoryNext | undefined, toolCallsOf: (turn: number) => number): number {
  const choice = next ? STATE_EVENTS : 0; // ToolCallsOrStop (ContinueOrStop before 0.8.0)
  const map = (calls: number) => MAP_EVENTS + calls * (ITERATION_EVENTS + LAMBDA_TASK_EVENTS);
  let path = 0;
  if (next && 'model' in next) path = map(toolCallsOf(next.model)); // the model call was the deciding Task's own
  else if (next && 'tools' in next) path = STATE_EVENTS + map(next.tools); // ResumeToolCalls
  else if (next && 'compact' in next) path = LAMBDA_TASK_EVENTS;
  else if (next && 'extension' in next) path = TOKEN_TASK_EVENTS;
  return choice + path + LAMBDA_TASK_EVENTS;
}

/** The bound at this decision, from the last one's and what the steps recorded since (`meter`: the run's `historyEvents`). */
export function boundNow(last: HistoryBound, meter: number, toolCallsOf: (turn: number) => number): { events: number; meter: number } {
  return { events: last.events + pathEvents(last.next, toolCallsOf) + Math.max(0, meter - last.meter), meter };
}

/**
 * Records each error of RECORDED_ERRORS a step throws, with what it adds to its execution's
 * history (`historyEvents`), before throwing it. If the record cannot be written the step fails
 * with Agent.Transient instead, whose retries the bound already counts. An extra count is only a
 * handoff a little early, so the count is unkeyed (ledger/ledger.ts UNKEYED_COUNT): each throw
 * is counted at least once, and none takes a step's place in the run's window of counted keys.
 */
export function meteredStep<Event extends unknown[], Result>(
  step: (event: unknown, ...rest: Event) => Promise<Result>,
  deps: { ledger: Pick<GuardLedger, 'countStep'>; clock: Clock },
): (event: unknown, ...rest: Event) => Promise<Result> {
  return async (event, ...rest) => {
    try {
      return await step(event, ...rest);
    } catch (error) {
      const name = error instanceof Error ? error.name : '';
      const runId = (event as { runId?: unknown } | null)?.runId;
      if (!(RECORDED_ERRORS as readonly string[]).includes(name) || typeof runId !== 'string') throw error;
      const { turn, call } = event as { turn?: unknown; call?: unknown };
      // Unkeyed: counted each time, never taking a step's place in the run's window of counted keys.
      const key = `${UNKEYED_COUNT}history:${name}:${String(turn)}:${String(call)}:${deps.clock.now().getTime()}`;
      try {
        await deps.ledger.countStep(runId, key, { historyEvents: recordedEvents(name) });
      } catch (cause) {
        throw new TransientError(`recording ${name} for the history bound failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
      }
      throw error;
    }
  };
}

/** Whether the execution that has `events` must hand the run over now. */
export function mustHandOff(events: number, threshold: number = DEFAULT_HANDOFF_THRESHOLD): boolean {
  return events >= threshold;
}

/** The handoff threshold of a run (runs recorded before the setting existed get the default). */
export function handoffThreshold(run: Pick<RunRecord, 'config'>): number {
  const configured = (run.config as { historyEventsBeforeHandoff?: number }).historyEventsBeforeHandoff;
  return Math.min(configured ?? DEFAULT_HANDOFF_THRESHOLD, HISTORY_EVENT_LIMIT - 1_000);
}

/**
 * The n-th execution of a run's chain, n ≥ 1: `<runId>-c<n>` (within the 80 characters a name may
 * have). Deterministic, so a retried handoff starts the same successor, and StartExecution's
 * idempotency by name makes the start happen once.
 */
export function successorName(runId: string, n: number): string {
  const suffix = `-c${n}`;
  if (runId.length + suffix.length <= 80) return `${runId}${suffix}`;
  const hash = createHash('sha256').update(runId).digest('hex').slice(0, 8);
  return `${runId.slice(0, 80 - suffix.length - hash.length - 1)}-${hash}${suffix}`;
}

/** The ARN of a sibling execution (same state machine) named `name`. */
export function siblingArn(executionArn: string, name: string): string {
  return `${executionArn.slice(0, executionArn.lastIndexOf(':'))}:${name}`;
}

/**
 * The successor `executionArn` handed the run to, if it did: the execution recorded right after it
 * in the run's chain, under the successor name of that position.
 */
export function handedOffTo(run: Pick<RunRecord, 'runId' | 'executions'>, executionArn: string): string | undefined {
  const index = run.executions.lastIndexOf(executionArn);
  if (index < 0) return undefined;
  const next = run.executions[index + 1];
  return next !== undefined && next === siblingArn(executionArn, successorName(run.runId, index + 1)) ? next : undefined;
}

/** The executions of a run in order, each marked by how it got the run. */
export function executionChain(run: Pick<RunRecord, 'runId' | 'executions' | 'migrations'>): { executionArn: string; name: string; via: 'start' | 'handoff' | 'resume' | 'migrate' }[] {
  const migrated = new Set((run.migrations ?? []).map((migration) => migration.to.executionArn));
  return run.executions.map((executionArn, index) => ({
    executionArn,
    name: executionArn.split(':').pop()!,
    via: index === 0 ? 'start' : handedOffTo(run, run.executions[index - 1]!) === executionArn ? 'handoff' : migrated.has(executionArn) ? 'migrate' : 'resume',
  }));
}
