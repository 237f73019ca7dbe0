/**
 * An execution of the local engine: what it is while it runs and what DescribeExecution and
 * ListExecutions report of it, how the interpreter's ending becomes its outcome, and the API's
 * pagination of lists.
 */
import { ExecutionError, ExecutionTimeoutError } from 'aws-local-stepfunctions';
import { LocalSfnError } from './errors.js';
import type { HistoryEvent } from './history.js';
import type { Version } from './versions.js';

export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED' | 'TIMED_OUT';

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
  stateMachineAliasArn?: string;
}

export type ExecutionListItem = Pick<ExecutionDescription, 'executionArn' | 'stateMachineArn' | 'name' | 'status' | 'startDate' | 'stopDate'>;

export type Outcome =
  | { status: 'SUCCEEDED'; output: string }
  | { status: 'FAILED' | 'ABORTED' | 'TIMED_OUT'; error?: string; cause?: string };

/** An execution as the engine holds it, from StartExecution until the engine forgets it. */
export interface Execution {
  arn: string;
  /** The version it started on and runs to its end. */
  version: Version;
  /** The version ARN it was started with, or the version its alias pointed to (AWS associates it then). */
  versionArn?: string;
  /** The alias ARN it was started with. */
  aliasArn?: string;
  name: string;
  input: string;
  startDate: Date;
  stopDate?: Date;
  status: ExecutionStatus;
  output?: string;
  error?: string;
  cause?: string;
  events: HistoryEvent[];
  /** The items each ItemReader read, by its id: what its Map iterates (`$$.ItemReader.<id>`, local/aws/sfn-item-reader.ts). */
  itemReads: Record<string, unknown[]>;
  /** Each distributed Map's current Map Run: its item count and failed items so far (local/aws/sfn-distributed-map.ts). */
  mapRuns: Map<string, { total: number; failed: number }>;
  /** Id of the latest <Type>StateEntered per state name: TaskScheduled links back to it. */
  lastEntered: Map<string, number>;
  /** Invocations still running after their Task timed out (local/engine/lambda-task.ts). */
  timedOut: Map<string, Promise<void>>;
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

/** The subset of the library's EventLog union this engine reads. */
export interface LibraryEvent {
  type: string;
  state?: { name: string; type: string; input: unknown; output?: unknown };
  parentState?: { name: string };
  index?: number;
  /** A `StateRetried`'s Retrier (as the definition writes it) and its attempts so far, this retry included. */
  retry?: { retrier: { IntervalSeconds?: number; BackoffRate?: number; MaxDelaySeconds?: number }; attempt: number };
}

/**
 * The wait the definition's Retrier asks before retry number `attempt` (IntervalSeconds ×
 * BackoffRate^(attempt − 1), at most MaxDelaySeconds; Step Functions' defaults 1 s and 2.0), in ms:
 * the upper bound of a FULL jitter's wait. The engine waits its override instead (`retryIntervalOverrides`).
 */
export function retrierWaitMs(retrier: NonNullable<LibraryEvent['retry']>['retrier'], attempt: number): number {
  const seconds = (retrier.IntervalSeconds ?? 1) * (retrier.BackoffRate ?? 2) ** Math.max(0, attempt - 1);
  return Math.min(seconds, retrier.MaxDelaySeconds ?? Number.POSITIVE_INFINITY) * 1000;
}

/** How the interpreter's ending of a run is reported. */
export function outcomeOf(e: unknown): Outcome {
  if (e instanceof ExecutionTimeoutError) return { status: 'TIMED_OUT', error: 'States.Timeout', cause: 'The execution exceeded its TimeoutSeconds' };
  if (e instanceof ExecutionError && e.cause instanceof Error) return { status: 'FAILED', error: e.cause.name, cause: e.cause.message };
  return { status: 'FAILED', error: 'States.Runtime', cause: e instanceof Error ? e.message : String(e) };
}

/** A page of a list, as the API pages one: `nextToken` is where the next page starts. */
export function paginate<T>(items: T[], pageSize: number, nextToken?: string): { items: T[]; nextToken?: string } {
  const start = nextToken ? Number(Buffer.from(nextToken, 'base64url').toString()) : 0;
  if (!Number.isInteger(start) || start < 0 || start > items.length) throw new LocalSfnError('InvalidToken', 'Invalid pagination token');
  const end = start + pageSize;
  return { items: items.slice(start, end), ...(end < items.length && { nextToken: Buffer.from(String(end)).toString('base64url') }) };
}
