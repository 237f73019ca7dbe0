/** The engine's error classes: the service's error codes (local/aws/sfn-error.ts), and the flags the interpreter reads. */
import './polyfills.js';
export { LocalSfnError } from '../aws/sfn-error.js';
/**
 * A States error no Retry or Catch may handle (States.Runtime, States.DataLimitExceeded): the
 * execution fails. Same flags as the library's own States.Runtime. Not the harness's
 * `TerminalError` (lambdas/shared/errors.ts), which is a step's failure that Catch does route.
 */
export declare class UncatchableError extends Error {
    constructor(name: string, message: string);
    get isRetryable(): boolean;
    get isCatchable(): boolean;
}
/** A task failure: `name` is what Retry/Catch match, `message` becomes the Catch output's Cause. */
export declare class TaskFailure extends Error {
    constructor(name: string, cause: string);
}
/**
 * A new instance of the interpreter's own States.Timeout error. The engine times each Task itself,
 * on its clock (engine/lambda-task.ts), and fails it with this: only an instance of that class is
 * exempt from a `States.TaskFailed` retrier or catcher, as AWS exempts a timeout ("States.TaskFailed
 * … matches any known error name except for States.Timeout"), and the library does not export it.
 * So it is taken from the library once per process: a one-state machine whose Task times out after
 * 1 ms, whose failure's cause is that error.
 */
export declare function statesTimeout(): Promise<Error>;
