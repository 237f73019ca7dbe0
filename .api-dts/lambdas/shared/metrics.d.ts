/**
 * The CloudWatch metrics the functions emit (EMF, through Powertools Metrics) and the dashboard and
 * alarms read (infra/observability.ts): one namespace, one dimension — `service`, the agent's name —
 * and these names. Like the error names, they are a contract between the code and the template.
 */
export declare const METRICS_NAMESPACE = "Savepoint";
export declare const MetricNames: {
    /** Agent steps counted (model turns + tool calls). */
    readonly Steps: 'Steps';
    readonly ModelTurns: 'ModelTurns';
    readonly ToolCalls: 'ToolCalls';
    readonly InputTokens: 'InputTokens';
    readonly OutputTokens: 'OutputTokens';
    /** Dollars spent on model calls (usage × the price table). */
    readonly Dollars: 'Dollars';
    /** A step failed with an error its Task retries (transient, throttled, lease held, circuit open). */
    readonly Retries: 'Retries';
    readonly GuardWarnings: 'GuardWarnings';
    readonly GuardStops: 'GuardStops';
    /** A step found a provider's circuit breaker open (each retry while it stays open counts again). */
    readonly BreakerOpen: 'BreakerOpen';
    readonly ApprovalsRequested: 'ApprovalsRequested';
    readonly ApprovalsDecided: 'ApprovalsDecided';
    readonly ApprovalsExpired: 'ApprovalsExpired';
    /** Pending approvals, and how long the oldest has waited (seconds), as the sweeper saw them. */
    readonly ApprovalsWaiting: 'ApprovalsWaiting';
    readonly OldestApprovalAgeSeconds: 'OldestApprovalAgeSeconds';
    /** Pending approvals whose execution is gone. */
    readonly OrphanedApprovals: 'OrphanedApprovals';
    readonly Recoveries: 'Recoveries';
    /** Runs given up by recovery (`Agent.Unrecoverable`). */
    readonly RecoveriesGivenUp: 'RecoveriesGivenUp';
    /** Write calls whose outcome stayed unknown and were escalated to a person instead of sent again. */
    readonly EffectsEscalated: 'EffectsEscalated';
    /** Runs the sweeper found stuck and could not resume (they need a person). */
    readonly RunsNeedingAttention: 'RunsNeedingAttention';
    /** Runs that ended, by how (one metric each: the dashboard stacks them). */
    readonly RunsSucceeded: 'RunsSucceeded';
    readonly RunsStopped: 'RunsStopped';
    readonly RunsKilled: 'RunsKilled';
    readonly RunsFailed: 'RunsFailed';
    /** Per finished run: its steps and its dollars (the dashboard's per-run figures). */
    readonly StepsPerRun: 'StepsPerRun';
    readonly DollarsPerRun: 'DollarsPerRun';
};
export type MetricName = (typeof MetricNames)[keyof typeof MetricNames];
export type MetricUnit = 'Count' | 'Seconds' | 'None';
export interface MetricPoint {
    name: MetricName;
    unit: MetricUnit;
    value: number;
}
