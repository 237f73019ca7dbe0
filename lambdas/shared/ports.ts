/**
 * What the steps need from the outside, as small interfaces: the handlers bind them to the AWS SDK
 * (lambdas/adapters/), tests and the local engine bind them to the same adapters on loopback.
 */

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** The task-token callbacks of Step Functions (`SendTaskSuccess` / `SendTaskFailure`). */
export interface TaskCallbacks {
  /** Resolves `false` when the token is no longer waited on (the execution moved on or ended). */
  succeed(taskToken: string, output: unknown): Promise<boolean>;
  fail(taskToken: string, error: string, cause: string): Promise<boolean>;
}

export interface Executions {
  isRunning(executionArn: string): Promise<boolean>;
  /** `StopExecution` (a migration stops the execution it takes the run from); an ended one is left alone. */
  stop(executionArn: string, error: string, cause: string): Promise<void>;
  /** How many history events the execution has, counted as Step Functions counts them (continue-as-new). */
  eventCount(executionArn: string): Promise<number>;
}
