/**
 * What StartExecution refuses (Step Functions API reference,
 * https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html):
 *
 *   name    1–80 characters, no whitespace, brackets, wildcards, URL-special or control characters  InvalidName
 *   input   a JSON object, of at most the payload quota (local/aws/sfn-payload-limit.ts)             InvalidExecutionInput
 *   again   "idempotent for STANDARD workflows": the same name and input as a running execution is   ExecutionAlreadyExists
 *           answered with that execution; a closed one, or other input, is refused
 */
import { PAYLOAD_LIMIT_BYTES } from '../../lambdas/shared/limits.js';
import { LocalSfnError } from './sfn-error.js';
import { overPayloadLimit } from './sfn-payload-limit.js';

/** Throws InvalidName for a name the service refuses. */
export function assertExecutionName(name: string): void {
  if (name.length < 1 || name.length > 80 || /[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/.test(name)) {
    throw new LocalSfnError('InvalidName', `Invalid Name: '${name}'`);
  }
}

/** The execution's input as its text and a copy of its value (a string is parsed as JSON); InvalidExecutionInput when refused. */
export function parseExecutionInput(input: unknown): { text: string; value: unknown } {
  let value: unknown = input ?? {};
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      throw new LocalSfnError('InvalidExecutionInput', 'Invalid Execution Input: not valid JSON');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LocalSfnError('InvalidExecutionInput', 'Invalid Execution Input: must be a JSON object');
  const text = JSON.stringify(value);
  if (overPayloadLimit(text)) throw new LocalSfnError('InvalidExecutionInput', `Invalid Execution Input: larger than ${PAYLOAD_LIMIT_BYTES} bytes`);
  return { text, value: JSON.parse(text) };
}

/** A start with the name of `existing`: returns when it is the same start again (answer `existing`), else throws ExecutionAlreadyExists. */
export function assertSameStart(existing: { readonly status: string; readonly input: string }, executionArn: string, input: string): void {
  if (existing.status === 'RUNNING' && existing.input === input) return;
  throw new LocalSfnError('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
}
