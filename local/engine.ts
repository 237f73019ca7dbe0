/**
 * An in-process Step Functions engine for one state machine and many executions.
 * aws-local-stepfunctions interprets the ASL; this class adds what the service adds around it:
 * executions with names and ARNs, the GetExecutionHistory event log, Lambda-invoke integration
 * results, and task tokens for `.waitForTaskToken` tasks. Like a state machine with published
 * versions, it may hold several (definition, task handlers) pairs: a new execution starts on the
 * latest, a live one runs to its end on the version it started on (local/versions.ts).
 */
import './polyfills.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { ExecutionError, ExecutionTimeoutError, StateMachine, type RunOptions, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { walkStates, type AslDefinition, type AslState, type TaskInfo } from './asl.js';

/** Step Functions' quota for execution input, state output and task-token output. */
export const PAYLOAD_LIMIT_BYTES = 256 * 1024;

/**
 * Longest delay Node's setTimeout accepts (~24.8 days). Anything longer fires after 1 ms, so AWS's
 * 99999999 s maxima must be clamped to this before the library arms its timers.
 */
const MAX_TIMER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** Definitions (as JSON) that already passed the library's validation in this process. */
const validated = new Set<string>();

const REGION = 'us-east-1';
const ROLE_ARN = 'arn:aws:iam::000000000000:role/savepoint-local';
const MAX_TOKEN_LENGTH = 2048;

type Overrides = NonNullable<RunOptions['overrides']>;
type TaskHandler = NonNullable<Overrides['taskResourceLocalHandlers']>[string];
type JsonValue = Parameters<TaskHandler>[0];

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED' | 'TIMED_OUT';

export interface TaskBinding {
  waitForTaskToken: boolean;
  /** Runs the step's handler with the Lambda Payload; for waitForTaskToken the token is inside it. */
  invoke(payload: unknown): Promise<unknown>;
}

export interface LocalEngineOptions {
  definition: AslDefinition;
  stateMachineArn: string;
  tasks: Record<string, TaskBinding>;
  /** Per state name, ms to wait before each retry (replaces IntervalSeconds/backoff/jitter). */
  retryIntervalOverrides?: Record<string, number | number[]>;
  /** Per Wait state name, ms to wait instead of its Seconds/Timestamp. */
  waitTimeOverrides?: Record<string, number>;
  now?: () => Date;
  /**
   * Definitions (as JSON) known to pass the library's validation: a disk-backed set lets a new
   * process skip it (~150 ms and ~15 MB). @default this process's memory
   */
  validated?: { has(text: string): boolean; add(text: string): void };
}

export interface ExecutionDescription {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  status: ExecutionStatus;
  startDate: Date;
  stopDate?: Date;
  input: string;
  output?: string;
  error?: string;
  cause?: string;
  stateMachineVersionArn?: string;
}

export type ExecutionListItem = Pick<ExecutionDescription, 'executionArn' | 'stateMachineArn' | 'name' | 'status' | 'startDate' | 'stopDate'>;

interface Truncated {
  truncated: boolean;
}
interface TaskResource {
  resourceType: string;
  resource: string;
}
interface ErrorDetails {
  error?: string;
  cause?: string;
}

/** One event in the shape of the GetExecutionHistory API (only the fields this engine emits). */
export interface HistoryEvent {
  id: number;
  previousEventId: number;
  timestamp: Date;
  type: string;
  executionStartedEventDetails?: { input: string; inputDetails: Truncated; roleArn: string };
  executionSucceededEventDetails?: { output: string; outputDetails: Truncated };
  executionFailedEventDetails?: ErrorDetails;
  executionAbortedEventDetails?: ErrorDetails;
  executionTimedOutEventDetails?: ErrorDetails;
  stateEnteredEventDetails?: { name: string; input: string; inputDetails: Truncated };
  stateExitedEventDetails?: { name: string; output: string; outputDetails: Truncated };
  taskScheduledEventDetails?: TaskResource & { region: string; parameters: string; timeoutInSeconds?: number; heartbeatInSeconds?: number };
  taskStartedEventDetails?: TaskResource;
  taskSubmittedEventDetails?: TaskResource & { output: string; outputDetails: Truncated };
  taskSucceededEventDetails?: TaskResource & { output: string; outputDetails: Truncated };
  taskFailedEventDetails?: TaskResource & ErrorDetails;
  taskTimedOutEventDetails?: TaskResource & ErrorDetails;
  mapIterationStartedEventDetails?: { name: string; index: number };
  mapIterationSucceededEventDetails?: { name: string; index: number };
  mapIterationFailedEventDetails?: { name: string; index: number };
}

