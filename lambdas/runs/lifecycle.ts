import type { RunRecord } from '../records/ledger-records.js';
import { ErrorNames } from '../shared/errors.js';

/**
 * A run's lifecycle in the shape MCP Tasks and OpenAI background mode use, next to savepoint's own
 * status: `input_required` while a person's decision is awaited.
 */
export type Lifecycle = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** Every lifecycle, for what checks one. */
export const LIFECYCLES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const satisfies readonly Lifecycle[];

/**
 * Every status of a run record (records/ledger-records.ts RunStatus; the type below fails to
 * compile when one is missing here). Listed here, not read from RunStatus: the client imports this
 * module, and loads no zod (dist/client/index.js: 11 modules).
 */
const RUN_STATUSES = ['running', 'succeeded', 'stopped', 'killed', 'failed'] as const satisfies readonly RunRecord['status'][];
const everyStatus: Exclude<RunRecord['status'], (typeof RUN_STATUSES)[number]> extends never ? true : never = true;
void everyStatus;

/** What a listing of runs filters on (`GET /v1/runs?status=`, `savepoint runs --status`): a run's status or its lifecycle, in one list. */
export const STATUS_FILTERS = [...RUN_STATUSES, 'working', 'input_required', 'completed', 'cancelled'] as const satisfies readonly (RunRecord['status'] | Lifecycle)[];

/**
 * The header of a long-poll (`GET /runs/{runId}?wait=`: runs/runs-api.ts) that names the lifecycle
 * its caller last read of the run: the poll waits while the run is still there, and answers at
 * once when it has moved on already. Without it the poll waits from what it reads first, and a
 * run that moved between the caller's read and the poll (to `input_required`, say, which it leaves
 * only when a person decides) would hold the poll to its cap. A header, not a query parameter: an
 * API older than it ignores it (its query is strict), and answers a newer client as it always did.
 */
export const SEEN_LIFECYCLE_HEADER = 'savepoint-seen-lifecycle';

/** The lifecycles a run never leaves. */
export const TERMINAL_LIFECYCLES: readonly Lifecycle[] = ['completed', 'failed', 'cancelled'];

/** Failures that are decisions, not accidents: recovering them would only fail again. */
const DELIBERATE: ReadonlySet<string> = new Set([ErrorNames.InvalidInput, ErrorNames.Terminal, ErrorNames.Unrecoverable, ErrorNames.VersionMismatch, ErrorNames.LedgerIntegrity]);

/** A run that failed by an accident (its retries ran out), not a decision: recovery resumes it (steps/recover-run.ts). */
export function failedByAccident(run: { readonly status: RunRecord['status']; readonly error?: { readonly error: string } }): boolean {
  return run.status === 'failed' && !DELIBERATE.has(run.error?.error ?? '');
}

/**
 * A run's lifecycle from its status and the decisions it waits for, and — for a failed run — its
 * error: a run that failed by accident (an outage past its retries) is `working`, not `failed`,
 * since recovery resumes it (and `failed` is a lifecycle a run never leaves: MCP Tasks' terminal
 * status); one that failed by a decision (a refused key, given up after its recoveries) is `failed`.
 * Without `error`, a failed run is `failed`.
 *
 * @example
 * lifecycleOf('failed', 0, { error: 'Agent.Transient' }); // 'working': recovery resumes it
 * lifecycleOf('failed', 0, { error: 'Agent.Unrecoverable' }); // 'failed'
 */
export function lifecycleOf(status: RunRecord['status'], pendingApprovals: number, error?: { readonly error: string }): Lifecycle {
  switch (status) {
    case 'running':
      return pendingApprovals > 0 ? 'input_required' : 'working';
    case 'succeeded':
      return 'completed';
    case 'killed':
      return 'cancelled';
    case 'failed':
      return error !== undefined && failedByAccident({ status, error }) ? 'working' : 'failed';
    case 'stopped': // a guard stopped it short of its goal (a budget, the loop detector)
      return 'failed';
  }
}
