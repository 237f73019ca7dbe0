import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { connectionError, isContextTooLong, timedOut, retryAfterSeconds, terminal, throttled, transient, type ModelCall, type ProviderFault } from './provider-errors.js';

const KEY = 'set OPENAI_API_KEY (locally) or the OpenAI API key secret (on AWS) to a valid key';

/**
 * Maps what the `openai` SDK throws to a savepoint error (see provider-errors.ts for the classes).
 * The trap: a spend cap comes as a 429 too — `insufficient_quota` — and retrying it only burns
 * attempts, so it is terminal, unlike the other 429s (`rate_limit_exceeded`).
 * Documented codes: https://platform.openai.com/docs/guides/error-codes
 */
/** `call`: where the call went and its timeout, named in a connection error or a timeout (which have no response to say more). */
export function classifyOpenAIError(error: unknown, now: number = Date.now(), call: ModelCall = {}): Error {
  if (!(error instanceof APIError)) return error instanceof Error ? error : new Error(String(error));
  const body = error.error as { message?: unknown } | undefined;
  const fault: ProviderFault = {
    provider: 'openai',
    status: error.status,
    code: error.code ?? error.type ?? undefined,
    message: typeof body?.message === 'string' ? body.message : error.message,
  };
  if (error instanceof APIUserAbortError) return transient({ ...fault, message: 'aborted by the caller' }, error);
  if (error instanceof APIConnectionTimeoutError) return transient({ ...fault, message: timedOut(call) }, error);
  if (error instanceof APIConnectionError) return transient({ ...fault, message: connectionError(call, error.message) }, error);

  const status = error.status ?? 0;
  if (error.code === 'insufficient_quota' || error.type === 'insufficient_quota' || error.code === 'billing_hard_limit_reached') {
    return terminal(fault, 'spend_cap', 'the OpenAI project is out of credit or over its budget: add credit or raise the project’s usage limit (Settings → Billing / Limits)', error);
  }
  if (status === 429) return throttled(fault, retryAfterSeconds(error.headers, now), error);
  // 503 is how OpenAI says "overloaded" ("The engine is currently overloaded"): same as a 429.
  if (status === 503) return throttled(fault, retryAfterSeconds(error.headers, now), error);
  if (status === 408 || status >= 500) return transient(fault, error);
  if (status === 401) return terminal(fault, 'authentication', KEY, error);
  if (status === 403) return terminal(fault, 'permission', 'the key’s project or organization may not use this model, or the region is not supported: check the project’s model access', error);
  if (status === 404) return terminal(fault, 'not_found', 'check the model id in the model spec (openai:<model-id>) against the models the project can use', error);
  if (error.code === 'context_length_exceeded' || isContextTooLong(fault.message)) {
    return terminal(fault, 'context_too_long', 'the conversation exceeds the model’s context window: lower the run’s budgets, compact the context, or choose a model with a larger window', error);
  }
  return terminal(fault, 'invalid_request', 'the request was refused as malformed and would be refused again: this is a bug in the adapter or the agent definition (tool schemas, message order)', error);
}
