/** The engine's error classes: the service's error codes (local/aws/sfn-error.ts), and the flags the interpreter reads. */
import './polyfills.js';
import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';

export { LocalSfnError } from '../aws/sfn-error.js';

/**
 * A States error no Retry or Catch may handle (States.Runtime, States.DataLimitExceeded): the
 * execution fails. Same flags as the library's own States.Runtime. Not the harness's
 * `TerminalError` (lambdas/shared/errors.ts), which is a step's failure that Catch does route.
 */
export class UncatchableError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
  get isRetryable(): boolean {
    return false;
  }
  get isCatchable(): boolean {
    return false;
  }
}

/** A task failure: `name` is what Retry/Catch match, `message` becomes the Catch output's Cause. */
export class TaskFailure extends Error {
  constructor(name: string, cause: string) {
    super(cause);
    this.name = name;
  }
}

let statesTimeoutClass: Promise<new () => Error> | undefined;

/**
 * A new instance of the interpreter's own States.Timeout error. The engine times each Task itself,
 * on its clock (engine/lambda-task.ts), and fails it with this: only an instance of that class is
 * exempt from a `States.TaskFailed` retrier or catcher, as AWS exempts a timeout ("States.TaskFailed
 * … matches any known error name except for States.Timeout"), and the library does not export it.
 * So it is taken from the library once per process: a one-state machine whose Task times out after
 * 1 ms, whose failure's cause is that error.
 */
export function statesTimeout(): Promise<Error> {
  statesTimeoutClass ??= (async () => {
    const probe: StateMachineDefinition = {
      StartAt: 'Probe',
      States: { Probe: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:000000000000:function:probe', TimeoutSeconds: 0.001, End: true } },
    };
    const { result } = new StateMachine(probe, { validationOptions: { noValidate: true } }).run({}, { overrides: { taskResourceLocalHandlers: { Probe: () => new Promise(() => {}) } } });
    const cause = await result.then(
      () => undefined,
      (error: unknown) => (error instanceof Error ? error.cause : undefined),
    );
    if (!(cause instanceof Error) || cause.name !== 'States.Timeout') throw new Error('aws-local-stepfunctions did not time its probe Task out with States.Timeout');
    return cause.constructor as new () => Error;
  })();
  return statesTimeoutClass.then((StatesTimeout) => new StatesTimeout());
}
// Taken as the engine loads, on real timers: ready before the first Task times out, whatever timers a test fakes later.
statesTimeout().catch(() => undefined);
