/**
 * The execution history, in the shape of the GetExecutionHistory API: the events the engine records
 * and what is read back from them (a per-state summary).
 */
export interface Truncated {
    truncated: boolean;
}
export interface TaskResource {
    resourceType: string;
    resource: string;
}
export interface ErrorDetails {
    error?: string;
    cause?: string;
}
/** One event in the shape of the GetExecutionHistory API (only the fields this engine emits). */
export interface HistoryEvent {
    id: number;
    previousEventId: number;
    timestamp: Date;
    type: string;
    executionStartedEventDetails?: {
        input: string;
        inputDetails: Truncated;
        roleArn: string;
        stateMachineAliasArn?: string;
        stateMachineVersionArn?: string;
    };
    executionSucceededEventDetails?: {
        output: string;
        outputDetails: Truncated;
    };
    executionFailedEventDetails?: ErrorDetails;
    executionAbortedEventDetails?: ErrorDetails;
    executionTimedOutEventDetails?: ErrorDetails;
    stateEnteredEventDetails?: {
        name: string;
        input: string;
        inputDetails: Truncated;
    };
    stateExitedEventDetails?: {
        name: string;
        output: string;
        outputDetails: Truncated;
    };
    taskScheduledEventDetails?: TaskResource & {
        region: string;
        parameters: string;
        timeoutInSeconds?: number;
        heartbeatInSeconds?: number;
    };
    taskStartedEventDetails?: TaskResource;
    taskSubmittedEventDetails?: TaskResource & {
        output: string;
        outputDetails: Truncated;
    };
    taskSucceededEventDetails?: TaskResource & {
        output: string;
        outputDetails: Truncated;
    };
    taskFailedEventDetails?: TaskResource & ErrorDetails;
    taskTimedOutEventDetails?: TaskResource & ErrorDetails;
    mapIterationStartedEventDetails?: {
        name: string;
        index: number;
    };
    mapIterationSucceededEventDetails?: {
        name: string;
        index: number;
    };
    mapIterationFailedEventDetails?: {
        name: string;
        index: number;
    };
}
export type HistoryListener = (event: HistoryEvent & {
    executionArn: string;
}) => void;
export interface StateSummary {
    entered: number;
    invocations: number;
    failures: number;
    errors: Record<string, number>;
}
/** Per state name: times entered, Lambda invocations, failed/timed-out invocations by error name. */
export declare function summarizeHistory(events: readonly HistoryEvent[]): Record<string, StateSummary>;
/** The terminal event (and its details key) of each way an execution ends other than success. */
export declare const TERMINAL_EVENTS: {
    readonly FAILED: readonly ['ExecutionFailed', 'executionFailedEventDetails'];
    readonly ABORTED: readonly ['ExecutionAborted', 'executionAbortedEventDetails'];
    readonly TIMED_OUT: readonly ['ExecutionTimedOut', 'executionTimedOutEventDetails'];
};
/** The events that end an execution (the last one of its history). */
export declare const EXECUTION_END_EVENTS: ReadonlySet<string>;
