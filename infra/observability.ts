import { CfnOutput, Duration, Lazy, Stack } from 'aws-cdk-lib';
import {
  Alarm,
  AlarmStatusWidget,
  AnomalyDetectionAlarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  MathExpression,
  Metric,
  SingleValueWidget,
  TextWidget,
  TreatMissingData,
  type IAlarm,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { keyPolicy, pinKeyPolicy } from './keys.js';
import { topLevelStack } from './top-level-stack.js';
import { METRICS_NAMESPACE, MetricNames, type MetricName } from '../lambdas/shared/metrics.js';

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
  readonly thresholds?: AlarmThresholds;
  /** Whether the agent has a fleet budget (its own or its stack's): an alarm when it is spent. */
  readonly fleetBudget?: boolean;
}

/** The alarm ids of one agent: the runbook (docs/operating-on-aws.md) has an entry for each. */
export const AlarmIds = {
  ExecutionsFailed: 'ExecutionsFailed',
  RunsGivenUp: 'RunsGivenUp',
  QueueNotEmpty: 'QueueNotEmpty',
  ApprovalWaitingTooLong: 'ApprovalWaitingTooLong',
  DailySpend: 'DailySpend',
  BreakerOpenTooLong: 'BreakerOpenTooLong',
  RunsNeedingAttention: 'RunsNeedingAttention',
  OrphanedApprovals: 'OrphanedApprovals',
  DollarsPerRunAnomaly: 'DollarsPerRunAnomaly',
  EffectsEscalated: 'EffectsEscalated',
  FleetBudgetSpent: 'FleetBudgetSpent',
} as const;

/**
 * Operating on AWS, per stack: one SNS topic the alarms publish to (subscribe your pager or email),
 * encrypted with a key of its own that CloudWatch may use, and one CloudWatch dashboard. `watch`
 * adds an agent's alarms and its row of graphs; the metrics are the ones the functions emit
 * (lambdas/shared/metrics.ts, dimension `service` = the agent's name) and Step Functions' own.
 */
