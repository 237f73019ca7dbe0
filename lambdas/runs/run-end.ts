import type { RunRecord } from '../records/ledger-records.js';
import { ErrorNames } from '../shared/errors.js';
import { FINISHED_STATUSES } from '../ledger/pruning.js';

/** Failures that are decisions, not accidents: recovering them would only fail again. */
const DELIBERATE: ReadonlySet<string> = new Set([ErrorNames.InvalidInput, ErrorNames.Terminal, ErrorNames.Unrecoverable, ErrorNames.VersionMismatch, ErrorNames.LedgerIntegrity]);

/** A run that failed by an accident (its retries ran out), not a decision: recovery resumes it. */
export function failedByAccident(run: Pick<RunRecord, 'status' | 'error'>): boolean {
  return run.status === 'failed' && !DELIBERATE.has(run.error?.error ?? '');
}

/**
 * Whether nothing more will happen to the run: it succeeded, stopped or was killed, or failed by a
 * decision. A run that failed by accident is not over: recovery resumes it (steps/recover-run.ts).
 */
export function runIsOver(run: Pick<RunRecord, 'status' | 'error'>): boolean {
  return FINISHED_STATUSES.has(run.status) || (run.status === 'failed' && !failedByAccident(run));
}