export type HistoryListener = (event: HistoryEvent & { executionArn: string }) => void;

/** An error whose `name` is the AWS error code (the endpoint returns it as `__type`). */
export class LocalSfnError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** An error the library must neither retry nor catch (same flags as its own States.Runtime). */
class TerminalError extends Error {
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
class TaskFailure extends Error {
  constructor(name: string, cause: string) {
    super(cause);
    this.name = name;
  }
}

type Outcome =
  | { status: 'SUCCEEDED'; output: string }
  | { status: 'FAILED' | 'ABORTED' | 'TIMED_OUT'; error?: string; cause?: string };

/** One published version: its definition, interpreted, and the Task handlers of its code. */
interface Version {
  number: number;
  definition: AslDefinition;
  machine: StateMachine;
  specs: Map<string, TaskSpec>;
  description?: string;
}

interface Execution {
  arn: string;
  /** The version it started on and runs to its end. */
  version: Version;
  name: string;
  input: string;
  startDate: Date;
  stopDate?: Date;
  status: ExecutionStatus;
  output?: string;
  error?: string;
  cause?: string;
  events: HistoryEvent[];
  /** Id of the latest <Type>StateEntered per state name: TaskScheduled links back to it. */
  lastEntered: Map<string, number>;
  /** The last StateExited output and its text: the next state's input, the same object. */
  lastOutput?: { value: unknown; text: string };
  /** A token read from $$.Task.Token that no Task has claimed yet (re-reads return the same one). */
  unclaimedToken?: string;
  /** Set when something outside the interpreter (StopExecution, a payload limit, close) ends the run. */
  forcedEnd?: Outcome;
  /** Aborted once the execution has ended: rejects in-flight task promises so no timer is left behind. */
  ended: AbortController;
  abortRun: () => void;
  done: Promise<void>;
}

interface PendingToken {
  exec: Execution;
  promise: Promise<JsonValue>;
  resolve: (output: JsonValue) => void;
  reject: (error: Error) => void;
  /** Set while the task waits for its callback; restarts the HeartbeatSeconds timer. */
  heartbeat?: () => void;
}

interface TaskSpec {
  resource: 'invoke' | 'invoke.waitForTaskToken';
  timeoutSeconds?: number;
  heartbeatSeconds?: number;
  binding: TaskBinding;
}

export class LocalEngine {
  readonly stateMachineArn: string;
  /** Version 1, then each `publishVersion`: new executions start on the last. */
  private readonly versions: Version[] = [];
  private readonly executions = new Map<string, Execution>();
  private readonly tokens = new Map<string, PendingToken>();
  private readonly timedOutTokens = new Set<string>();
  private readonly listeners = new Set<HistoryListener>();
  private readonly overrides: Overrides;
  private readonly now: () => Date;
  private readonly createdAt: Date;
  /** Definitions already validated (in this process, or remembered on disk by the template cache). */
  private readonly validated: NonNullable<LocalEngineOptions['validated']>;
  private closed = false;

  constructor(opts: LocalEngineOptions) {
    this.stateMachineArn = opts.stateMachineArn;
    this.now = opts.now ?? (() => new Date());
    this.createdAt = this.now();
    this.validated = opts.validated ?? validated;
    this.publishVersion({ definition: opts.definition, tasks: opts.tasks });
    this.overrides = {
      ...(opts.retryIntervalOverrides && { retryIntervalOverrides: opts.retryIntervalOverrides }),
      ...(opts.waitTimeOverrides && { waitTimeOverrides: opts.waitTimeOverrides }),
    };
  }

  /** The latest version's definition: what a new execution runs. */
  get definition(): AslDefinition {
    return this.versions.at(-1)!.definition;
  }

  // ---- versions --------------------------------------------------------------------------------

  /**
   * Publishes a version (as a deploy publishes a state machine version behind the alias): new
   * executions start on it; executions already running keep their own. Returns its number.
   */
  publishVersion(version: { definition: AslDefinition; tasks: Record<string, TaskBinding>; description?: string }): number {
    if (this.closed) throw new LocalSfnError('StateMachineDeleting', 'The local engine is closed');
    assertSupported(version.definition);
    const runnable = clampTimers(version.definition);
    const specs = taskSpecs(runnable, version.tasks);
    // The library validates with asl-validator (~150 ms a time); once per distinct definition is enough.
    const text = JSON.stringify(runnable);
    const machine = new StateMachine(runnable as unknown as StateMachineDefinition, { validationOptions: { noValidate: this.validated.has(text) } });
    this.validated.add(text);
    const number = this.versions.length + 1;
    this.versions.push({ number, definition: version.definition, machine, specs, ...(version.description !== undefined && { description: version.description }) });
    return number;
  }

