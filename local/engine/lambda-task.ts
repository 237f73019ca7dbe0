/**
 * The Lambda task: what the service does around a Task state's `lambda:invoke` integration. It
 * records TaskScheduled/Started/(Submitted)/Succeeded|Failed|TimedOut, returns the integration's
 * result shape, enforces TimeoutSeconds and HeartbeatSeconds, and for `.waitForTaskToken` waits for
 * the callback on the task's token.
 */
import type { RunOptions } from 'aws-local-stepfunctions';
import { randomUUID } from 'node:crypto';
import { walkStates, type AslDefinition, type TaskInfo } from '../template/asl.js';
import { statesTimeout, TaskFailure, UncatchableError } from './errors.js';
import type { HistoryEvent } from './history.js';
import { untilAborted } from '../../lambdas/shared/deadline.js';
import { isRecord, jsonCopy } from '../../lambdas/shared/json.js';
import type { TaskTokens, TokenOwner } from './task-tokens.js';
import type { Timers } from './timers.js';
import { overPayloadLimit } from '../aws/sfn-payload-limit.js';

const REGION = 'us-east-1';

type Overrides = NonNullable<RunOptions['overrides']>;
export type TaskHandler = NonNullable<Overrides['taskResourceLocalHandlers']>[string];
export type JsonValue = Parameters<TaskHandler>[0];

