import type { Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';

/**
 * The Lambda context an in-process invocation gets: enough for middy (its early-timeout signal
 * reads `getRemainingTimeInMillis`) and for logs.
 */
export function lambdaContext(functionName: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Lambda's default function timeout, when the template sets none. */
const DEFAULT_TIMEOUT_SECONDS = 3;

/** A function's configured timeout (`Timeout`, seconds, in the template), in milliseconds. */
export function functionTimeoutMs(template: { Resources?: Record<string, { Properties?: Record<string, unknown> }> }, functionLogicalId: string): number {
  const timeout = template.Resources?.[functionLogicalId]?.Properties?.['Timeout'];
  return (typeof timeout === 'number' ? timeout : DEFAULT_TIMEOUT_SECONDS) * 1000;
}
