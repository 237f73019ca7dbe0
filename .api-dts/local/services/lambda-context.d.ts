import type { Context } from 'aws-lambda';
import { type Clock } from '../../lambdas/shared/ports.js';
/**
 * The Lambda context an in-process invocation gets: enough for the early timeout (it reads
 * `getRemainingTimeInMillis`) and for logs. The remaining time counts on `clock`, the one the
 * invocation is timed on (local/runtime/handlers.ts).
 */
export declare function lambdaContext(functionName: string, timeoutMs: number, clock?: Clock): Context;
