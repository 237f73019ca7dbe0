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
export declare const MODEL_STEP_MARGIN_MS = 15000;
/** @default of the model timeout. */
export declare const DEFAULT_MODEL_TIMEOUT_MS = 60000;
/** The longest model timeout a step can hold. */
export declare const MAX_MODEL_TIMEOUT_MS: number;
/**
 * The output pace the caps assume: the Anthropic SDK's own estimate of a long generation (128,000
 * tokens in an hour), by which it refuses a non-streaming request it expects to pass 10 minutes.
 * A slow pace on purpose: a cap must hold for the slowest call, not the average one.
 */
export declare const OUTPUT_TOKENS_PER_HOUR = 128000;
/** The most output tokens a call can be sure to write within `timeoutMs`. */
export declare function maxTokensWithin(timeoutMs: number): number;
/** The largest `maxTokensPerTurn` any deployment can serve: what fits the longest model timeout (31,466). */
export declare const MAX_TOKENS_PER_TURN: number;
/** The Lambda timeout of a step that calls the model once, for a model timeout. */
export declare function modelStepTimeoutMs(modelTimeoutMs: number): number;
/** Refuses a model timeout no step can hold, naming `setting` and the value. */
export declare function checkModelTimeout(timeoutMs: number, setting: string): number;
/**
 * Refuses a per-turn `max_tokens` the model cannot write within `timeoutMs`, naming `setting`, the
 * value and the cap; the message says what to change.
 */
export declare function checkMaxTokensFit(maxTokens: number, timeoutMs: number, setting: string): void;
