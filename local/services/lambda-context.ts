import type { Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../lambdas/shared/ports.js';

/**
 * The Lambda context an in-process invocation gets: enough for the early timeout (it reads
 * `getRemainingTimeInMillis`) and for logs. The remaining time counts on `clock`, the one the
 * invocation is timed on (local/runtime/handlers.ts).
 */
export function lambdaContext(functionName: string, timeoutMs: number, clock: Clock = systemClock): Context {
  const now = () => clock.now().getTime();
  const deadline = now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