  /** The version an execution runs (1 for every execution of an engine that never published another). */
  versionOf(executionArn: string): { number: number; stateMachineVersionArn: string; definition: AslDefinition; description?: string } {
    const { version } = this.get(executionArn);
    return { number: version.number, stateMachineVersionArn: `${this.stateMachineArn}:${version.number}`, definition: version.definition, ...(version.description !== undefined && { description: version.description }) };
  }

  // ---- executions ------------------------------------------------------------------------------

  /** Starts on the newest version, or on `version` (StartExecution with a version ARN). */
  startExecution(req: { name?: string; input?: unknown; version?: number } = {}): { executionArn: string; startDate: Date } {
    if (this.closed) throw new LocalSfnError('StateMachineDeleting', 'The local engine is closed');
    const name = req.name ?? randomUUID();
    validateName(name);
    const { text, value } = parseExecutionInput(req.input);
    const arn = `${this.stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;

    // StartExecution is idempotent for a RUNNING execution with the same name and input (STANDARD).
    const existing = this.executions.get(arn);
    if (existing) {
      if (existing.status === 'RUNNING' && existing.input === text) return { executionArn: arn, startDate: existing.startDate };
      throw new LocalSfnError('ExecutionAlreadyExists', `Execution Already Exists: '${arn}'`);
    }

    const version = req.version === undefined ? this.versions.at(-1)! : this.versions[req.version - 1];
    if (!version) throw new LocalSfnError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${this.stateMachineArn}:${req.version}'`);
    const exec: Execution = {
      arn,
      version,
      name,
      input: text,
      startDate: this.now(),
      status: 'RUNNING',
      events: [],
      lastEntered: new Map(),
      ended: new AbortController(),
      abortRun: () => {},
      done: Promise.resolve(),
    };
    this.executions.set(arn, exec);
    this.record(exec, 'ExecutionStarted', { executionStartedEventDetails: { input: text, inputDetails: { truncated: false }, roleArn: ROLE_ARN } });

    const handlers: Record<string, TaskHandler> = {};
    for (const [stateName, spec] of version.specs) handlers[stateName] = (params) => this.runTask(exec, stateName, spec, params);

    const run = version.machine.run(value, {
      overrides: { ...this.overrides, taskResourceLocalHandlers: handlers },
      context: this.contextFor(exec),
      noThrowOnAbort: true,
    });
    exec.abortRun = run.abort;
    exec.done = this.settle(exec, run.result, this.consume(exec, run.eventLogs));
    return { executionArn: arn, startDate: exec.startDate };
  }

  describeExecution(arn: string): ExecutionDescription {
    const e = this.get(arn);
    return {
      executionArn: e.arn,
      stateMachineArn: this.stateMachineArn,
      name: e.name,
      status: e.status,
      startDate: e.startDate,
      ...(e.stopDate && { stopDate: e.stopDate }),
      input: e.input,
      ...(e.output !== undefined && { output: e.output }),
      ...(e.error !== undefined && { error: e.error }),
      ...(e.cause !== undefined && { cause: e.cause }),
      // As the service does for an execution started on a version (only once there are several).
      ...(this.versions.length > 1 && { stateMachineVersionArn: `${this.stateMachineArn}:${e.version.number}` }),
    };
  }

  listExecutions(opts: { statusFilter?: ExecutionStatus; maxResults?: number; nextToken?: string } = {}): {
    executions: ExecutionListItem[];
    nextToken?: string;
  } {
    const all = [...this.executions.values()]
      .reverse() // newest first, like the service
      .filter((e) => !opts.statusFilter || e.status === opts.statusFilter)
      .map(({ arn, name, status, startDate, stopDate }) => ({
        executionArn: arn,
        stateMachineArn: this.stateMachineArn,
        name,
        status,
        startDate,
        ...(stopDate && { stopDate }),
      }));
    const page = paginate(all, opts.maxResults || 1000, opts.nextToken);
    return { executions: page.items, ...(page.nextToken && { nextToken: page.nextToken }) };
  }

