/**
 * An in-process Step Functions engine for one state machine and many executions.
 * aws-local-stepfunctions interprets the ASL; this class adds what the service adds around it:
 * executions with names and ARNs, the GetExecutionHistory event log, Lambda-invoke integration
 * results, and task tokens for `.waitForTaskToken` tasks. Like a state machine with published
 * versions, it may hold several (definition, task handlers) pairs: a new execution starts on the
 * latest, a live one runs to its end on the version it started on (local/aws/state-machine-versions.ts).
 */
import './polyfills.js';
import { randomUUID } from 'node:crypto';
import type { RunOptions } from 'aws-local-stepfunctions';
import { outcomeAtHistoryQuota, historyQuotaRefuses, HISTORY_QUOTA_FAILURE } from '../aws/sfn-history-limit.js';
import { CHILD_START_REFUSED, EXCEED_TOLERATED_FAILURE_THRESHOLD, childStartStates, distributedMaps, exceedsTolerance, toleranceCause, toleranceStates, type FailureTolerance } from '../aws/sfn-distributed-map.js';
import { ItemReaderFailed, itemReaderStates, readItems, type ItemReaderState } from '../aws/sfn-item-reader.js';
import { dataLimitExceeded, overPayloadLimit } from '../aws/sfn-payload-limit.js';
import { assertExecutionName, assertSameStart, parseExecutionInput } from '../aws/sfn-start-execution.js';
import type { AslDefinition } from '../template/asl.js';
import { LocalSfnError, TaskFailure, UncatchableError } from './errors.js';
import { outcomeOf, paginate, retrierWaitMs, type Execution, type ExecutionDescription, type ExecutionListItem, type ExecutionStatus, type LibraryEvent, type Outcome } from './execution.js';
import { EXECUTION_END_EVENTS, TERMINAL_EVENTS, type HistoryEvent, type HistoryListener } from './history.js';
import { runLambdaTask, type JsonValue, type TaskBinding, type TaskHandler } from './lambda-task.js';
import { TaskTokens } from './task-tokens.js';
import { keepAliveTimers, type Timers } from './timers.js';
import { StateMachineVersions, type VersionSource } from './versions.js';

export { LocalSfnError } from './errors.js';
export { paginate, type ExecutionDescription, type ExecutionListItem, type ExecutionStatus } from './execution.js';
export { summarizeHistory, type HistoryEvent, type HistoryListener, type StateSummary } from './history.js';
export { bindTasks, type TaskBinding } from './lambda-task.js';
export { keepAliveTimers, type Timers } from './timers.js';

const ROLE_ARN = 'arn:aws:iam::000000000000:role/savepoint-local';

/** A state retried (LocalEngine.onRetry): its name, and the wait its Retrier asks on AWS, in ms. */
export type RetryListener = (retry: { readonly state: string; readonly waitMs: number }) => void;

type Overrides = NonNullable<RunOptions['overrides']>;

