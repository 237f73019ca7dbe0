import type { AslDefinition } from '../local/template/asl.js';
import type { HistoryEvent } from '../local/engine/local-engine.js';
/**
 * What the console reads of the execution history: one line per event, in the shape the state
 * directory's `history.jsonl` keeps (local/engine/history-log.ts), so that executions of this process (the
 * engine's full history) and of earlier processes (the log's Task events) read the same.
 */
export interface HistoryLine {
    at: string;
    /** The execution's name (the last part of its ARN). */
    execution: string;
    state?: string;
    /** `StateEntered`, `TaskScheduled`, `TaskSucceeded`, `TaskFailed`, `TaskTimedOut`, `ExecutionStarted`, … */
    type: string;
    error?: string;
}
/**
 * Where the console finds executions: the running engine, the state directory's log, or both;
 * on a deployed stack, the Step Functions API (console/stack.ts), hence the promises.
 */
export interface HistorySource {
    /** The lines of one execution (by ARN), oldest first; empty when nothing is known of it. */
    linesOf(executionArn: string): HistoryLine[] | Promise<HistoryLine[]>;
    /** The status of the execution (`RUNNING`, `SUCCEEDED`, …), if known here. */
    statusOf?(executionArn: string): string | undefined | Promise<string | undefined>;
}
/** What linesFromEngine reads of a history event: the local engine's and the Step Functions API's alike. */
export interface HistoryEventLike {
    id?: number | undefined;
    previousEventId?: number | undefined;
    timestamp?: Date | undefined;
    type?: string | undefined;
    stateEnteredEventDetails?: {
        name?: string | undefined;
    } | undefined;
    taskFailedEventDetails?: {
        error?: string | undefined;
    } | undefined;
    taskTimedOutEventDetails?: {
        error?: string | undefined;
    } | undefined;
    executionFailedEventDetails?: {
        error?: string | undefined;
    } | undefined;
    executionAbortedEventDetails?: {
        error?: string | undefined;
    } | undefined;
}
export declare const executionName: (arn: string) => string;
/** An execution's full history (the engine's or the Step Functions API's), as history lines (StateEntered included). */
export declare function linesFromEngine(arn: string, events: readonly HistoryEventLike[]): HistoryLine[];
/** The status an execution's history ends in: its terminal event's, else RUNNING (undefined without events). */
export declare function statusFromLines(lines: readonly HistoryLine[]): string | undefined;
/** The state directory's `history.jsonl`, re-read only when it grew. */
export declare function historyFile(file: string): (execution: string) => HistoryLine[];
/** The engine this process runs, falling back to the log for executions it does not know. */
export declare function historySource(options: {
    engine?: {
        getExecutionHistory(arn: string): HistoryEvent[];
        describeExecution(arn: string): {
            status: string;
        };
    };
    file?: string;
}): HistorySource;
export interface StateCounts {
    entered: number;
    retried: number;
    failed: number;
    errors: Record<string, number>;
}
/**
 * Per state: times entered, retries (an invocation after a failed one within the same entry), and
 * failed invocations by error name. The log has no StateEntered lines: there an invocation that
 * does not follow a failure of the same state starts an entry.
 */
export declare function countStates(executions: readonly HistoryLine[][]): Record<string, StateCounts>;
/**
 * The state an execution is in, if it is still running: a Task waiting on its token (a person's
 * approval) if there is one — a turn's other tool calls may go on beside it — else the last state
 * entered or invoked.
 */
export declare function currentState(lines: readonly HistoryLine[]): string | undefined;
export interface GraphNode {
    name: string;
    type: string;
    x: number;
    y: number;
}
export interface GraphEdge {
    from: string;
    to: string;
    kind: 'next' | 'choice' | 'default' | 'catch';
}
/**
 * The states as boxes in rows (breadth first from StartAt) and their transitions; a Map's iteration
 * states below the Map (an edge from the Map to the iteration's first state).
 */
export declare function layoutDefinition(definition: AslDefinition): {
    nodes: GraphNode[];
    edges: GraphEdge[];
    width: number;
    height: number;
};