  /** Aborts the run, rejects its pending task tokens and resolves once it is recorded as ABORTED. */
  async stopExecution(arn: string, opts: { error?: string; cause?: string } = {}): Promise<{ stopDate: Date }> {
    const exec = this.get(arn);
    this.forceEnd(exec, { status: 'ABORTED', error: opts.error, cause: opts.cause });
    await exec.done;
    return { stopDate: exec.stopDate! };
  }

  getExecutionHistory(arn: string, opts: { reverseOrder?: boolean } = {}): HistoryEvent[] {
    const events = this.get(arn).events.slice();
    return opts.reverseOrder ? events.reverse() : events;
  }

  /** The id of the execution's newest event, i.e. how many it has: what `GetExecutionHistory { reverseOrder, maxResults: 1 }` answers. */
  eventCount(arn: string): number {
    return this.get(arn).events.length;
  }

  async waitForExecution(arn: string): Promise<ExecutionDescription> {
    await this.get(arn).done;
    return this.describeExecution(arn);
  }

  describeStateMachine(): { stateMachineArn: string; name: string; status: 'ACTIVE'; definition: string; roleArn: string; type: 'STANDARD'; creationDate: Date } {
    return {
      stateMachineArn: this.stateMachineArn,
      name: this.stateMachineArn.split(':').pop()!,
      status: 'ACTIVE',
      definition: JSON.stringify(this.definition),
      roleArn: ROLE_ARN,
      type: 'STANDARD',
      creationDate: this.createdAt,
    };
  }

  on(listener: HistoryListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Aborts every running execution and waits until each has settled; no timer or token is left. */
  async close(): Promise<void> {
    this.closed = true;
    for (const exec of this.executions.values()) {
      this.forceEnd(exec, { status: 'ABORTED', error: 'LocalEngine.Closed', cause: 'The local engine was closed' });
    }
    await Promise.all([...this.executions.values()].map((e) => e.done));
    this.listeners.clear();
  }

  // ---- task tokens -----------------------------------------------------------------------------

  sendTaskSuccess(token: string, output: string): void {
    let value: JsonValue;
    try {
      value = JSON.parse(output) as JsonValue;
    } catch {
      throw new LocalSfnError('InvalidOutput', 'Invalid Output: the output is not valid JSON');
    }
    if (byteLength(output) > PAYLOAD_LIMIT_BYTES) throw new LocalSfnError('InvalidOutput', `Invalid Output: larger than ${PAYLOAD_LIMIT_BYTES} bytes`);
    this.takeToken(token).resolve(value);
  }

  sendTaskFailure(token: string, error?: string, cause?: string): void {
    this.takeToken(token).reject(new TaskFailure(error ?? '', cause ?? ''));
  }

  sendTaskHeartbeat(token: string): void {
    this.liveToken(token).heartbeat?.();
  }

  private liveToken(token: string): PendingToken {
    if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw new LocalSfnError('InvalidToken', 'Invalid Token');
    const pending = this.tokens.get(token);
    if (pending && pending.exec.status === 'RUNNING') return pending;
    if (this.timedOutTokens.has(token)) throw new LocalSfnError('TaskTimedOut', 'Task Timed Out');
    throw new LocalSfnError('TaskDoesNotExist', 'Task does not exist anymore (unknown, already completed, or its execution ended)');
  }

  private takeToken(token: string): PendingToken {
    const pending = this.liveToken(token);
    this.tokens.delete(token);
    return pending;
  }

  /** Backs `$$.Task.Token`: mints on first read, and registers the promise right away so a callback
   *  that arrives before the task starts waiting is not lost. */
  private tokenFor(exec: Execution): string {
    if (exec.unclaimedToken) return exec.unclaimedToken;
    const token = 'AQ' + randomBytes(96).toString('base64url');
    if (exec.status !== 'RUNNING') return token; // never registered: any callback gets TaskDoesNotExist
    let resolve!: PendingToken['resolve'];
    let reject!: PendingToken['reject'];
    const promise = new Promise<JsonValue>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => {}); // a token nobody awaits any more must not become an unhandled rejection
    this.tokens.set(token, { exec, promise, resolve, reject });
    exec.unclaimedToken = token;
    return token;
  }

  /** Runs synchronously inside the library's Parameters processing, before any other state can mint. */
  private claimToken(exec: Execution, stateName: string, params: JsonValue): PendingToken & { token: string } {
    const token = exec.unclaimedToken;
    const pending = token === undefined ? undefined : this.tokens.get(token);
    if (token === undefined || !pending || !containsString(params, token)) {
      throw new TerminalError('States.Runtime', `Task ${stateName} is .waitForTaskToken but its Parameters do not contain $$.Task.Token`);
    }
    exec.unclaimedToken = undefined;
    return { ...pending, token };
  }

