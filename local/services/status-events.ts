import type { ExecutionStatus, HistoryEvent, LocalEngine } from '../engine/local-engine.js';
import { deliverEvent, type EventDeliveries } from '../aws/event-delivery.js';

/**
 * What EventBridge does on AWS for the rules on the state machine's "Execution Status Change":
 * when a local execution ends, the rules' targets get the same event shape
 * (events/execution-failed.json). Closing the engine is not an ending worth reporting: the
 * process is going away, and its watchdog finds the run on the next start.
 */
export const ENGINE_CLOSED = 'LocalEngine.Closed';

const ENDINGS: Record<string, ExecutionStatus> = {
  ExecutionFailed: 'FAILED',
  ExecutionTimedOut: 'TIMED_OUT',
  ExecutionAborted: 'ABORTED',
  // A child run's end wakes its parent's wait (DurableAgent's `children` rule).
  ExecutionSucceeded: 'SUCCEEDED',
};

export type StatusChangeTarget = (event: ReturnType<typeof executionStatusChange>) => Promise<unknown>;

/** The deliveries under way, per engine: what `settleStatusChanges` waits for. */
const underWay = new WeakMap<LocalEngine, Set<Promise<unknown>>>();
/** The deliveries made so far, per engine, copies included: what `deliveredStatusChanges` tells. */
const made = new WeakMap<LocalEngine, number>();

/**
 * Sends each execution ending whose status is in `rule` to `target`, as often as `deliveries` says
 * (at least once, as EventBridge: local/aws/event-delivery.ts); errors go to `log`.
 */
export function routeStatusChanges(engine: LocalEngine, rule: readonly ExecutionStatus[], target: StatusChangeTarget, log: (line: string) => void, deliveries: EventDeliveries = { times: 1, overlapping: false }): () => void {
  const pending = underWay.get(engine) ?? new Set();
  underWay.set(engine, pending);
  return engine.on((event: HistoryEvent & { executionArn: string }) => {
    const status = ENDINGS[event.type];
    if (!status || !rule.includes(status)) return;
    const details = event.executionFailedEventDetails ?? event.executionTimedOutEventDetails ?? event.executionAbortedEventDetails;
    if (details?.error === ENGINE_CLOSED) return;
    // The ending event is recorded before the execution's status is set: report it once it is.
    const delivered = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      const execution = engine.describeExecution(event.executionArn);
      const counted: StatusChangeTarget = (copy) => (made.set(engine, (made.get(engine) ?? 0) + 1), target(copy));
      return deliverEvent(deliveries, executionStatusChange(engine, execution, event.timestamp), counted, (error: unknown) =>
        log(`execution status change of ${execution.name}: ${error instanceof Error ? error.message : String(error)}`),
      );
    });
    pending.add(delivered);
    void delivered.finally(() => pending.delete(delivered));
  });
}

/**
 * Waits until every status change reported so far was delivered: what a closing stack does before
 * it stops its handlers. An execution stopped just before (StopExecution, then the process ends)
 * is then recorded as killed, instead of left `running` for the next engine's watchdog to resume.
 */
export async function settleStatusChanges(engine: LocalEngine): Promise<void> {
  const pending = underWay.get(engine);
  while (pending && pending.size > 0) await Promise.allSettled([...pending]);
}

/** How many status changes of `engine`'s executions were delivered to a target so far, each copy counted (`statusChangeDeliveries`). */
export function deliveredStatusChanges(engine: LocalEngine): number {
  return made.get(engine) ?? 0;
}

/** The EventBridge event Step Functions sends for an execution that ended. */
export function executionStatusChange(engine: LocalEngine, execution: ReturnType<LocalEngine['describeExecution']>, at: Date) {
  return {
    version: '0',
    'detail-type': 'Step Functions Execution Status Change' as const,
    source: 'aws.states' as const,
    time: at.toISOString(),
    resources: [execution.executionArn],
    detail: {
      executionArn: execution.executionArn,
      // The detail is DescribeExecution's (https://docs.aws.amazon.com/step-functions/latest/dg/cw-events.html):
      // the state machine's own ARN, and the version and alias ARNs it was started with, if any.
      stateMachineArn: engine.stateMachineArn,
      ...(execution.stateMachineVersionArn !== undefined && { stateMachineVersionArn: execution.stateMachineVersionArn }),
      ...(execution.stateMachineAliasArn !== undefined && { stateMachineAliasArn: execution.stateMachineAliasArn }),
      name: execution.name,
      status: execution.status,
      startDate: execution.startDate.getTime(),
      stopDate: (execution.stopDate ?? at).getTime(),
      input: execution.input,
      error: execution.error ?? null,
      cause: execution.cause ?? null,
    },
  };
}
