/**
 * The execution history, in the shape of the GetExecutionHistory API: the events the engine records
 * and what is read back from them (a per-state summary).
 */

export interface Truncated {
  truncated: boolean;
}
export interface TaskResource {
  resourceType: string;
  resource: string;
}
export interface ErrorDetails {
  error?: string;
  cause?: string;
}

/** One event in the shape of the GetExecutionHistory API (only the fields this engine emits). */
export interface HistoryEvent {
  id: number;
  previousEventId: number;
  timestamp: Date;
  type: string;
  executionStartedEventDetails?: { input: string; inputDetails: Truncated; roleArn: string; stateMachineAliasArn?: string; stateMachineVersionArn?: string };
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

/** The terminal event (and its details key) of each way an execution ends other than success. */
export const TERMINAL_EVENTS = {
  FAILED: ['ExecutionFailed', 'executionFailedEventDetails'],
  ABORTED: ['ExecutionAborted', 'executionAbortedEventDetails'],
  TIMED_OUT: ['ExecutionTimedOut', 'executionTimedOutEventDetails'],
} as const;

/** The events that end an execution (the last one of its history). */
export const EXECUTION_END_EVENTS: ReadonlySet<string> = new Set(['ExecutionSucceeded', ...Object.values(TERMINAL_EVENTS).map(([type]) => type)]);
