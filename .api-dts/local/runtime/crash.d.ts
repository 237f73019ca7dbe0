import { z } from 'zod';
import type { ModelClient } from '../../lambdas/records/messages.js';
import type { ApprovalLedger, Ledger, RunLedger, ToolCallLedger, TurnLedger } from '../../lambdas/ledger/ledger.js';
/**
 * The boundaries of a step where the process running it can die. The step code knows nothing of
 * them: the decorators below wrap the ledger and the model client from outside and announce each
 * boundary as the step crosses it; the injector can end the process there (a real SIGKILL), which
 * is how every boundary is proven recoverable.
 *
 *   CallTool          before-claim ─ claim ─ after-claim ─ provider call ─ after-commit ─ record ─ after-record ─ return ─ tool-returned
 *   CallModel         model call ─ model-call ─ record ─ model-recorded ─ return
 *   RequestApproval   store the pending approval ─ awaiting-approval ─ (the execution waits for a person)
 *   Handoff           record A→successor ─ handoff-recorded ─ StartExecution(successor) ─ return
 */
export declare const CrashPoint: {
    /** Nothing of this tool call is in the ledger yet. */
    readonly BeforeClaim: 'before-claim';
    /** The call is claimed (in flight, leased); the outside system has not seen it. */
    readonly AfterClaim: 'after-claim';
    /** The outside system answered — a refund is paid — but the ledger does not know: the unknown-outcome window. */
    readonly AfterCommit: 'after-commit';
    /** The tool's outcome is recorded; the state machine has not heard back. */
    readonly AfterRecord: 'after-record';
    /**
     * CallTool returned: whatever it recorded must be durable by now (on AWS the function may be
     * frozen or gone the moment it returns, and a write it did not wait for never lands).
     */
    readonly ToolReturned: 'tool-returned';
    /** In the middle of a model call: the provider answered (and billed), the answer is not recorded. */
    readonly ModelCall: 'model-call';
    /** The model's turn is recorded; the state machine has not heard back. */
    readonly ModelRecorded: 'model-recorded';
    /** A pending approval is stored and the run waits for a person. */
    readonly AwaitingApproval: 'awaiting-approval';
};
export type CrashPoint = (typeof CrashPoint)[keyof typeof CrashPoint];
/** Every point a step announces (CRASH_POINTS plus the handoff's). */
export type AnyCrashPoint = CrashPoint | typeof HandoffRecorded;
/**
 * Continue-as-new: the run's chain names the successor; the successor has not been started. Kept
 * out of CRASH_POINTS (the refund crash matrix never reaches it); test/longruns aims at it.
 */
export declare const HandoffRecorded = "handoff-recorded";
export declare const CRASH_POINTS: ("after-claim" | "after-commit" | "after-record" | "awaiting-approval" | "before-claim" | "model-call" | "model-recorded" | "tool-returned")[];
/** The boundaries one side-effecting tool call meets, in order: the model asks for it, then it runs. */
export declare const TOOL_CALL_BOUNDARIES: readonly CrashPoint[];
export interface CrashPoints {
    /** The step reached `point`; `tools` names the tool calls it concerns (for a model turn: the ones it asks for). */
    reached(point: AnyCrashPoint, tools: readonly string[]): void;
}
/**
 * Crash injection for the local engine: the process ends with SIGKILL at a step boundary — no
 * `finally`, no flush, no graceful close, exactly what a dead Lambda or a killed host leaves
 * behind. Off unless asked for (`savepoint run --crash-at … | --crash-rate …`).
 */
/** `<point>[:<tool>][:<nth>]`, e.g. `after-commit:issue_refund` or `model-call:3`. */
export declare const CrashAt: z.ZodPipe<z.ZodString, z.ZodTransform<{
    point: CrashPoint;
    tool: string | undefined;
    nth: number;
}, string>>;
export type CrashAt = z.output<typeof CrashAt>;
export interface CrashOptions {
    /** Die the nth time this point is reached (for a tool, if given). */
    readonly at?: CrashAt;
    /** Die at any boundary with this probability. */
    readonly rate?: number;
    readonly seed?: number;
    /** A JSON line per crash is appended here before the process dies (the benchmark counts them). */
    readonly logFile?: string;
}
/** How the process dies. Tests of the injector itself pass their own. */
export type Die = (point: AnyCrashPoint, tools: readonly string[]) => never;
export declare const sigkill: Die;
export declare function crashInjector(options: CrashOptions, die?: Die): CrashPoints;
/**
 * The ledger as the steps see it, announcing the boundaries around each write that guards work.
 * Each role that has boundaries is wrapped on its own (`crashingToolCalls`, …); `crashingLedger`
 * puts the wrapped roles over a whole ledger and leaves its other methods as they are.
 */
export declare function crashingLedger(ledger: Ledger, crash: CrashPoints): Ledger;
/**
 * The tool calls:
 *
 *   claimCall:      before-claim ─ claim ─ after-claim
 *   completeCall:   after-commit (the outside call answered) ─ record ─ after-record
 *   recordCall:     after-commit (a read answered) ─ record ─ after-record
 */
export declare function crashingToolCalls(calls: ToolCallLedger, crash: CrashPoints): Pick<ToolCallLedger, 'claimCall' | 'completeCall' | 'recordCall'>;
/**
 * CallTool's function, announcing `tool-returned` as it returns, for the tool it called: a crash
 * there must find the call's record durable (a completion not awaited would be lost with it).
 */
export declare function crashingCallTool<F extends (input: unknown, signal?: AbortSignal) => Promise<unknown>>(callTool: F, crash: CrashPoints): F;
/** The model turns: recordTurn: record ─ model-recorded. */
export declare function crashingTurns(turns: TurnLedger, crash: CrashPoints): Pick<TurnLedger, 'recordTurn'>;
/** The runs: attachExecution of a handoff: record A→successor ─ handoff-recorded. */
export declare function crashingRuns(runs: RunLedger, crash: CrashPoints): Pick<RunLedger, 'attachExecution'>;
/** The approvals: upsertApproval: store the pending approval ─ awaiting-approval. */
export declare function crashingApprovals(approvals: ApprovalLedger, crash: CrashPoints): Pick<ApprovalLedger, 'upsertApproval'>;
/** The model client, announcing `model-call`: the provider answered (and billed), nothing is recorded yet. */
export declare function crashingModel(model: ModelClient, crash: CrashPoints): ModelClient;
