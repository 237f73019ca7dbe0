/**
 * A synchronous Lambda invocation's payload, its response as much as its request, is at most 6 MB
 * (Lambda API reference, Invoke, https://docs.aws.amazon.com/lambda/latest/dg/API_Invoke.html:
 * "For synchronous invocations, the maximum payload size is 6 MB"). A function whose result is
 * larger fails the invocation with `Function.ResponseSizeTooLarge`, and API Gateway's Lambda proxy
 * integration, which invokes it synchronously, answers its caller 502 `{"message": "Internal server
 * error"}`. The twin's API (local/services/approval-api.ts: the runs and approval functions behind
 * API Gateway) holds each result to it.
 */

/** The largest synchronous response Lambda returns, in bytes. */
export const LAMBDA_SYNC_RESPONSE_MAX_BYTES = 6 * 1024 * 1024;

/** Lambda's error type for a result over the limit, as the function's error (`X-Amz-Function-Error: Unhandled`) names it. */
export const RESPONSE_TOO_LARGE = 'Function.ResponseSizeTooLarge';

/** Whether a proxy integration's result, as Lambda serializes it (JSON), is over what Lambda returns. */
export function responseTooLarge(result: unknown): boolean {
  return Buffer.byteLength(JSON.stringify(result) ?? '', 'utf8') > LAMBDA_SYNC_RESPONSE_MAX_BYTES;
}