  private dropTokens(exec: Execution, reason: Error): void {
    for (const [token, pending] of this.tokens) {
      if (pending.exec !== exec) continue;
      this.tokens.delete(token);
      pending.reject(reason);
    }
    exec.unclaimedToken = undefined;
  }

  // ---- the Task override -----------------------------------------------------------------------

  /**
   * Stands in for the Lambda integration. Records TaskScheduled/Started/(Submitted)/Succeeded|Failed,
   * returns the integration's result shape, and for .waitForTaskToken waits for the callback.
   */
  private async runTask(exec: Execution, stateName: string, spec: TaskSpec, params: JsonValue): Promise<JsonValue> {
    // Synchronous until the first await: claim the token and arm the timeout before the library arms
    // its own (same delay, so ours fires first and can record TaskTimedOut; the library's own timer
    // then rejects with its genuine States.Timeout, which States.TaskFailed does not match).
    const claimed = spec.resource === 'invoke.waitForTaskToken' ? this.claimToken(exec, stateName, params) : undefined;
    const resource = { resourceType: 'lambda', resource: spec.resource };
    const signal = exec.ended.signal;
    let open = true; // false once timed out: a late result must not be recorded or returned
    let previous = 0;
    const emit = (type: string, details: Partial<HistoryEvent>) => {
      if (open && !exec.forcedEnd && !signal.aborted) previous = this.record(exec, type, details, previous || exec.lastEntered.get(stateName));
    };
    const timeOut = (error: string) => {
      emit('TaskTimedOut', { taskTimedOutEventDetails: { ...resource, error, cause: '' } });
      open = false;
      if (claimed) {
        this.tokens.delete(claimed.token);
        this.timedOutTokens.add(claimed.token);
      }
    };
    const timeoutTimer = spec.timeoutSeconds ? setTimeout(() => timeOut('States.Timeout'), spec.timeoutSeconds * 1000) : undefined;
    let heartbeatTimer: NodeJS.Timeout | undefined;

    try {
      await nextMacrotask(); // lets the event-log consumer record <Type>StateEntered before TaskScheduled
      if (signal.aborted || exec.forcedEnd) throw new TerminalError('States.Runtime', 'The execution has ended');

      // One serialization each way: the event's text, parsed back as the handler's own copy.
      const parameters = JSON.stringify(params);
      const parsed: unknown = JSON.parse(parameters);
      const payload = (isRecord(parsed) ? (parsed.Payload ?? null) : null) as JsonValue;
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

      let result: JsonValue;
      let resultText: string;
      try {
        const handlerResult = await untilEnded(signal, (async () => spec.binding.invoke(payload))());
        const payloadText = JSON.stringify(handlerResult ?? null);
        result = { StatusCode: 200, Payload: JSON.parse(payloadText) as JsonValue, ExecutedVersion: '$LATEST' };
        // JSON.stringify(result), without serializing the payload a second time.
        resultText = `{"StatusCode":200,"Payload":${payloadText},"ExecutedVersion":"$LATEST"}`;
      } catch (e) {
        if (signal.aborted || !open) throw e;
        const failure = lambdaFailure(e);
        emit('TaskFailed', { taskFailedEventDetails: { ...resource, ...failure } });
        if (claimed) this.tokens.delete(claimed.token);
        throw new TaskFailure(failure.error, failure.cause);
      }
      if (!open) return await untilEnded(signal, new Promise<never>(() => {}));

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
        heartbeatTimer = setTimeout(onMissedHeartbeat, ms);
        const live = this.tokens.get(claimed.token);
        if (live) {
          live.heartbeat = () => {
            clearTimeout(heartbeatTimer);
            heartbeatTimer = setTimeout(onMissedHeartbeat, ms);
          };
        }
      }
      try {
        const output = await untilEnded(signal, claimed.promise);
        if (!open) return await untilEnded(signal, new Promise<never>(() => {}));
        emit('TaskSucceeded', { taskSucceededEventDetails: { ...resource, output: JSON.stringify(output), outputDetails: { truncated: false } } });
        return output;
      } catch (e) {
        if (signal.aborted || missedHeartbeat) throw e; // TaskTimedOut is already recorded
        if (!open) return await untilEnded(signal, new Promise<never>(() => {}));
        emit('TaskFailed', { taskFailedEventDetails: { ...resource, error: e instanceof Error ? e.name : 'Error', cause: e instanceof Error ? e.message : '' } });
        throw e;
      }
    } finally {
      clearTimeout(timeoutTimer);
      clearTimeout(heartbeatTimer);
    }
  }

  // ---- run lifecycle ---------------------------------------------------------------------------

  private contextFor(exec: Execution): RunOptions['context'] {
    const tokenFor = () => this.tokenFor(exec);
    return {
      Execution: { Id: exec.arn, Name: exec.name, RoleArn: ROLE_ARN, StartTime: exec.startDate.toISOString() },
      StateMachine: { Id: this.stateMachineArn, Name: this.stateMachineArn.split(':').pop() },
      // A getter, because the library copies the context once per run but reads Task.Token per state.
      Task: {
        get Token() {
          return tokenFor();
        },
      },
    };
  }

  /** Translates the library's event log into service history events, in order. */
  private async consume(exec: Execution, logs: AsyncGenerator<LibraryEvent>): Promise<void> {
    for await (const ev of logs) {
      if (exec.forcedEnd) continue; // the run is being torn down: nothing after that point is history
      if (ev.type === 'StateEntered' && ev.state) {
        // A state's input is the object the state before it output (the interpreter passes it on):
        // its text was made for that StateExited already.
        const input = exec.lastOutput !== undefined && exec.lastOutput.value === ev.state.input ? exec.lastOutput.text : JSON.stringify(ev.state.input ?? null);
        const id = this.record(exec, `${ev.state.type}StateEntered`, {
          stateEnteredEventDetails: { name: ev.state.name, input, inputDetails: { truncated: false } },
        });
        exec.lastEntered.set(ev.state.name, id);
      } else if (ev.type === 'StateExited' && ev.state) {
        const output = JSON.stringify(ev.state.output ?? null);
        exec.lastOutput = { value: ev.state.output, text: output };
        // A UTF-16 unit is at most 3 bytes of UTF-8: most outputs are below the limit without counting.
        if (output.length * 3 > PAYLOAD_LIMIT_BYTES && byteLength(output) > PAYLOAD_LIMIT_BYTES) {
          this.forceEnd(exec, {
            status: 'FAILED',
            error: 'States.DataLimitExceeded',
            cause: `The state/task '${ev.state.name}' returned a result with a size exceeding the maximum number of bytes service limit.`,
          });
          continue;
        }
        this.record(exec, `${ev.state.type}StateExited`, { stateExitedEventDetails: { name: ev.state.name, output, outputDetails: { truncated: false } } });
      } else if (ev.type.startsWith('MapIteration') && ev.parentState) {
        const key = `${ev.type[0]!.toLowerCase()}${ev.type.slice(1)}EventDetails` as 'mapIterationStartedEventDetails';
        this.record(exec, ev.type, { [key]: { name: ev.parentState.name, index: ev.index ?? 0 } });
      }
      // Execution* events are recorded by settle(); StateFailed/Retried/Caught have no service equivalent.
    }
  }

  private async settle(exec: Execution, result: Promise<unknown>, consumed: Promise<void>): Promise<void> {
    let natural: Outcome;
    try {
      natural = { status: 'SUCCEEDED', output: JSON.stringify((await result) ?? null) };
    } catch (e) {
      natural = outcomeOf(e);
    }
    await consumed; // the library closes its log on every terminal path, so this always ends
    const outcome = exec.forcedEnd ?? natural;
    const ended = new TerminalError('States.Runtime', 'The execution has ended');
    exec.ended.abort(ended);
    this.dropTokens(exec, ended);

    if (outcome.status === 'SUCCEEDED') {
      this.record(exec, 'ExecutionSucceeded', { executionSucceededEventDetails: { output: outcome.output, outputDetails: { truncated: false } } });
      exec.output = outcome.output;
    } else {
      const details = { ...(outcome.error !== undefined && { error: outcome.error }), ...(outcome.cause !== undefined && { cause: outcome.cause }) };
      const [type, key] = TERMINAL_EVENTS[outcome.status];
      this.record(exec, type, { [key]: details });
      exec.error = outcome.error;
      exec.cause = outcome.cause;
    }
    exec.status = outcome.status;
    exec.stopDate = this.now();
  }

  private forceEnd(exec: Execution, outcome: Outcome): void {
    if (exec.status !== 'RUNNING' || exec.forcedEnd) return;
    exec.forcedEnd = outcome;
    exec.abortRun();
  }

  /** Appends one event (only while the execution runs) and returns its id. */
  private record(exec: Execution, type: string, details: Partial<HistoryEvent>, previousEventId?: number): number {
    if (exec.status !== 'RUNNING') return 0;
    const id = exec.events.length + 1;
    const event: HistoryEvent = { id, previousEventId: previousEventId ?? id - 1, timestamp: this.now(), type, ...details };
    exec.events.push(event);
    // One copy with the ARN for all listeners (they get it read-only, as EventBridge's targets would).
    const heard = this.listeners.size > 0 ? { ...event, executionArn: exec.arn } : undefined;
    for (const listener of this.listeners) {
      try {
        listener(heard!);
      } catch {
        // a broken listener must not break the execution
      }
    }
    return id;
  }

  private get(arn: string): Execution {
    const exec = this.executions.get(arn);
    if (!exec) throw new LocalSfnError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
    return exec;
  }
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

