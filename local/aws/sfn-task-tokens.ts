/**
 * What SendTaskSuccess, SendTaskFailure and SendTaskHeartbeat refuse (Step Functions API reference,
 * https://docs.aws.amazon.com/step-functions/latest/apireference/API_SendTaskSuccess.html): a
 * `taskToken` of 1 to 2,048 characters (else `InvalidToken`), an `output` that is JSON of at most
 * the payload quota (else `InvalidOutput`), and a token whose Task is over: `TaskTimedOut` once it
 * timed out, `TaskDoesNotExist` when it is unknown, already completed or its execution has ended.
 * The engine's token registry (local/engine/task-tokens.ts) asks these.
 */
import { PAYLOAD_LIMIT_BYTES, TASK_TOKEN_MAX_LENGTH } from '../../lambdas/shared/limits.js';
import { LocalSfnError } from './sfn-error.js';
import { overPayloadLimit } from './sfn-payload-limit.js';

/** Throws InvalidToken for a token no callback may carry. */
export function assertTokenLength(token: string): void {
  if (token.length === 0 || token.length > TASK_TOKEN_MAX_LENGTH) throw new LocalSfnError('InvalidToken', 'Invalid Token');
}

/** A callback's output, parsed; InvalidOutput when it is not JSON or over the payload quota. */
export function parseTaskOutput(output: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(output);
  } catch {
    throw new LocalSfnError('InvalidOutput', 'Invalid Output: the output is not valid JSON');
  }
  if (overPayloadLimit(output)) throw new LocalSfnError('InvalidOutput', `Invalid Output: larger than ${PAYLOAD_LIMIT_BYTES} bytes`);
  return value;
}

/** What a callback on a token no Task waits on is answered: TaskTimedOut when its Task timed out, else TaskDoesNotExist. */
export function taskGone(timedOut: boolean): LocalSfnError {
  return timedOut
    ? new LocalSfnError('TaskTimedOut', 'Task Timed Out')
    : new LocalSfnError('TaskDoesNotExist', 'Task does not exist anymore (unknown, already completed, or its execution ended)');
}
