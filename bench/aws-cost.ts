/**
 * What an agent run would cost on AWS, from what the overhead benchmark measures per agent step:
 * Step Functions state transitions, Lambda invocations and billed GB-seconds, DynamoDB read and
 * write request units. The prices are in one table, `AWS_PRICES`; nothing else here names a price.
 */

/**
 * AWS's published on-demand prices in US East (N. Virginia), as of 2026-12-01, without free tiers
 * (Step Functions' 4,000 transitions and Lambda's 1M requests / 400,000 GB-seconds a month).
 *   - Step Functions Standard: $0.025 per 1,000 state transitions, retries included
 *     (https://aws.amazon.com/step-functions/pricing/);
 *   - Lambda: $0.20 per 1M requests; duration $0.0000133334 per GB-second on Arm (the step
 *     functions' architecture, infra/step-function.ts), billed per invocation rounded up to 1 ms
 *     (https://aws.amazon.com/lambda/pricing/);
 *   - DynamoDB on-demand: $0.625 per 1M write request units, $0.125 per 1M read request units, since
 *     the price cut of 2024-11-01 (https://aws.amazon.com/dynamodb/pricing/on-demand/).
 */
export const AWS_PRICES = {
  region: 'us-east-1',
  asOf: '2026-12-01',
  stepFunctionsPerTransition: 0.025 / 1_000,
  lambdaPerRequest: 0.2 / 1_000_000,
  lambdaPerArmGbSecond: 0.0000133334,
  dynamodbPerWriteUnit: 0.625 / 1_000_000,
  dynamodbPerReadUnit: 0.125 / 1_000_000,
} as const;
export type AwsPrices = typeof AWS_PRICES;

/** What one agent step uses, measured on the local twin (bench/meters.ts). */
export interface AwsUsagePerStep {
  transitions: number;
  lambdaInvocations: number;
  /** Σ over invocations of (duration rounded up to 1 ms) × the function's memory, in GB-seconds. */
  lambdaGbSeconds: number;
  /** Absent when the row ran no DynamoDB (the embedded ledger): its share is then unknown, not 0. */
  dynamodb?: { readUnits: number; writeUnits: number };
}

export interface AwsBill {
  steps: number;
  stepFunctions: { transitions: number; dollars: number };
  lambdaRequests: { invocations: number; dollars: number };
  lambdaDuration: { gbSeconds: number; dollars: number };
  dynamodb: { readUnits: number; writeUnits: number; dollars: number } | null;
  dollars: number;
  /** Each service's part of `dollars`. */
  shares: { stepFunctions: number; lambda: number; dynamodb: number | null };
}

/** The bill of a run of `steps` agent steps at the measured usage per step. */
export function awsBill(usage: AwsUsagePerStep, steps: number, prices: AwsPrices = AWS_PRICES): AwsBill {
  const transitions = usage.transitions * steps;
  const invocations = usage.lambdaInvocations * steps;
  const gbSeconds = usage.lambdaGbSeconds * steps;
  const stepFunctions = { transitions, dollars: transitions * prices.stepFunctionsPerTransition };
  const lambdaRequests = { invocations, dollars: invocations * prices.lambdaPerRequest };
  const lambdaDuration = { gbSeconds, dollars: gbSeconds * prices.lambdaPerArmGbSecond };
  const dynamodb = usage.dynamodb
    ? {
        readUnits: usage.dynamodb.readUnits * steps,
        writeUnits: usage.dynamodb.writeUnits * steps,
        dollars: steps * (usage.dynamodb.readUnits * prices.dynamodbPerReadUnit + usage.dynamodb.writeUnits * prices.dynamodbPerWriteUnit),
      }
    : null;
  const dollars = stepFunctions.dollars + lambdaRequests.dollars + lambdaDuration.dollars + (dynamodb?.dollars ?? 0);
  return {
    steps,
    stepFunctions,
    lambdaRequests,
    lambdaDuration,
    dynamodb,
    dollars,
    shares: {
      stepFunctions: stepFunctions.dollars / dollars,
      lambda: (lambdaRequests.dollars + lambdaDuration.dollars) / dollars,
      dynamodb: dynamodb ? dynamodb.dollars / dollars : null,
    },
  };
}

/** What each second a step function of `memoryMb` waits (on the model, on a provider) adds to the bill. */
export function lambdaDollarsPerSecondWaiting(memoryMb: number, prices: AwsPrices = AWS_PRICES): number {
  return (memoryMb / 1024) * prices.lambdaPerArmGbSecond;
}

