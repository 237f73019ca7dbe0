/**
 * How Step Functions answers a call it refuses: an error whose `name` is the service's error code
 * (`ThrottlingException`, `InvalidToken`, …), which the local endpoint returns as `__type` with
 * HTTP 400 (local/services/step-functions.ts), as the JSON 1.0 protocol does
 * (https://docs.aws.amazon.com/step-functions/latest/apireference/CommonErrors.html). The rules of
 * this folder throw it; the engine throws it for the API's other refusals.
 */
export declare class LocalSfnError extends Error {
    constructor(name: string, message: string);
}