// ---- summaries ----------------------------------------------------------------------------------

export interface StateSummary {
  entered: number;
  invocations: number;
  failures: number;
  errors: Record<string, number>;
}

/** Per state name: times entered, Lambda invocations, failed/timed-out invocations by error name. */
export function summarizeHistory(events: readonly HistoryEvent[]): Record<string, StateSummary> {
  const byId = new Map(events.map((e) => [e.id, e]));
  const summary: Record<string, StateSummary> = {};
  const of = (name: string) => (summary[name] ??= { entered: 0, invocations: 0, failures: 0, errors: {} });
  // Task events link back (previousEventId) to their state's <Type>StateEntered event.
  const stateOf = (event: HistoryEvent): string | undefined => {
    let e: HistoryEvent | undefined = event;
    while (e && !e.stateEnteredEventDetails) e = byId.get(e.previousEventId);
    return e?.stateEnteredEventDetails?.name;
  };
  for (const e of events) {
    if (e.stateEnteredEventDetails) of(e.stateEnteredEventDetails.name).entered++;
    const failure = e.taskFailedEventDetails ?? e.taskTimedOutEventDetails;
    if (e.type !== 'TaskScheduled' && !failure) continue;
    const name = stateOf(e);
    if (name === undefined) continue;
    if (e.type === 'TaskScheduled') of(name).invocations++;
    if (failure) {
      const s = of(name);
      s.failures++;
      const error = failure.error ?? '';
      s.errors[error] = (s.errors[error] ?? 0) + 1;
    }
  }
  return summary;
}

