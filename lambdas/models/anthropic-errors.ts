import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { connectionError, isContextTooLong, timedOut, retryAfterSeconds, terminal, throttled, transient, type ModelCall, type ProviderFault } from './provider-errors.js';

const KEY = 'set ANTHROPIC_API_KEY (locally) or the Anthropic API key secret (on AWS) to a valid key';

/**
 * Maps what `@anthropic-ai/sdk` throws to a savepoint error (see provider-errors.ts for the classes).
 * Documented error types: https://docs.anthropic.com/en/api/errors — 429 `rate_limit_error`,
 * 529 `overloaded_error`, 500 `api_error`, 400 `invalid_request_error` (also "credit balance is too
 * low"), 401 `authentication_error`, 402 `billing_error`, 403 `permission_error`, 404 `not_found_error`.
 */
/** `call`: where the call went and its timeout, named in a connection error or a timeout (which have no response to say more). */
export function classifyAnthropicError(error: unknown, now: number = Date.now(), call: ModelCall = {}): Error {
  if (!(error instanceof APIError)) return error instanceof Error ? error : new Error(String(error));
  const fault: ProviderFault = {
    provider: 'anthropic',
    status: error.status,
    code: error.type ?? undefined,
    message: error.apiMessage ?? error.message,
  };
  // Before any status: these have none. The caller giving up (e.g. the Lambda deadline) is a
  // transient fault of this attempt, like a timeout.
  if (error instanceof APIUserAbortError) return transient({ ...fault, message: 'aborted by the caller' }, error);
  if (error instanceof APIConnectionTimeoutError) return transient({ ...fault, message: timedOut(call) }, error);
  if (error instanceof APIConnectionError) return transient({ ...fault, message: connectionError(call, error.message) }, error);

  const status = error.status ?? 0;
  const message = fault.message;
  if (/credit balance is too low/i.test(message) || error.type === 'billing_error' || status === 402) {
    return terminal(fault, 'spend_cap', 'add credits or raise the spend limit in the Anthropic Console (Settings → Billing / Limits)', error);
  }
  // The usage tier's monthly spend cap is a 429 `rate_limit_error` like a rate limit, without
  // retry-after: "Retrying, including the SDKs' automatic retries, fails until access resumes"
  // (https://platform.claude.com/docs/en/api/rate-limits). Told apart by `error.details.error_code`.
  if (error.errorCode === 'enforced_spend_limit_reached') {
    return terminal({ ...fault, code: error.errorCode }, 'spend_cap', 'the organization reached its usage tier’s monthly spend cap: access resumes on the first day of the next month (UTC), or sooner at a higher tier (Claude Console → Limits)', error);
  }
  // A spend limit the organization or workspace set itself: a 400 whose message says so.
  if (status === 400 && /reached your specified (workspace )?API usage limits/i.test(message)) {
    return terminal(fault, 'spend_cap', 'raise or remove the organization’s or workspace’s spend limit in the Claude Console (Billing / Limits)', error);
  }
  if (status === 429) return throttled(fault, retryAfterSeconds(error.headers, now), error);
  if (status === 529 || error.type === 'overloaded_error') return throttled(fault, retryAfterSeconds(error.headers, now), error);
  if (status === 408 || status >= 500) return transient(fault, error);
  if (status === 401) return terminal(fault, 'authentication', KEY, error);
  if (status === 403) return terminal(fault, 'permission', 'the key’s organization or workspace may not use this model or feature: check the key’s workspace and model access', error);
  if (status === 404) return terminal(fault, 'not_found', 'check the model id in the model spec (anthropic:<model-id>) against the models the key can use', error);
  if (status === 413 || isContextTooLong(message)) {
    return terminal(fault, 'context_too_long', 'the conversation exceeds the model’s context window: lower the run’s budgets, compact the context, or choose a model with a larger window', error);
  }
  return terminal(fault, 'invalid_request', 'the request was refused as malformed and would be refused again: this is a bug in the adapter or the agent definition (tool schemas, message order)', error);
}