export interface LocalEngineOptions {
  definition: AslDefinition;
  stateMachineArn: string;
  tasks: Record<string, TaskBinding>;
  /** Per state name, ms to wait before each retry (replaces IntervalSeconds/backoff/jitter). */
  retryIntervalOverrides?: Record<string, number | number[]>;
  /** Per Wait state name, ms to wait instead of its Seconds/Timestamp. */
  waitTimeOverrides?: Record<string, number>;
  /** Per Task state name, ms instead of its TimeoutSeconds (timed on `timers`, like the definition's). */
  taskTimeoutOverrides?: Record<string, number>;
  now?: () => Date;
  /**
   * Where the Task timers (TimeoutSeconds, HeartbeatSeconds) run: on the clock `now` reads, when
   * that clock can arm them (a test's clock fires them as it moves). @default real timers
   */
  timers?: Timers;
  /**
   * Definitions (as JSON) known to pass the library's validation: a disk-backed set lets a new
   * process skip it (~150 ms and ~15 MB). @default this process's memory
   */
  validated?: { has(text: string): boolean; add(text: string): void };
  /**
   * The state machine role's IAM (local/aws/iam): each Task's `lambda:InvokeFunction` on the function
   * ARN it invokes is decided by it, and a refusal fails the Task with Lambda.AWSLambdaException
   * (403), as Step Functions reports it. @default no IAM: every invoke allowed
   */
  iam?: EngineIam;
  /**
   * The state machine's aliases, by name (the template's `AWS::StepFunctions::StateMachineAlias`),
   * each routed to the newest published version, as a deploy that points the alias at the version
   * it publishes leaves them. @default none
   */
  aliases?: readonly string[];
  /**
   * Finished executions kept, with their histories, for DescribeExecution and GetExecutionHistory:
   * past this many, the oldest finished one is forgotten (as the service forgets a closed execution
   * 90 days after it closed), so that an engine that runs for months does not grow with every run
   * it ran. Its events were delivered to the listeners (history.jsonl) as they happened.
   * @default 100
   */
  retainFinished?: number;
  /**
   * S3 GetObject as the state machine's role, for a distributed Map's ItemReader (local/aws/sfn-item-reader.ts):
   * the object's text, or a throw (no such object, access denied) that fails the Map with
   * States.ItemReaderFailed. @default none: a definition with an ItemReader is refused
   */
  getObject?: (bucket: string, key: string) => Promise<string>;
}

/** What the engine asks of the twin's IAM. */
export interface EngineIam {
  /** Throws to refuse the invoke: AccessDeniedException (its role may not), ResourceNotFoundException (no such function or version). */
  authorizeInvoke(functionArn: string): void;
  /**
   * Throws (AccessDeniedException) to refuse a distributed Map's start of a child execution: the
   * state machine role's `states:StartExecution` on `stateMachineArn` (local/aws/sfn-distributed-map.ts).
   * @default every start allowed
   */
  authorizeStartExecution?(stateMachineArn: string): void;
  /** Every IAM decision of the twin so far (the engine's and its endpoints'). */
  decisions(): { allowed: number; denied: number };
}

export class LocalEngine {
  readonly stateMachineArn: string;
  /** Version 1, then each `publishVersion`: new executions start on the last. */
  private readonly versions: StateMachineVersions;
  private readonly executions = new Map<string, Execution>();
  /** Finished executions, oldest first (the ones `retainFinished` forgets first). */
  private readonly finished: string[] = [];
  private readonly retainFinished: number;
  private readonly tokens = new TaskTokens<Execution, JsonValue>();
  private readonly listeners = new Set<HistoryListener>();
  private readonly retryListeners = new Set<RetryListener>();
  private readonly overrides: Overrides;
  private readonly now: () => Date;
  private readonly timers: Timers;
  private readonly createdAt: Date;
  private readonly iam?: EngineIam;
  private readonly getObject?: (bucket: string, key: string) => Promise<string>;
  private closed = false;

  constructor(opts: LocalEngineOptions) {
    this.stateMachineArn = opts.stateMachineArn;
    if (opts.iam) this.iam = opts.iam;
    if (opts.getObject) this.getObject = opts.getObject;
    this.now = opts.now ?? (() => new Date());
    this.timers = opts.timers ?? keepAliveTimers;
    this.createdAt = this.now();
    this.versions = new StateMachineVersions({
      stateMachineArn: opts.stateMachineArn,
      aliases: opts.aliases ?? [],
      taskTimeoutOverrides: opts.taskTimeoutOverrides ?? {},
      now: this.now,
      createdAt: this.createdAt,
      ...(opts.validated && { validated: opts.validated }),
    });
    this.retainFinished = opts.retainFinished ?? 100;
    this.publishVersion({ definition: opts.definition, tasks: opts.tasks });
    this.overrides = {
      ...(opts.retryIntervalOverrides && { retryIntervalOverrides: opts.retryIntervalOverrides }),
      ...(opts.waitTimeOverrides && { waitTimeOverrides: opts.waitTimeOverrides }),
    };
  }

