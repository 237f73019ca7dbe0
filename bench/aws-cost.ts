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
