import { Dashboard, type IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
/** When the alarms of an agent go off. */
export interface AlarmThresholds {
    /** An approval waiting longer than this. @default 12 */
    readonly approvalWaitHours?: number;
    /** Model spend of one agent over one day (UTC) above this. @default 50 */
    readonly dailySpendDollars?: number;
    /** A circuit breaker open (steps rejected every minute) for this long. @default 15 */
    readonly breakerOpenMinutes?: number;
    /** How far above its usual band (standard deviations) the cost of a run must be to alarm. @default 3 */
    readonly costAnomalyStdDevs?: number;
}
export interface WatchedAgent {
    readonly agentName: string;
    readonly stateMachine: IStateMachine;
    /** Queues that must stay empty (dead letters, failed events), by a name for the alarm. */
    readonly queues: Readonly<Record<string, IQueue>>;
    readonly thresholds?: AlarmThresholds;
}
/** The alarm ids of one agent: the README's runbook has an entry for each. */
export declare const AlarmIds: {
    readonly ExecutionsFailed: 'ExecutionsFailed';
    readonly RunsGivenUp: 'RunsGivenUp';
    readonly QueueNotEmpty: 'QueueNotEmpty';
    readonly ApprovalWaitingTooLong: 'ApprovalWaitingTooLong';
    readonly DailySpend: 'DailySpend';
    readonly BreakerOpenTooLong: 'BreakerOpenTooLong';
    readonly RunsNeedingAttention: 'RunsNeedingAttention';
    readonly OrphanedApprovals: 'OrphanedApprovals';
    readonly DollarsPerRunAnomaly: 'DollarsPerRunAnomaly';
    readonly EffectsEscalated: 'EffectsEscalated';
};
/**
 * Operating on AWS, per stack: one SNS topic the alarms publish to (subscribe your pager or email),
 * encrypted with a key of its own that CloudWatch may use, and one CloudWatch dashboard. `watch`
 * adds an agent's alarms and its row of graphs; the metrics are the ones the functions emit
 * (lambdas/shared/metrics.ts, dimension `service` = the agent's name) and Step Functions' own.
 */
export declare class Operations extends Construct {
    readonly topic: Topic;
    readonly dashboard: Dashboard;
    readonly alarms: IAlarm[];
    constructor(scope: Construct, id: string);
    /** Adds an agent's alarms (publishing to the topic) and its graphs. */
    watch(scope: Construct, agent: WatchedAgent): IAlarm[];
}
/** The stack's Operations, when the agent is deployed without a SavepointStack. */
export declare function operationsOf(scope: Construct): Operations;
