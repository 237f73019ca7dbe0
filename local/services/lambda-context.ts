import type { Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../lambdas/shared/ports.js';

/** The callback-style completions, which an async handler never calls: one no-op for every context. */
const ignored = () => undefined;

/**
 * The Lambda context an in-process invocation gets: enough for the early timeout (it reads
 * `getRemainingTimeInMillis`) and for logs. The remaining time counts on `clock`, the one the
 * invocation is timed on (local/runtime/handlers.ts). Made for every invocation, so it allocates
 * only what differs between them: the request id is drawn when first read (nothing local reads
 * it; a logger that does gets one id per invocation, the same on every read).
 */
export function lambdaContext(functionName: string, timeoutMs: number, clock: Clock = systemClock): Context {
  const deadline = clock.now().getTime() + timeoutMs;
  let requestId: string | undefined;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    get awsRequestId() {
      return (requestId ??= randomUUID());
    },
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - clock.now().getTime()),
    done: ignored,
    fail: ignored,
    succeed: ignored,
  };
}