  /** The latest version's definition: what a new execution runs. */
  get definition(): AslDefinition {
    return this.versions.latest.definition;
  }

  // ---- versions (engine/versions.ts) ----------------------------------------------------------

  /**
   * Publishes a version (as a deploy publishes a state machine version behind the alias): new
   * executions start on it; executions already running keep their own. Returns its number.
   */
  publishVersion(version: VersionSource): number {
    if (this.closed) throw new LocalSfnError('StateMachineDeleting', 'The local engine is closed');
    const reader = [...itemReaderStates(version.definition).values()][0];
    if (reader && !this.getObject) throw new Error(`The Map ${reader.map} reads its items from S3 (ItemReader), and this engine was given no S3 to read them from (getObject)`);
    return this.versions.publish(version);
  }

  /** ListStateMachineVersions: the versions not deleted, newest first (as the service lists them). */
  listVersions(): { stateMachineVersionArn: string; creationDate: Date }[] {
    return this.versions.list();
  }

  /** ListStateMachineAliases and DescribeStateMachineAlias: each alias and the version it routes all traffic to. */
  listAliases(): { name: string; stateMachineAliasArn: string; stateMachineVersionArn: string; creationDate: Date }[] {
    return this.versions.listAliases();
  }

  /** DeleteStateMachineVersion, by AWS's rules (local/aws/state-machine-versions.ts). */
  deleteVersion(number: number): void {
    this.versions.delete(number);
  }

  /** The version an execution runs (1 for every execution of an engine that never published another). */
  versionOf(executionArn: string): { number: number; stateMachineVersionArn: string; definition: AslDefinition; description?: string } {
    const { version } = this.get(executionArn);
    return { number: version.number, stateMachineVersionArn: this.versions.arnOf(version), definition: version.definition, ...(version.description !== undefined && { description: version.description }) };
  }

  // ---- executions ------------------------------------------------------------------------------

