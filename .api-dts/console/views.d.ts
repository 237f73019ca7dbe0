import { type Lifecycle } from '../client/index.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { ApprovalRecord, RunRecord, ToolCallRecord } from '../lambdas/records/ledger-records.js';
import { type HistorySource } from './history.js';
/**
 * What the console shows, computed from the ledger (what a run did) and the execution history
 * (how the engine drove it): never from what the model claims.
 */
export interface RunRow {
    runId: string;
    agent: string;
    status: RunRecord['status'];
    lifecycle: Lifecycle;
    day: string;
    createdAt: string;
    finishedAt?: string;
    steps: number;
    dollars: number;
    durationSeconds: number;
    pendingApprovals: number;
    /** How many executions drove the run so far (handoffs, recoveries, resumes): the status is the run's, whichever of them drives it. */
    executions: number;
    /** The execution that drives the run now (or drove it last). */
    execution: string;
    killed: boolean;
}
/** A run whose record fails verification: named, never shown as if it could be trusted (`savepoint verify <runId>`). */
export interface DamagedRun {
    runId: string;
    error: string;
}
/** The run list, and the runs left out of it because their records fail verification. */
export declare function runRows(ledger: Ledger, filter: {
    agent?: string;
    status?: string;
    day?: string;
}, now: Date): Promise<{
    runs: RunRow[];
    damaged: DamagedRun[];
}>;
/** Running totals after a step, against the run's budgets. */
export type Cumulative = {
    steps: number;
    tokens: number;
    dollars: number;
};
export type TimelineItem = {
    kind: 'turn';
    step: number;
    turn: number;
    at: string;
    model: string;
    text: string[];
    toolUses: {
        id: string;
        name: string;
        input: unknown;
    }[];
    stopReason: string;
    tokens: {
        input: number;
        output: number;
        cachedInput: number;
    };
    dollars: number;
    latencyMs: number;
    cumulative: Cumulative;
} | {
    kind: 'call';
    step: number;
    turn: number;
    call: number;
    at?: string;
    name: string;
    effect: 'read' | 'write';
    args: Record<string, unknown>;
    idempotencyKey: string;
    status: ToolCallRecord['status'];
    outcome?: ToolCallRecord['outcome'];
    result?: unknown;
    attempts: number;
    latencyMs?: number;
    approval?: Pick<ApprovalRecord, 'approvalId' | 'status' | 'summary' | 'decideBy' | 'decidedBy' | 'reason' | 'decidedAt'>;
    cumulative: Cumulative;
} | {
    kind: 'retry';
    at: string;
    execution: string;
    state: string;
    error: string;
} | {
    kind: 'guard';
    at: string;
    guard: string;
    action: string;
    reason: string;
} | {
    kind: 'execution';
    at?: string;
    execution: string;
    executionArn: string;
    status?: string;
    index: number;
    via: ExecutionLink['via'];
    reason: string;
    link?: string;
} | {
    kind: 'recovery';
    at: string;
    attempts: number;
    reason: string;
    execution: string;
} | {
    kind: 'budget-approval';
    at: string;
    approvalId: string;
    status: string;
    summary: string;
} | {
    kind: 'kill';
    at: string;
    by: string;
    reason: string;
};
export interface Timeline {
    runId: string;
    page: number;
    pages: number;
    pageSize: number;
    totalSteps: number;
    budgets: {
        steps: number;
        tokens: number;
        dollars: number;
    };
    items: TimelineItem[];
}
/**
 * One execution of a run's chain: how it got the run (its first start, a continue-as-new handoff,
 * an automatic recovery, a resume), why, and what became of it — a handed-off execution ends
 * SUCCEEDED while the run goes on in its successor.
 */
export interface ExecutionLink {
    executionArn: string;
    name: string;
    index: number;
    via: 'start' | 'handoff' | 'recovery' | 'resume' | 'migrate';
    reason: string;
    /** The execution's own status (`RUNNING`, `SUCCEEDED`, …), where the history knows it. */
    status?: string;
    /** What it is for the run: `driving`, `handed off`, `superseded` (a recovery or resume took over), or the run's end status. */
    role: 'driving' | 'handed off' | 'superseded' | RunRecord['status'];
    startedAt?: string;
    /** Where to watch it (the AWS console, on a deployed stack). */
    link?: string;
}
/** The executions that drove the run, in order. */
export declare function executionLinks(run: RunRecord, history: HistorySource, link?: (executionArn: string) => string): Promise<ExecutionLink[]>;
/** The run's turns and tool calls in order, with the events around them, one page of steps at a time. */
export declare function timeline(ledger: Ledger, history: HistorySource, run: RunRecord, options: {
    page: number;
    pageSize: number;
}, link?: (executionArn: string) => string): Promise<Timeline>;
