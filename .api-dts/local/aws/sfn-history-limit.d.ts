/** How an execution ends that reached the quota. */
export declare const HISTORY_QUOTA_FAILURE: {
    readonly status: 'FAILED';
    readonly error: 'States.Runtime';
    readonly cause: "The execution reached the maximum number of history events (25000).";
};
/**
 * Whether the event after `recorded` events may not be recorded: the event that would be the
 * 25,000th may only end the execution (`endsExecution`); any other fails it with HISTORY_QUOTA_FAILURE.
 */
export declare function historyQuotaRefuses(recorded: number, endsExecution: boolean): boolean;
/** The outcome an execution with `recorded` events ends with: at the quota, only a success is event 25,000. */
export declare function outcomeAtHistoryQuota<Outcome extends {
    readonly status: string;
}>(recorded: number, outcome: Outcome): Outcome | typeof HISTORY_QUOTA_FAILURE;
