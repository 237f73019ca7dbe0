import { InvalidInputError } from './errors.js';
import { LAMBDA_MAX_TIMEOUT_MS } from './limits.js';

/**
 * How long one model call may take, and what follows from it. A model call runs in one Lambda
 * invocation (CallModel, Compact), which AWS stops at 900 s; the step around the call reads the
 * run and writes the turn. So the model timeout is a setting (the construct's `models.timeout`,
 * `MODEL_TIMEOUT_MS` in the function's environment), the function's timeout is derived from it
 * (`modelStepTimeoutMs`), and a turn may ask for only as many output tokens as the model can write
 * within it (`maxTokensWithin`): a call that cannot finish is billed, retried and counted toward
 * the provider's breaker, every time.
 *
 *   |← Lambda timeout = model timeout + MODEL_STEP_MARGIN_MS (≤ 900 s) ───────────────→|
 *   | read run, conversation | model call ≤ model timeout                 | record turn |
 *   (The Task's TimeoutSeconds is the Lambda's plus its own margin: infra/agent-state-machine.ts.)
 */

/** What a model-calling step needs besides the call: its ledger reads and writes, and the handler's early second. */
export const MODEL_STEP_MARGIN_MS = 15_000;
/** @default of the model timeout. */
export const DEFAULT_MODEL_TIMEOUT_MS = 60_000;
/** The longest model timeout a step can hold. */
export const MAX_MODEL_TIMEOUT_MS = LAMBDA_MAX_TIMEOUT_MS - MODEL_STEP_MARGIN_MS;

/**
 * The output pace the caps assume: the Anthropic SDK's own estimate of a long generation (128,000
 * tokens in an hour), by which it refuses a non-streaming request it expects to pass 10 minutes.
 * A slow pace on purpose: a cap must hold for the slowest call, not the average one.
 */
export const OUTPUT_TOKENS_PER_HOUR = 128_000;

/** The most output tokens a call can be sure to write within `timeoutMs`. */
export function maxTokensWithin(timeoutMs: number): number {
  return Math.floor((timeoutMs * OUTPUT_TOKENS_PER_HOUR) / 3_600_000);
}

/** The largest `maxTokensPerTurn` any deployment can serve: what fits the longest model timeout (31,466). */
export const MAX_TOKENS_PER_TURN = maxTokensWithin(MAX_MODEL_TIMEOUT_MS);

/** The Lambda timeout of a step that calls the model once, for a model timeout. */
export function modelStepTimeoutMs(modelTimeoutMs: number): number {
  return modelTimeoutMs + MODEL_STEP_MARGIN_MS;
}

/** Refuses a model timeout no step can hold, naming `setting` and the value. */
export function checkModelTimeout(timeoutMs: number, setting: string): number {
  if (!(Number.isInteger(timeoutMs) && timeoutMs >= 1_000 && timeoutMs <= MAX_MODEL_TIMEOUT_MS)) {
    throw new InvalidInputError(
      `${setting} must be a whole number of milliseconds from 1000 to ${MAX_MODEL_TIMEOUT_MS} (Lambda's 900 s less ${MODEL_STEP_MARGIN_MS} ms for the step around the call), got ${timeoutMs}`,
    );
  }
  return timeoutMs;
}

/**
 * Refuses a per-turn `max_tokens` the model cannot write within `timeoutMs`, naming `setting`, the
 * value and the cap; the message says what to change.
 */
export function checkMaxTokensFit(maxTokens: number, timeoutMs: number, setting: string): void {
  const cap = maxTokensWithin(timeoutMs);
  if (maxTokens > cap) {
    throw new InvalidInputError(
      `${setting} ${maxTokens} cannot be written within the model timeout of ${timeoutMs} ms: at most ${cap} tokens fit (at ${OUTPUT_TOKENS_PER_HOUR} tokens an hour) — lower it, or raise the model timeout (at most ${MAX_MODEL_TIMEOUT_MS} ms: ${MAX_TOKENS_PER_TURN} tokens)`,
    );
  }
}
