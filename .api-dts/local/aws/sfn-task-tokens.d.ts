import { LocalSfnError } from './sfn-error.js';
/** Throws InvalidToken for a token no callback may carry. */
export declare function assertTokenLength(token: string): void;
/** A callback's output, parsed; InvalidOutput when it is not JSON or over the payload quota. */
export declare function parseTaskOutput(output: string): unknown;
/** What a callback on a token no Task waits on is answered: TaskTimedOut when its Task timed out, else TaskDoesNotExist. */
export declare function taskGone(timedOut: boolean): LocalSfnError;