/**
 * What a deployment costs a month while it runs nothing (issue 34: "idle cost per added agent"),
 * AWS's published prices in US East (N. Virginia) as of 2026-12-01, free tiers aside:
 *   - CloudWatch alarms: $0.10 per standard-resolution alarm metric a month; a metric-math alarm is
 *     charged per metric it reads, an anomaly detection alarm as three (the metric and its band's two);
 *     dashboards $3.00 each a month; custom metrics $0.30 each a month (the first 10,000), a metric
 *     being a name with one set of dimensions, charged for a month in which it is published
 *     (https://aws.amazon.com/cloudwatch/pricing/);
 *   - KMS: $1.00 per customer-managed key a month (https://aws.amazon.com/kms/pricing/);
 *   - Secrets Manager: $0.40 per secret a month (https://aws.amazon.com/secrets-manager/pricing/);
 *   - EventBridge scheduled rules cost nothing; the Lambda invocations they make are priced as in
 *     AWS_PRICES, at IDLE_INVOCATION_SECONDS each (an idle sweep reads one empty index page).
 * Queues, topics, tables (on demand), APIs, state machines and log groups cost nothing idle.
 */
export const IDLE_PRICES = {
  alarmMetric: 0.1,
  dashboard: 3,
  customMetric: 0.3,
  kmsKey: 1,
  secret: 0.4,
  hoursPerMonth: 730,
} as const;

/** The billed duration assumed for an idle scheduled invocation (a sweep that finds nothing to do). */
export const IDLE_INVOCATION_SECONDS = 0.2;

type TemplateResource = { Type: string; Properties?: Record<string, any> };

export interface IdleBill {
  alarmMetrics: number;
  dashboards: number;
  kmsKeys: number;
  secrets: number;
  /** Custom metrics published while idle: metric name × `service` dimension, from the emitter. */
  customMetrics: number;
  scheduledInvocations: number;
  dollars: number;
}

/** Metrics an alarm is billed for: its metric, each metric a math expression reads, three for an anomaly band. */
function alarmMetricsOf(alarm: TemplateResource): number {
  const properties = alarm.Properties ?? {};
  if (properties['MetricName']) return 1;
  const metrics = (properties['Metrics'] ?? []) as { MetricStat?: unknown; Expression?: string }[];
  const read = metrics.filter((metric) => metric.MetricStat !== undefined).length;
  return metrics.some((metric) => metric.Expression?.startsWith('ANOMALY_DETECTION_BAND')) ? read + 2 : read;
}

/** Invocations a month of a schedule expression (`rate(…)`; a cron is counted as daily). */
export function invocationsPerMonth(expression: string, prices: typeof IDLE_PRICES = IDLE_PRICES): number {
  const rate = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!rate) return prices.hoursPerMonth / 24;
  const minutes = Number(rate[1]) * (rate[2]!.startsWith('minute') ? 1 : rate[2]!.startsWith('hour') ? 60 : 1440);
  return (prices.hoursPerMonth * 60) / minutes;
}

/**
 * The idle bill of the templates of one deployment (a stack and its nested stacks), given the
 * custom metrics its scheduled functions publish while idle (`idleMetrics`: distinct name and
 * service pairs, from the emitter: bench/deploy.ts). Scheduled rules that start a state machine (an
 * agent's own schedule) are runs, not idle cost: only those invoking a function are counted.
 */
export function idleBill(templates: readonly { Resources: Record<string, TemplateResource> }[], idleMetrics: number, prices: typeof IDLE_PRICES = IDLE_PRICES, aws: AwsPrices = AWS_PRICES): IdleBill {
  const resources = templates.flatMap((template) => Object.entries(template.Resources));
  const functions = new Map(resources.filter(([, resource]) => resource.Type === 'AWS::Lambda::Function'));
  const of = (type: string) => resources.filter(([, resource]) => resource.Type === type).map(([, resource]) => resource);
  const alarmMetrics = of('AWS::CloudWatch::Alarm').reduce((sum, alarm) => sum + alarmMetricsOf(alarm), 0);
  let scheduledInvocations = 0;
  let gbSeconds = 0;
  for (const rule of of('AWS::Events::Rule')) {
    const expression = rule.Properties?.['ScheduleExpression'] as string | undefined;
    if (!expression) continue;
    for (const target of (rule.Properties?.['Targets'] ?? []) as { Arn?: { 'Fn::GetAtt'?: [string, string] } }[]) {
      const fn = functions.get(target.Arn?.['Fn::GetAtt']?.[0] ?? '');
      if (!fn) continue;
      const invocations = invocationsPerMonth(expression, prices);
      scheduledInvocations += invocations;
      gbSeconds += invocations * IDLE_INVOCATION_SECONDS * (Number(fn.Properties?.['MemorySize'] ?? 128) / 1024);
    }
  }
  const bill = { alarmMetrics, dashboards: of('AWS::CloudWatch::Dashboard').length, kmsKeys: of('AWS::KMS::Key').length, secrets: of('AWS::SecretsManager::Secret').length, customMetrics: idleMetrics, scheduledInvocations };
  const dollars =
    bill.alarmMetrics * prices.alarmMetric +
    bill.dashboards * prices.dashboard +
    bill.kmsKeys * prices.kmsKey +
    bill.secrets * prices.secret +
    bill.customMetrics * prices.customMetric +
    scheduledInvocations * aws.lambdaPerRequest +
    gbSeconds * aws.lambdaPerArmGbSecond;
  return { ...bill, dollars };
}
