import * as z from 'zod';
import type { RunRecord } from '../records/ledger-records.js';
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
export declare const DEFAULT_HANDOFF_THRESHOLD = 20000;
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
 * - a step (one CallModel or CallTool, with the Choice after it) with every retrier exhausted —
 *   Lambda's 8, transient 6, throttled 6 or lease 8, circuit open 40: ≈ 62 retries, ≤ 250 events;
 * - a BudgetCheck (its own 14 retries, its Choice, a budget-extension wait or a compaction before
 *   the next): ≤ 300 events;
 * - an execution's start (ExecutionStarted, StartRun with its retries, the Choice, the seed): ≤ 100.
 * A run that succeeds on first attempts makes ~10 events a step, so the count is read once every
 * ~70 steps (once in a 100-step run) instead of every iteration.
 */
export declare const MAX_EVENTS_PER_STEP = 250;
export declare const MAX_EVENTS_PER_CHECK = 300;
export declare const MAX_EVENTS_AT_START = 100;
export declare const HistoryEstimate: z.ZodObject<{
    events: z.ZodNumber;
    steps: z.ZodNumber;
    checks: z.ZodNumber;
}, z.core.$strip>;
export type HistoryEstimate = z.infer<typeof HistoryEstimate>;
/** What a new execution of a run knows of its history (StartRun's result): nothing counted yet. */
export declare function historyAtStart(steps: number): HistoryEstimate;
/** The most events the execution can have now, `steps` being the run's steps. */
export declare function mostEvents(estimate: HistoryEstimate, steps: number): number;
/**
 * Counts the history only when it could have reached `threshold`; returns the count (when made)
 * and what the next BudgetCheck starts from. Without an estimate (a definition that carries none)
 * it counts every time, as before.
 */
export declare function countIfDue(history: ExecutionHistory, executionArn: string, estimate: HistoryEstimate | undefined, steps: number, threshold: number): Promise<{
    events?: number;
    estimate: HistoryEstimate;
    throttled?: true;
}>;
/** Whether the execution that has `events` must hand the run over now. */
export declare function mustHandOff(events: number, threshold?: number): boolean;
/** The handoff threshold of a run (runs recorded before the setting existed get the default). */
export declare function handoffThreshold(run: Pick<RunRecord, 'config'>): number;
/**
 * The n-th execution of a run's chain, n ≥ 1: `<runId>-c<n>` (within the 80 characters a name may
 * have). Deterministic, so a retried handoff starts the same successor, and StartExecution's
 * idempotency by name makes the start happen once.
 */
export declare function successorName(runId: string, n: number): string;
/** The ARN of a sibling execution (same state machine) named `name`. */
export declare function siblingArn(executionArn: string, name: string): string;
/**
 * The successor `executionArn` handed the run to, if it did: the execution recorded right after it
 * in the run's chain, under the successor name of that position.
 */
export declare function handedOffTo(run: Pick<RunRecord, 'runId' | 'executions'>, executionArn: string): string | undefined;
/** The executions of a run in order, each marked by how it got the run. */
export declare function executionChain(run: Pick<RunRecord, 'runId' | 'executions' | 'migrations'>): {
    executionArn: string;
    name: string;
    via: 'start' | 'handoff' | 'resume' | 'migrate';
}[];
