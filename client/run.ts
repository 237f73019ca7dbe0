import type { Lifecycle } from '../lambdas/runs/lifecycle.js';
import type { RunReport } from '../lambdas/runs/report.js';
import type { ApprovalRecord } from '../lambdas/records/ledger-records.js';

/** A run as the runs API answers it (`GET /v1/runs/{runId}`). */
export interface Run {
  /** The run's id, its idempotency key. */
  runId: string;
  /** The agent that runs it. */
  agent: string;
  /** Where the run is, in MCP Tasks' states: `working`, `input_required`, then `completed`, `failed` or `cancelled`. */
  lifecycle: Lifecycle;
  /** savepoint's own status and figures. */
  report: RunReport;
  /** The decisions it waits for (never a task token). */
  approvals: Approval[];
  /** Read it again after this many seconds; absent once the run has ended. */
  pollAfterSeconds?: number;
}

/** An approval as a caller may see it. */
export type Approval = Omit<ApprovalRecord, 'kind'>;
