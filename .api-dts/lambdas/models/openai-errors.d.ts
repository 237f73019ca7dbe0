/**
 * Maps what the `openai` SDK throws to a savepoint error (see provider-errors.ts for the classes).
 * The trap: a spend cap comes as a 429 too — `insufficient_quota` — and retrying it only burns
 * attempts, so it is terminal, unlike the other 429s (`rate_limit_exceeded`).
 * Documented codes: https://platform.openai.com/docs/guides/error-codes
 */
/** `endpoint`: the base URL called, named in a connection error (which has no response to say where). */
export declare function classifyOpenAIError(error: unknown, now?: number, endpoint?: string): Error;
