/**
 * The Lambda functions of savepoint, by step. infra/ sets `SAVEPOINT_STEP` on each function to
 * this name and points it at `lambdas/handlers/<name>.ts`; the local engine maps each Task state of
 * the synthesized definition back to its step through the same variable.
 */
export const Steps = {
  StartRun: 'start-run',
  BudgetCheck: 'budget-check',
  CallModel: 'call-model',
  RequestApproval: 'request-approval',
  CallTool: 'call-tool',
  Finalize: 'finalize',
  ApprovalCallback: 'approval-callback',
  /** `POST /runs` on the approval API: starts a run as the caller IAM proved (lambdas/runs/starter.ts). */
  RunsApi: 'runs-api',
  ExpireApprovals: 'expire-approvals',
  RecoverRun: 'recover-run',
  ExecutionStopped: 'execution-stopped',
  /** Every 15 minutes: resumes runs whose execution ended unnoticed, reports orphaned approvals. */
  Sweep: 'sweep',
  Handoff: 'handoff',
  /** Every 6 hours: deletes old state machine versions nothing needs (lambdas/steps/prune-versions.ts). */
  PruneVersions: 'prune-versions',
  Compact: 'compact',
  /** StartItemRun and CheckItemRun of the stack's batches (infra/batch-state-machine.ts): an agent's runs started through its runs API's start path (lambdas/runs/batch.ts). */
  BatchItem: 'batch-item',
  /** `GET /runs/{runId}/events` on the approval API: a run's events, streamed (lambdas/adapters/run-events-lambda.ts). */
  RunEvents: 'run-events',
} as const;

/** A step of the harness, by the name its Lambda function and handler carry (`Steps`). */
export type StepName = (typeof Steps)[keyof typeof Steps];

/** How many tool calls of one model turn run at once by default (the `ToolCalls` Map's MaxConcurrency: infra/agent-state-machine.ts, local/replay/loop.ts). */
export const DEFAULT_TOOL_CONCURRENCY = 10;
