/**
 * The CloudWatch metrics the functions emit (EMF, through Powertools Metrics) and the dashboard and
 * alarms read (infra/observability.ts): one namespace, one dimension — `service`, the agent's name —
 * and these names. Like the error names, they are a contract between the code and the template.
 */
export const METRICS_NAMESPACE = 'Savepoint';

export const MetricNames = {
  /** Agent steps counted (model turns + tool calls). */
  Steps: 'Steps',
  ModelTurns: 'ModelTurns',
  ToolCalls: 'ToolCalls',
  InputTokens: 'InputTokens',
  OutputTokens: 'OutputTokens',
  /** Dollars spent on model calls (usage × the price table). */
  Dollars: 'Dollars',
  /** A step failed with an error its Task retries (transient, throttled, lease held, circuit open). */
  Retries: 'Retries',
  GuardWarnings: 'GuardWarnings',
  GuardStops: 'GuardStops',
  /** A step found a provider's circuit breaker open (each retry while it stays open counts again). */
  BreakerOpen: 'BreakerOpen',
  ApprovalsRequested: 'ApprovalsRequested',
  ApprovalsDecided: 'ApprovalsDecided',
  ApprovalsExpired: 'ApprovalsExpired',
  /** Pending approvals, and how long the oldest has waited (seconds), as the sweeper saw them. */
  ApprovalsWaiting: 'ApprovalsWaiting',
  OldestApprovalAgeSeconds: 'OldestApprovalAgeSeconds',
  /** Pending approvals whose execution is gone. */
  OrphanedApprovals: 'OrphanedApprovals',
  Recoveries: 'Recoveries',
  /** Runs given up by recovery (`Agent.Unrecoverable`). */
  RecoveriesGivenUp: 'RecoveriesGivenUp',
  /** Write calls whose outcome stayed unknown and were escalated to a person instead of sent again. */
  EffectsEscalated: 'EffectsEscalated',
  /** Runs the sweeper found stuck and could not resume (they need a person). */
  RunsNeedingAttention: 'RunsNeedingAttention',
  /** Runs that ended, by how (one metric each: the dashboard stacks them). */
  RunsSucceeded: 'RunsSucceeded',
  RunsStopped: 'RunsStopped',
  RunsKilled: 'RunsKilled',
  RunsFailed: 'RunsFailed',
  /** Per finished run: its steps and its dollars (the dashboard's per-run figures). */
  StepsPerRun: 'StepsPerRun',
  DollarsPerRun: 'DollarsPerRun',
  /** A model call the fleet budget refused (records/fleet.ts): the run stopped, or waits. */
  FleetBudgetSpent: 'FleetBudgetSpent',
} as const;

export type MetricName = (typeof MetricNames)[keyof typeof MetricNames];
export type MetricUnit = 'Count' | 'Seconds' | 'None';

export interface MetricPoint {
  name: MetricName;
  unit: MetricUnit;
  value: number;
}
