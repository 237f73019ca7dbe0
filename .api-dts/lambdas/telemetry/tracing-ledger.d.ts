import type { ApprovalLedger, GuardLedger, Ledger, RunLedger, ToolCallLedger, TurnLedger } from '../ledger/ledger.js';
import type { Clock } from '../shared/ports.js';
import type { SpanSink } from './sink.js';
import { type SpanOptions } from './spans.js';
/**
 * The live export: the ledger roles wrapped from outside (as the crash and counting decorators
 * wrap them; the steps do not know), exporting a record's span right after the write that
 * completed it, and awaiting the collector before the step goes on, so that a process killed
 * after a step has exported that step's span (a Lambda may be frozen as soon as it returns).
 *
 *   recordTurn                      the turn written by this call        → chat {model}, its token usage and duration
 *   completeCall / recordCall       the call's outcome written           → execute_tool {tool}, its duration
 *   decideApproval                  the decision written by this call    → savepoint.approval
 *   finishRun                       the run ended                        → invoke_agent {agent}, the run's own spans and its budget checks
 *   countStep → false               a retry found its step recorded and counted: it did nothing
 *                                                                        → the replay, marked not executed
 *
 * A write that found the record there already exports nothing: the attempt that wrote it did.
 * The spans come from the records the ledger returned (spans.ts), so they are the ones
 * `savepoint trace` derives afterwards. An export that fails never fails the step: it is named to
 * `onError`, the spans are dropped for a while (EXPORT_COOLDOWN_MS), and `savepoint trace` can send
 * the whole trace again later.
 */
export interface TracingOptions {
    readonly sink: SpanSink;
    readonly clock: Clock;
    /** The agent's tools, for each call's `savepoint.tool.guarantee`. @default none */
    readonly tools?: SpanOptions['tools'];
    /** An export failed (the collector is down, …). @default ignored */
    readonly onError?: (error: unknown) => void;
    /**
     * Where the run's end reads its conversation back for the budget-check spans: on AWS the
     * function's own ledger, which a traced deployment lets Query (the `traceRunEnd` grant,
     * infra/durable-agent.ts). @default the traced ledger
     */
    readonly conversationReader?: Pick<TurnLedger, 'listConversation'>;
}
export declare function tracingLedger(ledger: Ledger, options: TracingOptions): Ledger;
/**
 * After a failed export the spans are dropped for this long, instead of holding every step up for
 * the exporter's timeout while the collector is down; `savepoint trace` sends them later.
 */
export declare const EXPORT_COOLDOWN_MS = 30000;
export declare function tracingTurns(turns: TurnLedger, options: TracingOptions): Pick<TurnLedger, 'recordTurn'>;
export declare function tracingCalls(calls: ToolCallLedger, options: TracingOptions): Pick<ToolCallLedger, 'completeCall' | 'recordCall'>;
export declare function tracingApprovals(approvals: ApprovalLedger, options: TracingOptions): Pick<ApprovalLedger, 'decideApproval'>;
export declare function tracingRuns(runs: RunLedger & Pick<TurnLedger, 'listConversation'>, options: TracingOptions): Pick<RunLedger, 'finishRun'>;
export declare function tracingGuards(ledger: GuardLedger & TurnLedger & ToolCallLedger, options: TracingOptions): Pick<GuardLedger, 'countStep'>;
