import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { ErrorNames, TransientError } from '../shared/errors.js';

const OURS = new Set<string>(Object.values(ErrorNames));

/**
 * AWS SDK and network faults (a throttled DynamoDB write, a reset connection) are transient: they
 * are renamed `Agent.Transient` so the state machine's Retry handles them. Our own errors keep
 * their names; anything else (a bug) keeps its name and fails the run instead of looping.
 */
export function classifyError(error: unknown): unknown {
  if (!(error instanceof Error) || OURS.has(error.name)) return error;
  const sdk = error as Error & { $retryable?: unknown; $fault?: string; code?: string };
  const network = ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE'].includes(sdk.code ?? '');
  if (sdk.$retryable || sdk.$fault === 'server' || network || error.name === 'TimeoutError') {
    return new TransientError(`${error.name}: ${error.message}`, { cause: error });
  }
  return error;
}

/** Where a step's error lines go: CloudWatch Logs (stderr) on AWS, a log file on the local engine. */
export type ErrorLog = (line: string) => void;

const errorClassifier = (log: ErrorLog): middy.MiddlewareObj => ({
  onError: (request) => {
    request.error = classifyError(request.error) as Error;
    log(JSON.stringify({ level: 'ERROR', error: request.error.name, message: request.error.message }));
  },
});

/**
 * The Lambda handler of a step: middy around a plain step function. The abort signal fires one
 * second before the Lambda would time out, and is passed to outbound calls.
 */
export function stepHandler<Result>(
  step: (event: unknown, signal?: AbortSignal) => Promise<Result>,
  log: ErrorLog = (line) => console.error(line),
) {
  return middy<unknown, Result, Error, Context>({ timeoutEarlyInMillis: 1_000 })
    .use(errorClassifier(log))
    .handler((event, _context, { signal }) => step(event, signal));
}
