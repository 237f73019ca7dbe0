import type { RunRecord } from '../records/ledger-records.js';
import { FINISHED_STATUSES } from '../ledger/pruning.js';
import { failedByAccident } from './lifecycle.js';

// Where it is defined (runs/lifecycle.ts): the client reads a run's lifecycle with it, and loads nothing of the ledger's.
export { failedByAccident };

/**
 * Whether nothing more will happen to the run: it succeeded, stopped or was killed, or failed by a
 * decision. A run that failed by accident is not over: recovery resumes it (steps/recover-run.ts).
 */
export function runIsOver(run: Pick<RunRecord, 'status' | 'error'>): boolean {
  return FINISHED_STATUSES.has(run.status) || (run.status === 'failed' && !failedByAccident(run));
}
