/**
 * Maps what `@anthropic-ai/sdk` throws to a savepoint error (see provider-errors.ts for the classes).
 * Documented error types: https://docs.anthropic.com/en/api/errors — 429 `rate_limit_error`,
 * 529 `overloaded_error`, 500 `api_error`, 400 `invalid_request_error` (also "credit balance is too
 * low"), 401 `authentication_error`, 402 `billing_error`, 403 `permission_error`, 404 `not_found_error`.
 */
/** `endpoint`: the base URL called, named in a connection error (which has no response to say where). */
export declare function classifyAnthropicError(error: unknown, now?: number, endpoint?: string): Error;