export class Operations extends Construct {
  readonly topic: Topic;
  readonly dashboard: Dashboard;
  readonly alarms: IAlarm[] = [];

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const key = new Key(this, 'AlarmTopicKey', { enableKeyRotation: true, description: 'Encrypts the savepoint alarm topic; CloudWatch may use it to publish.' });
    // The account administers it; only CloudWatch (publishing alarms) and SNS use it (infra/keys.ts).
    const { account } = Stack.of(this);
    pinKeyPolicy(
      key,
      keyPolicy([
        { sid: 'CloudWatchPublishesAlarms', principals: [new ServicePrincipal('cloudwatch.amazonaws.com')], actions: ['kms:Decrypt', 'kms:GenerateDataKey*'] },
        { sid: 'SnsUsesItForTheTopic', principals: [new ServicePrincipal('sns.amazonaws.com')], actions: ['kms:Decrypt', 'kms:GenerateDataKey*'], conditions: { StringEquals: { 'aws:SourceAccount': account } } },
      ]),
    );
    this.topic = new Topic(this, 'AlarmTopic', { displayName: 'savepoint alarms', masterKey: key, enforceSSL: true });
    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.days(7) });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.topic.topicArn, description: 'Subscribe to receive the savepoint alarms.' });
    new CfnOutput(this, 'DashboardName', { value: this.dashboard.dashboardName });
  }

  #approvalWaitHours?: number;
  #sharedWatched = false;

  /**
   * The alarms and the dashboard row of the functions the stack's agents share (the expiry sweep,
   * the sweeper: infra/control-plane.ts), whose metrics carry the stack as their `service`: an
   * approval waiting too long (the shortest `approvalWaitHours` of the agents), a run the sweeper
   * cannot resume or gave up, an approval whose execution is gone. Once per stack.
   */
  watchShared(service: string): void {
    if (this.#sharedWatched) return;
    this.#sharedWatched = true;
    const m = (name: MetricName, statistic: string, period: Duration, label?: string) =>
      new Metric({ namespace: METRICS_NAMESPACE, metricName: name, dimensionsMap: { service }, statistic, period, ...(label && { label }) });
    const quarter = Duration.minutes(15);
    const alarms: IAlarm[] = [];
    const alarm = (id: string, props: { metric: IMetric; threshold: number; description: string; comparison?: ComparisonOperator }) => {
      const created = new Alarm(this, `${id}Alarm`, {
        alarmDescription: `${service}: ${props.description} Runbook: docs/operating-on-aws.md#${id.toLowerCase()}`,
        metric: props.metric,
        threshold: props.threshold,
        evaluationPeriods: 1,
        datapointsToAlarm: 1,
        comparisonOperator: props.comparison ?? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(new SnsAction(this.topic));
      alarms.push(created);
    };
    const waitHours = () => this.#approvalWaitHours ?? 12;
    alarm(AlarmIds.ApprovalWaitingTooLong, {
      metric: m(MetricNames.OldestApprovalAgeSeconds, 'Maximum', quarter),
      threshold: Lazy.number({ produce: () => waitHours() * 3600 }),
      comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
      description: `an approval has waited longer than the shortest approvalWaitHours of the stack's agents for a decision.`,
    });
    alarm(AlarmIds.RunsNeedingAttention, { metric: m(MetricNames.RunsNeedingAttention, 'Sum', quarter), threshold: 1, description: 'the sweeper found a run it cannot resume on its own (see its log).' });
    alarm(AlarmIds.OrphanedApprovals, { metric: m(MetricNames.OrphanedApprovals, 'Sum', quarter), threshold: 1, description: 'an approval waits on an execution that is gone: a decision would reach nobody.' });
    // Recovery and the sweeper are the stack's (infra/recovery.ts, infra/control-plane.ts): their give-ups are one alarm.
    alarm(AlarmIds.RunsGivenUp, { metric: m(MetricNames.RecoveriesGivenUp, 'Sum', Duration.minutes(5)), threshold: 1, description: 'recovery or the sweeper gave a run up (Agent.Unrecoverable): it failed again and again without progress.' });
    const hour = Duration.hours(1);
    this.dashboard.addWidgets(new TextWidget({ markdown: `## ${service}: what the agents share\nThe approval expiry sweep, recovery, the kill by StopExecution and the sweeper, for every agent of the stack.`, width: 24, height: 2 }));
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Approvals waiting',
        left: [m(MetricNames.ApprovalsWaiting, 'Maximum', quarter, 'waiting'), m(MetricNames.ApprovalsExpired, 'Sum', hour, 'expired')],
        right: [new MathExpression({ expression: 'age / 3600', usingMetrics: { age: m(MetricNames.OldestApprovalAgeSeconds, 'Maximum', quarter) }, label: 'oldest waiting (hours)', period: quarter })],
        width: 8,
      }),
      new GraphWidget({
        title: 'Recovery and the sweeper',
        left: [m(MetricNames.Recoveries, 'Sum', hour, 'recovered'), m(MetricNames.RecoveriesGivenUp, 'Sum', hour, 'given up'), m(MetricNames.RunsKilled, 'Sum', hour, 'killed by StopExecution'), m(MetricNames.RunsNeedingAttention, 'Sum', hour, 'need a person'), m(MetricNames.OrphanedApprovals, 'Sum', hour, 'orphaned approvals')],
        width: 8,
      }),
      new AlarmStatusWidget({ title: `${service} alarms`, alarms, width: 8 }),
    );
    this.alarms.push(...alarms);
  }

  /**
   * An alarm on a queue of the stack that must stay empty (the failed-events queue, the rules'
   * dead letters: infra/control-plane.ts), one per queue whatever the number of agents.
   */
  watchQueue(name: string, queue: IQueue): IAlarm {
    // A nested stack's queues (its agents' control plane) are told apart by the nested stack.
    const owner = Stack.of(queue);
    const prefix = owner === Stack.of(this) ? '' : owner.node.id;
    const created = new Alarm(this, `${prefix}${name}${AlarmIds.QueueNotEmpty}Alarm`, {
      alarmDescription: `${prefix ? `${prefix}: ` : ''}the ${name} queue holds a message: an event was not handled (a run may wait on it). Runbook: docs/operating-on-aws.md#${`${name}${AlarmIds.QueueNotEmpty}`.toLowerCase()}`,
      metric: queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    created.addAlarmAction(new SnsAction(this.topic));
    this.alarms.push(created);
    return created;
  }

  /** Adds an agent's alarms (publishing to the topic) and its graphs. */
  watch(scope: Construct, agent: WatchedAgent): IAlarm[] {
    const approvalWaitHours = agent.thresholds?.approvalWaitHours ?? 12;
    const dailySpend = agent.thresholds?.dailySpendDollars ?? 50;
    const breakerMinutes = agent.thresholds?.breakerOpenMinutes ?? 15;
    // Named for the agent's construct and its prop. A threshold of Infinity is written as null, which CloudFormation refuses at deploy.
    const threshold = (name: keyof AlarmThresholds) => `DurableAgent ${scope.node.id}: alarms.${name}`;
    if (!(approvalWaitHours > 0 && approvalWaitHours <= 24 * 7)) throw new Error(`${threshold('approvalWaitHours')} must be above 0 and at most 168, got ${approvalWaitHours}`);
    if (!(dailySpend > 0 && Number.isFinite(dailySpend))) throw new Error(`${threshold('dailySpendDollars')} must be a positive, finite number of dollars, got ${dailySpend}`);
    if (!Number.isInteger(breakerMinutes) || breakerMinutes < 1 || breakerMinutes > 60) throw new Error(`${threshold('breakerOpenMinutes')} must be an integer from 1 to 60, got ${breakerMinutes}`);
    const stdDevs = agent.thresholds?.costAnomalyStdDevs ?? 3;
    if (!(stdDevs > 0 && Number.isFinite(stdDevs))) throw new Error(`${threshold('costAnomalyStdDevs')} must be a finite number above 0, got ${stdDevs}`);
    // The stack's sweeper measures every agent's approvals: its alarm takes the shortest wait any agent allows.
    this.#approvalWaitHours = Math.min(this.#approvalWaitHours ?? approvalWaitHours, approvalWaitHours);

    const m = (name: MetricName, statistic: string, period: Duration, label?: string) =>
      new Metric({ namespace: METRICS_NAMESPACE, metricName: name, dimensionsMap: { service: agent.agentName }, statistic, period, ...(label && { label }) });
    const sum = (name: MetricName, period = Duration.minutes(5), label?: string) => m(name, 'Sum', period, label);
    const five = Duration.minutes(5);
    const sm = agent.stateMachine;

    const alarms: IAlarm[] = [];
    const alarm = (id: string, props: { metric: IMetric; threshold: number; description: string; evaluationPeriods?: number; comparison?: ComparisonOperator }) => {
      const created = new Alarm(scope, `${id}Alarm`, {
        alarmDescription: `${agent.agentName}: ${props.description} Runbook: docs/operating-on-aws.md#${id.toLowerCase()}`,
        metric: props.metric,
        threshold: props.threshold,
        evaluationPeriods: props.evaluationPeriods ?? 1,
        datapointsToAlarm: props.evaluationPeriods ?? 1,
        comparisonOperator: props.comparison ?? ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      created.addAlarmAction(new SnsAction(this.topic));
      alarms.push(created);
      return created;
    };

    alarm(AlarmIds.ExecutionsFailed, {
      metric: new MathExpression({
        expression: 'failed + timedOut',
        usingMetrics: { failed: sm.metricFailed({ period: five, statistic: 'Sum' }), timedOut: sm.metricTimedOut({ period: five, statistic: 'Sum' }) },
        period: five,
        label: 'failed or timed-out executions',
      }),
      threshold: 1,
      description: 'an execution failed or timed out (recovery resumes it; this says it happened).',
    });
    alarm(AlarmIds.DailySpend, {
      metric: sum(MetricNames.Dollars, Duration.days(1)),
      threshold: dailySpend,
      comparison: ComparisonOperator.GREATER_THAN_THRESHOLD,
      description: `model spend over one day is above $${dailySpend}.`,
    });
    alarm(AlarmIds.BreakerOpenTooLong, {
      metric: sum(MetricNames.BreakerOpen, Duration.minutes(1)),
      threshold: 1,
      evaluationPeriods: breakerMinutes,
      description: `a circuit breaker has been open (steps refused every minute) for ${breakerMinutes} minutes: a provider is down.`,
    });
    alarm(AlarmIds.EffectsEscalated, {
      metric: sum(MetricNames.EffectsEscalated),
      threshold: 1,
      description: 'a write call whose outcome stayed unknown was escalated to a person, not sent again: check with the provider whether it took effect.',
    });
    if (agent.fleetBudget) {
      alarm(AlarmIds.FleetBudgetSpent, {
        metric: sum(MetricNames.FleetBudgetSpent),
        threshold: 1,
        description: 'the fleet budget (dollars per day or runs at once) refused a model call: runs stop (or wait) until budget comes back or the day ends.',
      });
    }
    // Cost per run drifting: CloudWatch anomaly detection on DollarsPerRun (the band is learnt from
    // the agent's own history), rather than a fixed threshold no one keeps up to date.
    const drift = new AnomalyDetectionAlarm(scope, `${AlarmIds.DollarsPerRunAnomaly}Alarm`, {
      alarmDescription: `${agent.agentName}: the cost of a run is above its usual band (${stdDevs} standard deviations). Runbook: docs/operating-on-aws.md#${AlarmIds.DollarsPerRunAnomaly.toLowerCase()}`,
      metric: m(MetricNames.DollarsPerRun, 'Maximum', Duration.hours(1)),
      stdDevs,
      comparisonOperator: ComparisonOperator.GREATER_THAN_UPPER_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    drift.addAlarmAction(new SnsAction(this.topic));
    alarms.push(drift);

    const day = Duration.days(1);
    const hour = Duration.hours(1);
    this.dashboard.addWidgets(new TextWidget({ markdown: `## ${agent.agentName}\nRunbook: docs/operating-on-aws.md. One execution: the Step Functions console.`, width: 24, height: 2 }));
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Runs by status (per day)',
        stacked: true,
        left: [
          sum(MetricNames.RunsSucceeded, day, 'succeeded'),
          sum(MetricNames.RunsStopped, day, 'stopped'),
          sum(MetricNames.RunsKilled, day, 'killed'),
          sum(MetricNames.RunsFailed, day, 'failed'),
        ],
        width: 8,
      }),
      new GraphWidget({
        title: 'Executions (Step Functions)',
        left: [
          sm.metricStarted({ period: hour, statistic: 'Sum', label: 'started' }),
          sm.metricSucceeded({ period: hour, statistic: 'Sum', label: 'succeeded' }),
          sm.metricFailed({ period: hour, statistic: 'Sum', label: 'failed' }),
          sm.metricTimedOut({ period: hour, statistic: 'Sum', label: 'timed out' }),
          sm.metricAborted({ period: hour, statistic: 'Sum', label: 'aborted' }),
        ],
        width: 8,
      }),
      new GraphWidget({
        title: 'Cost ($)',
        left: [sum(MetricNames.Dollars, day, 'per day')],
        right: [m(MetricNames.DollarsPerRun, 'Average', day, 'per run (average)'), m(MetricNames.DollarsPerRun, 'Maximum', day, 'per run (max)')],
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Steps',
        left: [sum(MetricNames.ModelTurns, hour, 'model turns'), sum(MetricNames.ToolCalls, hour, 'tool calls')],
        right: [m(MetricNames.StepsPerRun, 'Average', day, 'steps per run (average)'), m(MetricNames.StepsPerRun, 'Maximum', day, 'steps per run (max)')],
        width: 8,
      }),
      new GraphWidget({
        // Recoveries are the stack's (infra/recovery.ts): its row of what the agents share shows them.
        title: 'Retries, guards',
        left: [sum(MetricNames.Retries, hour, 'retries'), sum(MetricNames.GuardWarnings, hour, 'guard warnings'), sum(MetricNames.GuardStops, hour, 'guard stops')],
        width: 8,
      }),
      new GraphWidget({
        title: 'Circuit breaker (steps refused while open, per minute)',
        left: [sum(MetricNames.BreakerOpen, Duration.minutes(1), 'refused: breaker open')],
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Approvals',
        left: [
          sum(MetricNames.ApprovalsRequested, hour, 'requested'),
          sum(MetricNames.ApprovalsDecided, hour, 'decided'),
        ],
        width: 8,
      }),
      new SingleValueWidget({
        title: 'Tokens (per day)',
        metrics: [sum(MetricNames.InputTokens, day, 'input'), sum(MetricNames.OutputTokens, day, 'output')],
        width: 8,
      }),
      new AlarmStatusWidget({ title: `${agent.agentName} alarms`, alarms, width: 8 }),
    );
    this.alarms.push(...alarms);
    return alarms;
  }
}

/** The stack's Operations: one per deployed (top-level) stack, whatever nesting its agents use. */
export function operationsOf(scope: Construct): Operations {
  const stack = topLevelStack(scope);
  return (stack.node.tryFindChild('Operations') as Operations | undefined) ?? new Operations(stack, 'Operations');
}
