/**
 * The Lambda task: what the service does around a Task state's `lambda:invoke` integration. It
 * records TaskScheduled/Started/(Submitted)/Succeeded|Failed|TimedOut, returns the integration's
 * result shape, enforces TimeoutSeconds and HeartbeatSeconds, and for `.waitForTaskToken` waits for
 * the callback on the task's token.
 */
import type { RunOptions } from 'aws-local-stepfunctions';
import { type AslDefinition, type TaskInfo } from '../template/asl.js';
import type { HistoryEvent } from './history.js';
import type { TaskTokens, TokenOwner } from './task-tokens.js';
import type { Timers } from './timers.js';
type Overrides = NonNullable<RunOptions['overrides']>;
export type TaskHandler = NonNullable<Overrides['taskResourceLocalHandlers']>[string];
export type JsonValue = Parameters<TaskHandler>[0];
export interface TaskBinding {
    waitForTaskToken: boolean;
    /**
     * Runs the step's handler with the Lambda Payload; for waitForTaskToken the token is inside it.
     * `signal` aborts when the Task's TimeoutSeconds passes: the invocation is to stop, as on AWS,
     * where the function's own timeout (shorter than the Task's) has killed it by then.
     */
    invoke(payload: unknown, signal: AbortSignal): Promise<unknown>;
}
export interface TaskSpec {
    resource: 'invoke' | 'invoke.waitForTaskToken';
    timeoutSeconds?: number;
    heartbeatSeconds?: number;
    binding: TaskBinding;
}
/** What a running task reads of its execution. */
export interface TaskOwner extends TokenOwner {
    /** Aborted once the execution has ended: rejects in-flight task promises so no timer is left behind. */
    readonly ended: AbortController;
    /** Set when something outside the interpreter ends the run. */
    readonly forcedEnd?: unknown;
    /** Id of the latest <Type>StateEntered per state name: TaskScheduled links back to it. */
    readonly lastEntered: Map<string, number>;
    /**
     * Invocations still running after their Task timed out, by state name and parameters: the retry
     * (same state, same parameters) starts only once its predecessor has settled.
     */
    readonly timedOut: Map<string, Promise<void>>;
}
/** One task's view of the engine: its execution, the engine's tokens and its history. */
export interface LambdaTaskRun<Owner extends TaskOwner> {
    exec: Owner;
    tokens: TaskTokens<Owner, JsonValue>;
    /** Where the Task's timeout and heartbeat timers run (the engine's clock). */
    timers: Timers;
    /** Appends one event to the execution's history and returns its id. */
    record(type: string, details: Partial<HistoryEvent>, previousEventId?: number): number;
    /** The state machine role's IAM: throws (AccessDeniedException) to refuse `lambda:InvokeFunction` on a function ARN. */
    authorizeInvoke?: (functionArn: string) => void;
    /** Ends the execution with States.DataLimitExceeded: the task's input or result is over the payload quota. */
    exceedsDataLimit(stateName: string, what: 'input' | 'result'): void;
}
/**
 * Stands in for the Lambda integration. Records TaskScheduled/Started/(Submitted)/Succeeded|Failed,
 * returns the integration's result shape, and for .waitForTaskToken waits for the callback.
 *
 * It alone times the Task out, on `run.timers` (the interpreter's own timer is lifted:
 * engine/definition.ts liftTaskTimeouts). At TimeoutSeconds:
 *
 *   TaskTimedOut recorded ─► the invocation's signal aborted ─► the Task fails with States.Timeout
 *                           └► a retry of the same call waits until this invocation has ended
 */
export declare function runLambdaTask<Owner extends TaskOwner>(run: LambdaTaskRun<Owner>, stateName: string, spec: TaskSpec, params: JsonValue): Promise<JsonValue>;
/** Validates the task bindings against the definition's Task states. */
export declare function taskSpecs(definition: AslDefinition, tasks: Record<string, TaskBinding>): Map<string, TaskSpec>;
/** Binds every Task of an extracted state machine to the handler of its SAVEPOINT_STEP. */
export declare function bindTasks(tasks: Record<string, TaskInfo>, steps: Record<string, (payload: unknown) => Promise<unknown>>): Record<string, TaskBinding>;
/** A Task's FunctionName (a name, `name:qualifier`, or an ARN) as the ARN Lambda authorizes. */
export declare function functionArnOf(functionName: string): string;
export {};