// ---- helpers ------------------------------------------------------------------------------------

/** The subset of the library's EventLog union this engine reads. */
interface LibraryEvent {
  type: string;
  state?: { name: string; type: string; input: unknown; output?: unknown };
  parentState?: { name: string };
  index?: number;
}

const TERMINAL_EVENTS = {
  FAILED: ['ExecutionFailed', 'executionFailedEventDetails'],
  ABORTED: ['ExecutionAborted', 'executionAbortedEventDetails'],
  TIMED_OUT: ['ExecutionTimedOut', 'executionTimedOutEventDetails'],
} as const;

function outcomeOf(e: unknown): Outcome {
  if (e instanceof ExecutionTimeoutError) return { status: 'TIMED_OUT', error: 'States.Timeout', cause: 'The execution exceeded its TimeoutSeconds' };
  if (e instanceof ExecutionError && e.cause instanceof Error) return { status: 'FAILED', error: e.cause.name, cause: e.cause.message };
  return { status: 'FAILED', error: 'States.Runtime', cause: e instanceof Error ? e.message : String(e) };
}

/** The service's error shape for a Lambda function error: error = errorType, cause = the JSON body. */
function lambdaFailure(e: unknown): { error: string; cause: string } {
  const err = e instanceof Error ? e : new Error(String(e));
  const errorType = err.name || 'Error';
  return { error: errorType, cause: JSON.stringify({ errorType, errorMessage: err.message, trace: err.stack?.split('\n') ?? [] }) };
}

/** Fields the library silently ignores; running a definition that uses them would diverge from AWS. */
const UNSUPPORTED_FIELDS = ['Assign', 'Arguments', 'Output', 'ItemReader', 'ItemBatcher', 'ResultWriter'];

function assertSupported(definition: AslDefinition): void {
  if (definition.QueryLanguage === 'JSONata') throw new Error('JSONata definitions are not supported locally (JSONPath only)');
  walkStates(definition, (name, state) => {
    const used = UNSUPPORTED_FIELDS.filter((field) => field in state);
    if (state.QueryLanguage === 'JSONata') used.push('QueryLanguage: JSONata');
    if (used.length > 0) throw new Error(`State ${name} uses ${used.join(', ')}, which the local engine does not support`);
    const negated = negatedTypeTests(state['Choices']);
    if (negated.length > 0) {
      throw new Error(
        `Choice state ${name} tests ${negated.join(', ')}: aws-local-stepfunctions evaluates a type test with false as never matching (AWS matches the opposite); write Not({ ${negated[0]!.replace(': false', ': true')} }) instead`,
      );
    }
  });
}