export interface TaskBinding {
  waitForTaskToken: boolean;
  /**
   * Lambda's concurrency for the function (local/aws/lambda-concurrency.ts): admits the invocation
   * and returns its release, or throws what the Invoke API answers (TooManyRequestsException),
   * which the Task reports as `Lambda.TooManyRequestsException`. @default every invocation admitted
   */
  admit?(): () => void;
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
export async function runLambdaTask<Owner extends TaskOwner>(run: LambdaTaskRun<Owner>, stateName: string, spec: TaskSpec, params: JsonValue): Promise<JsonValue> {
  const { exec, tokens } = run;
  // Synchronous until the first await: claim the token and arm the timeout as the Task starts.
  const claimed = spec.resource === 'invoke.waitForTaskToken' ? tokens.claim(exec, stateName, params) : undefined;
  const resource = { resourceType: 'lambda', resource: spec.resource };
  const signal = exec.ended.signal;
  let open = true; // false once timed out: a late result must not be recorded or returned
  let previous = 0;
  const emit = (type: string, details: Partial<HistoryEvent>) => {
    if (open && !exec.forcedEnd && !signal.aborted) previous = run.record(type, details, previous || exec.lastEntered.get(stateName));
  };
  // Aborted at the Task's timeout; `invocation` is the handler's promise once it is called.
  const cut = new AbortController();
  let invocation: Promise<unknown> | undefined;
  let key = '';
  // Rejected with the interpreter's own States.Timeout at the Task's timeout: what the Task fails with.
  let expire!: (error: unknown) => void;
  const expired = new Promise<never>((_resolve, reject) => (expire = reject));
  const timeOut = (error: string) => {
    emit('TaskTimedOut', { taskTimedOutEventDetails: { ...resource, error, cause: '' } });
    open = false;
    if (claimed) {
      tokens.timeOut(claimed.token);
    }
    cut.abort(new TaskFailure(error, `Task ${stateName} timed out`));
    if (invocation) holdRetryUntilSettled(exec.timedOut, key, invocation);
    if (error === 'States.Timeout') void statesTimeout().then(expire, expire);
  };
  const cancelTimeout = spec.timeoutSeconds ? run.timers.after(spec.timeoutSeconds * 1000, () => timeOut('States.Timeout')) : undefined;
  let cancelHeartbeat: (() => void) | undefined;

  // Once timed out, the attempt below never settles (a late result is not the Task's): `expired` decides.
  const attempt = async (): Promise<JsonValue> => {
    await nextMacrotask(); // lets the event-log consumer record <Type>StateEntered before TaskScheduled
    if (signal.aborted || exec.forcedEnd) throw new UncatchableError('States.Runtime', 'The execution has ended');

    // One serialization each way: the event's text; the handler's own copy is the value that text
    // parses back to, made without parsing it (the payload's strings shared, not unescaped anew).
    const parameters = JSON.stringify(params);
    // The quota covers "input data when scheduling a task" and a task's result (local/aws/sfn-payload-limit.ts).
    if (overPayloadLimit(parameters)) {
      run.exceedsDataLimit(stateName, 'input');
      throw new UncatchableError('States.DataLimitExceeded', 'The task input is over the payload quota');
    }
    const parsed = parsedBack(params, parameters);
    const payload = (isRecord(parsed) ? (parsed.Payload ?? null) : null) as JsonValue;
    // A retry of an attempt that timed out waits for it to end: attempts of one call never overlap.
    // (Keyed by the whole input: hashed only when some attempt of the execution has timed out.)
    key = `${stateName}\n${parameters}`;
    const predecessor = exec.timedOut.size > 0 ? exec.timedOut.get(key) : undefined;
    if (predecessor) await untilAborted(predecessor, signal);
    if (!open) return await untilAborted(new Promise<never>(() => {}), signal);
    emit('TaskScheduled', {
      taskScheduledEventDetails: {
        ...resource,
        region: REGION,
        parameters,
        ...(spec.timeoutSeconds && { timeoutInSeconds: spec.timeoutSeconds }),
        ...(spec.heartbeatSeconds && { heartbeatInSeconds: spec.heartbeatSeconds }),
      },
    });
    emit('TaskStarted', { taskStartedEventDetails: resource });
    if (run.authorizeInvoke) {
      const refused = invokeRefusal(run.authorizeInvoke, isRecord(parsed) ? parsed.FunctionName : undefined);
      if (refused) {
        emit('TaskFailed', { taskFailedEventDetails: { ...resource, ...refused } });
        if (claimed) tokens.delete(claimed.token);
        throw new TaskFailure(refused.error, refused.cause);
      }
    }

    let release: (() => void) | undefined;
    if (spec.binding.admit) {
      try {
        release = spec.binding.admit();
      } catch (e) {
        const throttled = { error: 'Lambda.TooManyRequestsException', cause: e instanceof Error ? e.message : String(e) };
        emit('TaskFailed', { taskFailedEventDetails: { ...resource, ...throttled } });
        if (claimed) tokens.delete(claimed.token);
        throw new TaskFailure(throttled.error, throttled.cause);
      }
    }

    let result: JsonValue;
    let resultText: string;
    try {
      invocation = (async () => spec.binding.invoke(payload, cut.signal))();
      // The function holds its concurrency until it ends, even past the Task's timeout.
      if (release) void invocation.then(release, release);
      const handlerResult = await untilAborted(invocation, signal);
      const payloadText = JSON.stringify(handlerResult ?? null);
      // Lambda answers which version ran: the qualifier of a version ARN, else $LATEST.
      const executed = executedVersion(isRecord(parsed) ? parsed.FunctionName : undefined);
      result = { StatusCode: 200, Payload: parsedBack(handlerResult ?? null, payloadText) as JsonValue, ExecutedVersion: executed };
      // JSON.stringify(result), without serializing the payload a second time.
      resultText = `{"StatusCode":200,"Payload":${payloadText},"ExecutedVersion":${JSON.stringify(executed)}}`;
    } catch (e) {
      if (signal.aborted) throw e;
      if (!open) return await untilAborted(new Promise<never>(() => {}), signal);
      const failure = lambdaFailure(e);
      emit('TaskFailed', { taskFailedEventDetails: { ...resource, ...failure } });
      if (claimed) tokens.delete(claimed.token);
      throw new TaskFailure(failure.error, failure.cause);
    }
    if (!open) return await untilAborted(new Promise<never>(() => {}), signal);
    if (overPayloadLimit(resultText)) {
      run.exceedsDataLimit(stateName, 'result');
      throw new UncatchableError('States.DataLimitExceeded', 'The task result is over the payload quota');
    }

    if (!claimed) {
      emit('TaskSucceeded', { taskSucceededEventDetails: { ...resource, output: resultText, outputDetails: { truncated: false } } });
      return result;
    }

    emit('TaskSubmitted', { taskSubmittedEventDetails: { ...resource, output: resultText, outputDetails: { truncated: false } } });
    let missedHeartbeat = false;
    if (spec.heartbeatSeconds) {
      // The heartbeat clock starts once the handler has returned (TaskSubmitted), not at TaskStarted.
      const ms = spec.heartbeatSeconds * 1000;
      const onMissedHeartbeat = () => {
        timeOut('States.HeartbeatTimeout');
        missedHeartbeat = true;
        claimed.reject(new TaskFailure('States.HeartbeatTimeout', ''));
      };
      cancelHeartbeat = run.timers.after(ms, onMissedHeartbeat);
      const live = tokens.get(claimed.token);
      if (live) {
        live.heartbeat = () => {
          cancelHeartbeat?.();
          cancelHeartbeat = run.timers.after(ms, onMissedHeartbeat);
        };
      }
    }
    try {
      const output = await untilAborted(claimed.promise, signal);
      if (!open) return await untilAborted(new Promise<never>(() => {}), signal);
      emit('TaskSucceeded', { taskSucceededEventDetails: { ...resource, output: JSON.stringify(output), outputDetails: { truncated: false } } });
      return output;
    } catch (e) {
      if (signal.aborted || missedHeartbeat) throw e; // TaskTimedOut is already recorded
      if (!open) return await untilAborted(new Promise<never>(() => {}), signal);
      emit('TaskFailed', { taskFailedEventDetails: { ...resource, error: e instanceof Error ? e.name : 'Error', cause: e instanceof Error ? e.message : '' } });
      throw e;
    }
  };
  try {
    return await Promise.race([attempt(), expired]);
  } finally {
    cancelTimeout?.();
    cancelHeartbeat?.();
  }
}

/** Validates the task bindings against the definition's Task states. */
export function taskSpecs(definition: AslDefinition, tasks: Record<string, TaskBinding>): Map<string, TaskSpec> {
  const specs = new Map<string, TaskSpec>();
  walkStates(definition, (name, state) => {
    if (state.Type !== 'Task') return;
    const resource = /^arn:[^:]+:states:::lambda:(invoke(?:\.waitForTaskToken)?)$/.exec(state.Resource ?? '')?.[1];
    if (resource !== 'invoke' && resource !== 'invoke.waitForTaskToken') throw new Error(`Task ${name}: resource ${state.Resource} is not a Lambda invoke`);
    const binding = tasks[name];
    if (!binding) throw new Error(`No task binding for Task state ${name}`);
    if (binding.waitForTaskToken !== (resource === 'invoke.waitForTaskToken')) {
      throw new Error(`Task ${name}: binding says waitForTaskToken=${binding.waitForTaskToken} but its resource is lambda:${resource}`);
    }
    specs.set(name, { resource, binding, timeoutSeconds: state.TimeoutSeconds, heartbeatSeconds: state.HeartbeatSeconds });
  });
  for (const name of Object.keys(tasks)) {
    if (!specs.has(name)) throw new Error(`Task binding ${name} matches no Task state of the definition`);
  }
  return specs;
}

/** Binds every Task of an extracted state machine to the handler of its SAVEPOINT_STEP. */
export function bindTasks(
  tasks: Record<string, TaskInfo>,
  steps: Record<string, (payload: unknown) => Promise<unknown>>,
): Record<string, TaskBinding> {
  const bindings: Record<string, TaskBinding> = {};
  for (const [stateName, task] of Object.entries(tasks)) {
    const invoke = steps[task.step];
    if (!invoke) throw new Error(`No handler for step ${task.step} (Task ${stateName}, function ${task.functionLogicalId})`);
    bindings[stateName] = { waitForTaskToken: task.waitForTaskToken, invoke };
  }
  return bindings;
}

/**
 * The failure Step Functions reports when the Lambda API refuses the invoke: its role may not
 * (403: error `Lambda.AWSLambdaException`), or the function or version is not there (404: error
 * `Lambda.ResourceNotFoundException`, e.g. a version deleted under a live execution); the Lambda
 * service's message as the cause.
 */
function invokeRefusal(authorize: (functionArn: string) => void, functionName: unknown): { error: string; cause: string } | undefined {
  try {
    authorize(functionArnOf(typeof functionName === 'string' ? functionName : ''));
    return undefined;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const [error, status, code] = e instanceof Error && e.name === 'ResourceNotFoundException' ? ['Lambda.ResourceNotFoundException', 404, 'ResourceNotFoundException'] : ['Lambda.AWSLambdaException', 403, 'AccessDeniedException'];
    return { error, cause: `${message} (Service: AWSLambda; Status Code: ${status}; Error Code: ${code}; Request ID: ${randomUUID()}; Proxy: null)` };
  }
}

/** The version Lambda reports it ran for an invoke of `functionName`: a numeric qualifier, else `$LATEST`. */
function executedVersion(functionName: unknown): string {
  const qualifier = typeof functionName === 'string' ? /:(\d+)$/.exec(functionName)?.[1] : undefined;
  return qualifier ?? '$LATEST';
}

/** A Task's FunctionName (a name, `name:qualifier`, or an ARN) as the ARN Lambda authorizes. */
export function functionArnOf(functionName: string): string {
  return functionName.startsWith('arn:') ? functionName : `arn:aws:lambda:${REGION}:000000000000:function:${functionName}`;
}

/** The service's error shape for a Lambda function error: error = errorType, cause = the JSON body. */
function lambdaFailure(e: unknown): { error: string; cause: string } {
  const err = e instanceof Error ? e : new Error(String(e));
  const errorType = err.name || 'Error';
  return { error: errorType, cause: JSON.stringify({ errorType, errorMessage: err.message, trace: err.stack?.split('\n') ?? [] }) };
}

/** Registers a timed-out invocation under `key` until it settles (the next attempt of the same call waits on it). */
function holdRetryUntilSettled(timedOut: Map<string, Promise<void>>, key: string, invocation: Promise<unknown>): void {
  const settled: Promise<void> = invocation.then(
    () => undefined,
    () => undefined,
  ).finally(() => {
    if (timedOut.get(key) === settled) timedOut.delete(key);
  });
  timedOut.set(key, settled);
}


/**
 * `JSON.parse(text)`, where `text` is `JSON.stringify(value)`: the same copy, built from the value
 * (lambdas/shared/json.ts `jsonCopy`); a value with no JSON (text undefined) fails as the parse did.
 */
function parsedBack(value: unknown, text: string | undefined): unknown {
  return text === undefined ? JSON.parse(text as unknown as string) : jsonCopy(value);
}

function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
