/**
 * Step Functions' payload quota: "Maximum input or output size for a task, state, or execution:
 * 256 KiB of data as a UTF-8 encoded string" (Step Functions Developer Guide, service quotas,
 * https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html#service-limits-task-executions;
 * it covers "input data when scheduling a task" and a task's result). A state's output, a task's
 * input or its result over it fails the execution with `States.DataLimitExceeded`; an execution's
 * input over it is refused by StartExecution (local/aws/sfn-start-execution.ts), a callback's
 * output by SendTaskSuccess (local/aws/sfn-task-tokens.ts).
 */
import { PAYLOAD_LIMIT_BYTES } from '../../lambdas/shared/limits.js';

/** Whether `text` is over the quota in UTF-8 bytes. A UTF-16 unit is at most 3 bytes of UTF-8: most payloads are below the limit without counting. */
export function overPayloadLimit(text: string): boolean {
  return text.length * 3 > PAYLOAD_LIMIT_BYTES && Buffer.byteLength(text, 'utf8') > PAYLOAD_LIMIT_BYTES;
}

/**
 * How the execution ends when a state's (or task's) input or result is over the quota. The
 * result's wording is the service's (as for a state's output); the input's is the twin's own.
 */
export function dataLimitExceeded(stateName: string, what: 'input' | 'result'): { status: 'FAILED'; error: 'States.DataLimitExceeded'; cause: string } {
  return {
    status: 'FAILED',
    error: 'States.DataLimitExceeded',
    cause:
      what === 'input'
        ? `The state/task '${stateName}' was scheduled with an input with a size exceeding the maximum number of bytes service limit.`
        : `The state/task '${stateName}' returned a result with a size exceeding the maximum number of bytes service limit.`,
  };
}
