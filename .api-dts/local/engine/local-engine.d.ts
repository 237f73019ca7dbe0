/**
 * An in-process Step Functions engine for one state machine and many executions.
 * aws-local-stepfunctions interprets the ASL; this class adds what the service adds around it:
 * executions with names and ARNs, the GetExecutionHistory event log, Lambda-invoke integration
 * results, and task tokens for `.waitForTaskToken` tasks. Like a state machine with published
 * versions, it may hold several (definition, task handlers) pairs: a new execution starts on the
 * latest, a live one runs to its end on the version it started on (local/aws/state-machine-versions.ts).
 */
import './polyfills.js';
import type { AslDefinition } from '../template/asl.js';
import { type ExecutionDescription, type ExecutionListItem, type ExecutionStatus } from './execution.js';
import { type HistoryEvent, type HistoryListener } from './history.js';
import { type TaskBinding } from './lambda-task.js';
import { type Timers } from './timers.js';
import { type VersionSource } from './versions.js';
export { LocalSfnError } from './errors.js';
export { paginate, type ExecutionDescription, type ExecutionListItem, type ExecutionStatus } from './execution.js';
export { summarizeHistory, type HistoryEvent, type HistoryListener, type StateSummary } from './history.js';
export { bindTasks, type TaskBinding } from './lambda-task.js';
export { keepAliveTimers, type Timers } from './timers.js';
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
    validated?: {
        has(text: string): boolean;
        add(text: string): void;
    };
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
}
/** What the engine asks of the twin's IAM. */
export interface EngineIam {
    /** Throws (AccessDeniedException) to refuse the invoke. */
    authorizeInvoke(functionArn: string): void;
    /** Every IAM decision of the twin so far (the engine's and its endpoints'). */
    decisions(): {
        allowed: number;
        denied: number;
    };
}
export declare class LocalEngine {
    readonly stateMachineArn: string;
    /** Version 1, then each `publishVersion`: new executions start on the last. */
    private readonly versions;
    private readonly executions;
    /** Finished executions, oldest first (the ones `retainFinished` forgets first). */
    private readonly finished;
    private readonly retainFinished;
    private readonly tokens;
    private readonly listeners;
    private readonly overrides;
    private readonly now;
    private readonly timers;
    private readonly createdAt;
    private readonly iam?;
    private closed;
    constructor(opts: LocalEngineOptions);
    /** The latest version's definition: what a new execution runs. */
    get definition(): AslDefinition;
    /**
     * Publishes a version (as a deploy publishes a state machine version behind the alias): new
     * executions start on it; executions already running keep their own. Returns its number.
     */
    publishVersion(version: VersionSource): number;
    /** ListStateMachineVersions: the versions not deleted, newest first (as the service lists them). */
    listVersions(): {
        stateMachineVersionArn: string;
        creationDate: Date;
    }[];
    /** ListStateMachineAliases and DescribeStateMachineAlias: each alias and the version it routes all traffic to. */
    listAliases(): {
        name: string;
        stateMachineAliasArn: string;
        stateMachineVersionArn: string;
        creationDate: Date;
    }[];
    /** DeleteStateMachineVersion, by AWS's rules (local/aws/state-machine-versions.ts). */
    deleteVersion(number: number): void;
    /** The version an execution runs (1 for every execution of an engine that never published another). */
    versionOf(executionArn: string): {
        number: number;
        stateMachineVersionArn: string;
        definition: AslDefinition;
        description?: string;
    };
    /**
     * Starts on `version` (StartExecution with a version ARN), on the version `alias` routes to (with
     * an alias ARN: the execution is associated with both, as AWS associates it), or on the newest.
     */
    startExecution(req?: {
        name?: string;
        input?: unknown;
        version?: number;
        alias?: string;
    }): {
        executionArn: string;
        startDate: Date;
    };
    describeExecution(arn: string): ExecutionDescription;
    /** ListExecutions, of the state machine or (with `version`) of the executions that run that version. */
    listExecutions(opts?: {
        statusFilter?: ExecutionStatus;
        maxResults?: number;
        nextToken?: string;
        version?: number;
    }): {
        executions: ExecutionListItem[];
        nextToken?: string;
    };
    /** Aborts the run, rejects its pending task tokens and resolves once it is recorded as ABORTED. */
    stopExecution(arn: string, opts?: {
        error?: string;
        cause?: string;
    }): Promise<{
        stopDate: Date;
    }>;
    getExecutionHistory(arn: string, opts?: {
        reverseOrder?: boolean;
    }): HistoryEvent[];
    /** The id of the execution's newest event, i.e. how many it has: what `GetExecutionHistory { reverseOrder, maxResults: 1 }` answers. */
    eventCount(arn: string): number;
    waitForExecution(arn: string): Promise<ExecutionDescription>;
    describeStateMachine(): {
        stateMachineArn: string;
        name: string;
        status: 'ACTIVE';
        definition: string;
        roleArn: string;
        type: 'STANDARD';
        creationDate: Date;
    };
    on(listener: HistoryListener): () => void;
    /** Aborts every running execution and waits until each has settled; no timer or token is left. */
    close(): Promise<void>;
    sendTaskSuccess(token: string, output: string): void;
    sendTaskFailure(token: string, error?: string, cause?: string): void;
    sendTaskHeartbeat(token: string): void;
    /** The state machine whose execution waits on a live token (what a callback is authorized on), else undefined. */
    stateMachineOfToken(token: string): string | undefined;
    /**
     * The twin's IAM decisions so far, `{ allowed, denied }` (the state machine's invokes and every
     * call its endpoints authorized); undefined when the engine runs without IAM.
     */
    iamDecisions(): {
        allowed: number;
        denied: number;
    } | undefined;
    /** What a Task of the execution sees of the engine (local/engine/lambda-task.ts). */
    private taskRun;
    private contextFor;
    /** Translates the library's event log into service history events, in order. */
    private consume;
    private settle;
    /** A finished execution past `retainFinished`: gone, with everything kept for it (its timed-out task tokens). */
    private forget;
    private forceEnd;
    /**
     * Appends one event (only while the execution runs) and returns its id. The event that would be
     * the 25,000th is not the execution's end: the execution fails instead, and its ExecutionFailed
     * is event 25,000 (local/aws/sfn-history-limit.ts).
     */
    private record;
    private get;
}
