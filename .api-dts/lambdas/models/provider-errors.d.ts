import { ModelThrottledError, TerminalError, TransientError } from '../shared/errors.js';
/**
 * What the three per-provider classifiers (anthropic-errors.ts, bedrock-errors.ts, openai-errors.ts)
 * share. Each classifier is a pure function from whatever its SDK threw to one savepoint error:
 *
 * - throttled (429, overloaded): `ModelThrottledError`, carrying `retry-after` when the provider sent
 *   one — the state machine's retry delay must not be shorter;
 * - transient (timeouts, connection errors, 5xx): `TransientError`;
 * - terminal (auth, permission, not found, invalid request, context too long, spend cap):
 *   `TerminalError` whose message says what to fix. Never retried, not an outage (see `isOutage`).
 */
/** Why a terminal refusal happened: each kind names its own remedy. */
export type TerminalKind = 'authentication' | 'permission' | 'not_found' | 'invalid_request' | 'context_too_long' | 'spend_cap' | 'refused';
export interface ProviderFault {
    /** `anthropic`, `bedrock`, `openai`: the prefix of every message, so a log line names the provider. */
    readonly provider: string;
    /** The HTTP status, when there was a response. */
    readonly status?: number | undefined;
    /** The provider's own error type or code (`rate_limit_error`, `ThrottlingException`, `insufficient_quota`). */
    readonly code?: string | undefined;
    readonly message: string;
}
export declare function throttled(fault: ProviderFault, retryAfterSeconds: number | undefined, cause: unknown): ModelThrottledError;
export declare function transient(fault: ProviderFault, cause: unknown): TransientError;
/** A terminal refusal whose message ends with what the operator has to change, per provider. */
export declare function terminal(fault: ProviderFault, kind: TerminalKind, remedy: string, cause: unknown): TerminalError;
/** The subset of `Headers` the classifiers read (the Anthropic and OpenAI SDKs hand over a `Headers`). */
export interface HeaderSource {
    get(name: string): string | null | undefined;
}
/** A `HeaderSource` over a plain record of lower-case names (what the AWS SDK keeps on `$response`). */
export declare function headersOf(record: Record<string, string | undefined>): HeaderSource;
/**
 * `retry-after-ms` or `retry-after` (seconds or an HTTP date), as whole seconds rounded up; undefined
 * when absent, unparsable or in the past. `now` is injected so that the classifiers stay pure.
 */
export declare function retryAfterSeconds(headers: HeaderSource | undefined, now: number): number | undefined;
/** Whether a 400's message says the prompt does not fit the model's context window. */
export declare function isContextTooLong(message: string): boolean;
export declare function errorMessage(error: unknown): string;
