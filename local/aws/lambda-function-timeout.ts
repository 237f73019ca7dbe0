/**
 * A Lambda function's timeout (Lambda Developer Guide, "Configure Lambda function timeout",
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html): "The default timeout
 * value is 3 seconds. The maximum timeout value is 900 seconds (15 minutes)"; CreateFunction takes
 * `Timeout` in whole seconds, at least 1. The local engine times each invocation by its function's
 * `Timeout` in the template (local/runtime/tasks.ts), and refuses a template whose `Timeout` Lambda
 * would refuse (local/aws/cloudformation-template.ts).
 */
import { LAMBDA_MAX_TIMEOUT_MS } from '../../lambdas/shared/limits.js';

/** Lambda's default function timeout, when the template sets none. */
const DEFAULT_TIMEOUT_SECONDS = 3;

/** The longest `Timeout` Lambda takes, in seconds. */
export const MAX_TIMEOUT_SECONDS = LAMBDA_MAX_TIMEOUT_MS / 1000;

/** Whether Lambda takes `timeout` as a function's `Timeout`: whole seconds from 1 to 900. */
export function isFunctionTimeout(timeout: unknown): boolean {
  return Number.isInteger(timeout) && (timeout as number) >= 1 && (timeout as number) <= MAX_TIMEOUT_SECONDS;
}

/** A function's configured timeout (`Timeout`, seconds, in the template), in milliseconds. */
export function functionTimeoutMs(template: { Resources?: Record<string, { Properties?: Record<string, unknown> }> }, functionLogicalId: string): number {
  const timeout = template.Resources?.[functionLogicalId]?.Properties?.['Timeout'];
  return (typeof timeout === 'number' ? timeout : DEFAULT_TIMEOUT_SECONDS) * 1000;
}
