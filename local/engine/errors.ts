/** The engine's error classes: the service's error codes, and the flags the interpreter reads. */

/** An error whose `name` is the AWS error code (the endpoint returns it as `__type`). */
export class LocalSfnError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** An error the library must neither retry nor catch (same flags as its own States.Runtime). */
export class TerminalError extends Error {
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
