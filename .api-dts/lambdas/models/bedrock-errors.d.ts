/**
 * Maps what `@aws-sdk/client-bedrock-runtime` throws to a savepoint error (see provider-errors.ts).
 * Bedrock names its faults (the `x-amzn-errortype` the SDK turns into `error.name`) rather than
 * using the status alone. Documented for Converse: AccessDeniedException 403, InternalServerException
 * 500, ModelErrorException 424, ModelNotReadyException 429, ModelTimeoutException 408,
 * ResourceNotFoundException 404, ServiceUnavailableException 503, ThrottlingException 429,
 * ValidationException 400.
 */
/** `endpoint`: where the call went, named in a connection error (which has no response to say where). */
export declare function classifyBedrockError(error: unknown, now?: number, endpoint?: string): Error;