  /**
   * Starts on `version` (StartExecution with a version ARN), on the version `alias` routes to (with
   * an alias ARN: the execution is associated with both, as AWS associates it), or on the newest.
   */
  startExecution(req: { name?: string; input?: unknown; version?: number; alias?: string } = {}): { executionArn: string; startDate: Date } {
    if (this.closed) throw new LocalSfnError('StateMachineDeleting', 'The local engine is closed');
    const name = req.name ?? randomUUID();
    assertExecutionName(name);
    const input = parseExecutionInput(req.input);
    const text = input.text;
    const value = input.value as JsonValue;
    const arn = `${this.stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;

    // StartExecution is idempotent for a RUNNING execution with the same name and input (STANDARD).
    const existing = this.executions.get(arn);
    if (existing) {
      assertSameStart(existing, arn, text);
      return { executionArn: arn, startDate: existing.startDate };
    }

    const { version, qualified } = this.versions.forStart(req);
    const exec: Execution = {
      arn,
      version,
      ...qualified,
      name,
      input: text,
      startDate: this.now(),
      status: 'RUNNING',
      events: [],
      itemReads: {},
      mapRuns: new Map(),
      lastEntered: new Map(),
      timedOut: new Map(),
      ended: new AbortController(),
      abortRun: () => {},
      done: Promise.resolve(),
    };
    this.executions.set(arn, exec);
    this.record(exec, 'ExecutionStarted', {
      executionStartedEventDetails: {
        input: text,
        inputDetails: { truncated: false },
        roleArn: ROLE_ARN,
        ...(qualified.aliasArn && { stateMachineAliasArn: qualified.aliasArn }),
        ...(qualified.versionArn && { stateMachineVersionArn: qualified.versionArn }),
      },
    });

    const handlers: Record<string, TaskHandler> = {};
    // A Task of a distributed Map's child execution records its events in that child's history, not here.
    const { childStates } = distributedMaps(version.definition);
    for (const [stateName, spec] of version.specs) handlers[stateName] = (params) => runLambdaTask(this.taskRun(exec, childStates.has(stateName)), stateName, spec, params);
    for (const [stateName, reader] of itemReaderStates(version.definition)) handlers[stateName] = (params) => this.readItems(exec, reader, params);
    for (const [stateName, map] of childStartStates(version.definition)) handlers[stateName] = () => this.startChild(map);
    for (const [stateName, t] of toleranceStates(version.definition)) handlers[stateName] = async (params) => (t.role === 'runStart' ? startMapRun(exec, t.map, params) : itemFailed(exec, t.map, t.tolerance, params));

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
      // As the service does for an execution started on a version or an alias. An execution started
      // unqualified is reported on its version too once there are several: locally that is what
      // every caller's start on the alias would be on AWS (a divergence only for a start that AWS
      // would associate with no version).
      ...(this.describedVersion(e) !== undefined && { stateMachineVersionArn: this.describedVersion(e)! }),
      ...(e.aliasArn !== undefined && { stateMachineAliasArn: e.aliasArn }),
    };
  }

  /** The version DescribeExecution names for an execution (see above), if any. */
  private describedVersion(e: Execution): string | undefined {
    return e.versionArn !== undefined || this.versions.count > 1 ? (e.versionArn ?? this.versions.arnOf(e.version)) : undefined;
  }

  /** ListExecutions, of the state machine or (with `version`) of the executions that run that version. */
  listExecutions(opts: { statusFilter?: ExecutionStatus; maxResults?: number; nextToken?: string; version?: number } = {}): {
    executions: ExecutionListItem[];
    nextToken?: string;
  } {
    const all = [...this.executions.values()]
      .reverse() // newest first, like the service
      .filter((e) => (!opts.statusFilter || e.status === opts.statusFilter) && (opts.version === undefined || e.version.number === opts.version))
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

  /** DescribeStateMachine on a version's ARN: that version's definition (StateMachineDoesNotExist for a deleted one). */
  describeVersion(number: number): ReturnType<LocalEngine['describeStateMachine']> & { description?: string } {
    const version = this.versions.described(number);
    return { ...this.describeStateMachine(), stateMachineArn: this.versions.arnOf(version), definition: JSON.stringify(version.definition), creationDate: version.creationDate, ...(version.description !== undefined && { description: version.description }) };
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

  /**
   * Calls `listener` as a state is retried, with the wait its Retrier asks on AWS (the engine waits
   * its `retryIntervalOverrides` instead): what a test's clock skips (testing/index.ts). Not a
   * history event: the service records none for a retry. Returns the unsubscribe.
   */
  onRetry(listener: RetryListener): () => void {
    this.retryListeners.add(listener);
    return () => this.retryListeners.delete(listener);
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
    this.tokens.sendTaskSuccess(token, output);
  }

  sendTaskFailure(token: string, error?: string, cause?: string): void {
    this.tokens.sendTaskFailure(token, error, cause);
  }

  sendTaskHeartbeat(token: string): void {
    this.tokens.sendTaskHeartbeat(token);
  }

  /** The state machine whose execution waits on a live token (what a callback is authorized on), else undefined. */
  stateMachineOfToken(token: string): string | undefined {
    try {
      this.tokens.ownerOf(token);
      return this.stateMachineArn;
    } catch {
      return undefined;
    }
  }

  // ---- run lifecycle ---------------------------------------------------------------------------

  /**
   * The twin's IAM decisions so far, `{ allowed, denied }` (the state machine's invokes and every
   * call its endpoints authorized); undefined when the engine runs without IAM.
   */
  iamDecisions(): { allowed: number; denied: number } | undefined {
    return this.iam?.decisions();
  }

  /** What a Task of the execution sees of the engine (local/engine/lambda-task.ts). */
  private taskRun(exec: Execution, inChildExecution = false) {
    const iam = this.iam;
    return {
      exec,
      tokens: this.tokens,
      timers: this.timers,
      record: (type: string, details: Partial<HistoryEvent>, previousEventId?: number) => (inChildExecution ? 0 : this.record(exec, type, details, previousEventId)),
      ...(iam && { authorizeInvoke: (functionArn: string) => iam.authorizeInvoke(functionArn) }),
      exceedsDataLimit: (stateName: string, what: 'input' | 'result') => this.forceEnd(exec, dataLimitExceeded(stateName, what)),
    };
  }

  /**
   * A distributed Map's start of one child execution, as the state machine's role on AWS
   * (local/aws/sfn-distributed-map.ts): refused, it starts nothing and fails the execution with
   * States.Runtime, which no Retry or Catch handles.
   */
  private async startChild(map: string): Promise<JsonValue> {
    try {
      this.iam?.authorizeStartExecution?.(this.stateMachineArn);
    } catch (error) {
      throw new UncatchableError(CHILD_START_REFUSED, `The Map ${map} could not start a child execution: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    }
    return {};
  }

  /** An ItemReader's read, as the Map does it on AWS: its items kept for the Map (`$$.ItemReader.<id>`), a failure as States.ItemReaderFailed. */
  private async readItems(exec: Execution, reader: ItemReaderState, params: unknown): Promise<JsonValue> {
    const { Bucket, Key } = (params ?? {}) as { Bucket?: unknown; Key?: unknown };
    const where = `s3://${String(Bucket)}/${String(Key)}`;
    if (typeof Bucket !== 'string' || typeof Key !== 'string') throw new ItemReaderFailed(`The ItemReader of ${reader.map} names no Bucket and Key strings (${where})`);
    let text: string;
    try {
      text = await this.getObject!(Bucket, Key);
    } catch (error) {
      throw new ItemReaderFailed(`Reading ${where} failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    }
    exec.itemReads[reader.id] = readItems(text, reader.config, where);
    return {};
  }

  private contextFor(exec: Execution): RunOptions['context'] {
    const tokenFor = () => this.tokens.mint(exec);
    return {
      Execution: { Id: exec.arn, Name: exec.name, RoleArn: ROLE_ARN, StartTime: exec.startDate.toISOString() },
      // The version's ARN (the one DescribeExecution names) for a versioned execution, as LocalStack sets it
      // (AWS's documentation shows only an unversioned execution's): Handoff falls back to
      // DescribeExecution where it finds no version there (lambdas/steps/handoff.ts).
      StateMachine: { Id: this.describedVersion(exec) ?? this.stateMachineArn, Name: this.stateMachineArn.split(':').pop() },
      // A getter, because the library copies the context once per run but reads Task.Token per state.
      Task: {
        get Token() {
          return tokenFor();
        },
      },
      // Filled as each ItemReader reads (the same object: the library copies the context, not what it holds).
      ItemReader: exec.itemReads,
    };
  }

  /** Translates the library's event log into service history events, in order. */
  private async consume(exec: Execution, logs: AsyncGenerator<LibraryEvent>): Promise<void> {
    // A distributed Map's iterations are child executions on AWS, each with a history of its own (local/aws/sfn-distributed-map.ts).
    const distributed = distributedMaps(exec.version.definition);
    // The engine's own ItemReader and Map Run Tasks are its Map's doing on AWS: no history of their own.
    const readers = new Set([...itemReaderStates(exec.version.definition).keys(), ...toleranceStates(exec.version.definition).keys()]);
    for await (const ev of logs) {
      if (exec.forcedEnd) continue; // the run is being torn down: nothing after that point is history
      if (ev.state && readers.has(ev.state.name)) continue;
      if (ev.index !== undefined && ev.state && distributed.childStates.has(ev.state.name)) continue;
      if (ev.type.startsWith('MapIteration') && ev.parentState && distributed.maps.has(ev.parentState.name)) continue;
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
        if (overPayloadLimit(output)) {
          this.forceEnd(exec, dataLimitExceeded(ev.state.name, 'result'));
          continue;
        }
        this.record(exec, `${ev.state.type}StateExited`, { stateExitedEventDetails: { name: ev.state.name, output, outputDetails: { truncated: false } } });
      } else if (ev.type.startsWith('MapIteration') && ev.parentState) {
        const key = `${ev.type[0]!.toLowerCase()}${ev.type.slice(1)}EventDetails` as 'mapIterationStartedEventDetails';
        this.record(exec, ev.type, { [key]: { name: ev.parentState.name, index: ev.index ?? 0 } });
      } else if (ev.type === 'StateRetried' && ev.state && ev.retry) {
        const retry = { state: ev.state.name, waitMs: retrierWaitMs(ev.retry.retrier, ev.retry.attempt) };
        for (const listener of this.retryListeners) listener(retry);
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
    // Event 25,000 may only be the execution's success (local/aws/sfn-history-limit.ts).
    const outcome = outcomeAtHistoryQuota(exec.events.length, exec.forcedEnd ?? natural);
    const ended = new UncatchableError('States.Runtime', 'The execution has ended');
    exec.ended.abort(ended);
    this.tokens.drop(exec, ended);

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
    this.finished.push(exec.arn);
    while (this.finished.length > this.retainFinished) this.forget(this.finished.shift()!);
  }

  /** A finished execution past `retainFinished`: gone, with everything kept for it (its timed-out task tokens). */
  private forget(arn: string): void {
    const exec = this.executions.get(arn);
    this.executions.delete(arn);
    if (exec) this.tokens.forget(exec);
  }

  private forceEnd(exec: Execution, outcome: Outcome): void {
    if (exec.status !== 'RUNNING' || exec.forcedEnd) return;
    exec.forcedEnd = outcome;
    exec.abortRun();
  }

  /**
   * Appends one event (only while the execution runs) and returns its id. The event that would be
   * the 25,000th is not the execution's end: the execution fails instead, and its ExecutionFailed
   * is event 25,000 (local/aws/sfn-history-limit.ts).
   */
  private record(exec: Execution, type: string, details: Partial<HistoryEvent>, previousEventId?: number): number {
    if (exec.status !== 'RUNNING') return 0;
    if (historyQuotaRefuses(exec.events.length, EXECUTION_END_EVENTS.has(type))) {
      this.forceEnd(exec, HISTORY_QUOTA_FAILURE);
      return 0;
    }
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

/** A distributed Map's Map Run begins (the engine's MapRun Task, given the Map's items): no item has failed yet. */
function startMapRun(exec: Execution, map: string, params: unknown): JsonValue {
  const { items } = (params ?? {}) as { items?: unknown };
  exec.mapRuns.set(map, { total: Array.isArray(items) ? items.length : 0, failed: 0 });
  return {};
}

/**
 * An item of a distributed Map's run failed (the engine's ItemFailed Task, given the Catch's Error
 * and Cause): past the Map's threshold the item fails with States.ExceedToleratedFailureThreshold,
 * and so the Map; below it, the item's output is its error and cause.
 */
function itemFailed(exec: Execution, map: string, tolerance: FailureTolerance, params: unknown): JsonValue {
  const run = exec.mapRuns.get(map) ?? { total: 0, failed: 0 };
  run.failed += 1;
  exec.mapRuns.set(map, run);
  const failure = (params ?? {}) as { Error?: JsonValue; Cause?: JsonValue };
  if (exceedsTolerance(tolerance, run.failed, run.total)) throw new TaskFailure(EXCEED_TOLERATED_FAILURE_THRESHOLD, toleranceCause(map, tolerance, run.failed, run.total, failure));
  return { Error: failure.Error ?? null, Cause: failure.Cause ?? null };
}