const TYPE_TESTS = ['IsNull', 'IsPresent', 'IsNumeric', 'IsString', 'IsBoolean', 'IsTimestamp'];

/** Type tests written with `false` anywhere in a Choice state's rules (including inside And/Or/Not). */
function negatedTypeTests(rules: unknown): string[] {
  if (Array.isArray(rules)) return rules.flatMap(negatedTypeTests);
  if (!rules || typeof rules !== 'object') return [];
  const rule = rules as Record<string, unknown>;
  const own = TYPE_TESTS.filter((test) => rule[test] === false).map((test) => `${test}: false`);
  return [...own, ...negatedTypeTests(rule['And']), ...negatedTypeTests(rule['Or']), ...negatedTypeTests(rule['Not'])];
}

/** Validates the task bindings against the definition's Task states. */
function taskSpecs(definition: AslDefinition, tasks: Record<string, TaskBinding>): Map<string, TaskSpec> {
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

/**
 * A copy of the definition the library can time faithfully: a Task without TimeoutSeconds waits as
 * long as Node allows (the library would default to 60 s; the service to 99999999 s), and every
 * seconds field is clamped so setTimeout cannot overflow into a 1 ms timer.
 */
function clampTimers(definition: AslDefinition): AslDefinition {
  const copy = structuredClone(definition);
  const clamp = (s: number | undefined) => (s === undefined ? undefined : Math.min(s, MAX_TIMER_SECONDS));
  if (copy.TimeoutSeconds !== undefined) copy.TimeoutSeconds = clamp(copy.TimeoutSeconds);
  walkStates(copy, (_, state: AslState) => {
    if (state.Type === 'Task') {
      if (state.TimeoutSeconds === undefined && state.TimeoutSecondsPath === undefined) state.TimeoutSeconds = MAX_TIMER_SECONDS;
      else if (state.TimeoutSeconds !== undefined) state.TimeoutSeconds = clamp(state.TimeoutSeconds);
      if (state.HeartbeatSeconds !== undefined) state.HeartbeatSeconds = clamp(state.HeartbeatSeconds);
    }
    if (state.Type === 'Wait' && typeof state.Seconds === 'number') state.Seconds = clamp(state.Seconds);
  });
  return copy;
}

function parseExecutionInput(input: unknown): { text: string; value: JsonValue } {
  let value: unknown = input ?? {};
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      throw new LocalSfnError('InvalidExecutionInput', 'Invalid Execution Input: not valid JSON');
    }
  }
  if (!isRecord(value)) throw new LocalSfnError('InvalidExecutionInput', 'Invalid Execution Input: must be a JSON object');
  const text = JSON.stringify(value);
  if (byteLength(text) > PAYLOAD_LIMIT_BYTES) throw new LocalSfnError('InvalidExecutionInput', `Invalid Execution Input: larger than ${PAYLOAD_LIMIT_BYTES} bytes`);
  return { text, value: JSON.parse(text) as JsonValue };
}

/** The service's rule: 1–80 characters, no whitespace, brackets, wildcards, or URL-special characters. */
function validateName(name: string): void {
  if (name.length < 1 || name.length > 80 || /[\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]/.test(name)) {
    throw new LocalSfnError('InvalidName', `Invalid Name: '${name}'`);
  }
}

export function paginate<T>(items: T[], pageSize: number, nextToken?: string): { items: T[]; nextToken?: string } {
  const start = nextToken ? Number(Buffer.from(nextToken, 'base64url').toString()) : 0;
  if (!Number.isInteger(start) || start < 0 || start > items.length) throw new LocalSfnError('InvalidToken', 'Invalid pagination token');
  const end = start + pageSize;
  return { items: items.slice(start, end), ...(end < items.length && { nextToken: Buffer.from(String(end)).toString('base64url') }) };
}

function untilEnded<T>(signal: AbortSignal, promise: Promise<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function containsString(value: unknown, needle: string): boolean {
  if (value === needle) return true;
  if (Array.isArray(value)) return value.some((v) => containsString(v, needle));
  if (isRecord(value)) return Object.values(value).some((v) => containsString(v, needle));
  return false;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}
