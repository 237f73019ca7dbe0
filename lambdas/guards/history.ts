import { createHash } from 'node:crypto';
import * as z from 'zod';
import type { RunRecord } from '../records/ledger-records.js';
import { HISTORY_EVENT_LIMIT } from '../shared/limits.js';

/**
 * Continue-as-new: a Standard execution holds at most 25,000 history events (a hard quota). A long
 * run hands itself to a new execution before it gets there.
 *
 * How the events are counted: exactly as Step Functions counts them — the id of an execution's
 * newest history event is the number of events it has (ids run 1, 2, 3, … with no gaps), and
 * `GetExecutionHistory { reverseOrder: true, maxResults: 1 }` returns it in one small call. The
 * local engine numbers its events the same way and serves the same API (local/engine/local-engine.ts
 * `record`), so the local count is the service's count, retries and Choice/Pass states included.
 * An estimate from the steps' own counts would drift with every retry and every approval wait;
 * this does not.
 *
 * Between two BudgetChecks one agent iteration runs (a model turn, its tool calls, their approvals
 * and retries): a few hundred events at worst, so the default threshold leaves ~5,000 spare.
 */
export const DEFAULT_HANDOFF_THRESHOLD = 20_000;

/** Counts an execution's history events (the id of its newest event). */
export interface ExecutionHistory {
  eventCount(executionArn: string): Promise<number>;
}

/**
 * When the history is counted: not on every BudgetCheck. `GetExecutionHistory` is a control-plane
 * call on a per-account bucket (refill 20/s): one per agent iteration caps an account at a few
 * hundred concurrent runs. So each execution carries in its own state (the BudgetCheck payload,
 * `$.budget.result.history`, seeded from StartRun's result) what it last knew of its history —
 * `events` counted when the run had `steps` steps, `checks` BudgetChecks ago (this one included) — and counts again
 * only when the most events it could have reached since then reaches the threshold. The state is
 * the execution's own, so a successor starts from its own start, and a retried BudgetCheck (same
 * input) decides the same.
 *
 * The bounds are worst cases read from the definition's Retry fields (infra/agent-state-machine.ts),
 * every attempt adding 3 events (scheduled, started, failed) to a Task's 2 (entered, exited):
 * - a step (one CallModel or CallTool, and an approval call's first CallTool and its wait) with every retrier exhausted —
 *   Lambda's 8, transient 6, throttled 6 or lease 8, circuit open 40: ≈ 62 retries, ≤ 250 events;
 * - a BudgetCheck (its own 14 retries, its Choice, a budget-extension wait or a compaction before
 *   the next): ≤ 300 events;
 * - an execution's start (ExecutionStarted, StartRun with its retries, the Choice, the seed): ≤ 100.
 * A run that succeeds on first attempts makes ~10 events a step, so the count is read once every
 * ~70 steps (once in a 100-step run) instead of every iteration.
 */
export const MAX_EVENTS_PER_STEP = 250;
export const MAX_EVENTS_PER_CHECK = 300;
export const MAX_EVENTS_AT_START = 100;

export const HistoryEstimate = z.object({
  /** Events counted (or, at the start, the most there can be). */
  events: z.number().int().min(0),
  /** The run's steps when they were. */
  steps: z.number().int().min(0),
  /** BudgetChecks since. */
  checks: z.number().int().min(0),
});
export type HistoryEstimate = z.infer<typeof HistoryEstimate>;

/** What a new execution of a run knows of its history (StartRun's result): nothing counted yet. */
export function historyAtStart(steps: number): HistoryEstimate {
  return { events: MAX_EVENTS_AT_START, steps, checks: 0 };
}

/** The most events the execution can have now, `steps` being the run's steps. */
export function mostEvents(estimate: HistoryEstimate, steps: number): number {
  return estimate.events + Math.max(0, steps - estimate.steps) * MAX_EVENTS_PER_STEP + estimate.checks * MAX_EVENTS_PER_CHECK;
}

/**
 * Counts the history only when it could have reached `threshold`; returns the count (when made)
 * and what the next BudgetCheck starts from. Without an estimate (a definition that carries none)
 * it counts every time, as before.
 */
export async function countIfDue(
  history: ExecutionHistory,
  executionArn: string,
  estimate: HistoryEstimate | undefined,
  steps: number,
  threshold: number,
): Promise<{ events?: number; estimate: HistoryEstimate; throttled?: true }> {
  if (estimate && mostEvents(estimate, steps) < threshold) return { estimate };
  try {
    const events = await history.eventCount(executionArn);
    return { events, estimate: { events, steps, checks: 0 } };
  } catch (error) {
    // The count was due and the account's GetExecutionHistory bucket (refill 20/s) is empty: a
    // fleet of long runs reaches its counts together. Not a failure of the run: the caller hands
    // it over now (continue-as-new is safe at any BudgetCheck, and spends a StartExecution token,
    // a bucket 15× faster), as it would at the threshold. Without an estimate, there is none to hand over on.
    if (estimate && error instanceof Error && error.name === 'ThrottlingException') return { estimate, throttled: true };
    throw error;
  }
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
