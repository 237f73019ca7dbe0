/**
 * A Standard execution's history holds at most 25,000 events, a hard quota. As AWS documents it
 * (https://docs.aws.amazon.com/step-functions/latest/dg/bp-history-limit.html): at 24,999 events
 * the execution waits for the next; if event 25,000 is ExecutionSucceeded it succeeds, else
 * ExecutionFailed is logged as event 25,000 and the execution fails — with the error and cause
 * AWS reports for it (States.Runtime, "The execution reached the maximum number of history events
 * (25000).").
 */
import { HISTORY_EVENT_LIMIT } from '../../lambdas/shared/limits.js';

/** How an execution ends that reached the quota. */
export const HISTORY_QUOTA_FAILURE = {
  status: 'FAILED',
  error: 'States.Runtime',
  cause: `The execution reached the maximum number of history events (${HISTORY_EVENT_LIMIT}).`,
} as const;

/**
 * Whether the event after `recorded` events may not be recorded: the event that would be the
 * 25,000th may only end the execution (`endsExecution`); any other fails it with HISTORY_QUOTA_FAILURE.
 */
export function historyQuotaRefuses(recorded: number, endsExecution: boolean): boolean {
  return recorded >= HISTORY_EVENT_LIMIT - 1 && !endsExecution;
}

/** The outcome an execution with `recorded` events ends with: at the quota, only a success is event 25,000. */
export function outcomeAtHistoryQuota<Outcome extends { readonly status: string }>(recorded: number, outcome: Outcome): Outcome | typeof HISTORY_QUOTA_FAILURE {
  return recorded >= HISTORY_EVENT_LIMIT - 1 && outcome.status !== 'SUCCEEDED' ? HISTORY_QUOTA_FAILURE : outcome;
}
