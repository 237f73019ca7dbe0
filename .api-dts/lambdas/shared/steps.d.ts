/**
 * The Lambda functions of savepoint, by step. infra/ sets `SAVEPOINT_STEP` on each function to
 * this name and points it at `lambdas/handlers/<name>.ts`; the local engine maps each Task state of
 * the synthesized definition back to its step through the same variable.
 */
export declare const Steps: {
    readonly StartRun: 'start-run';
    readonly BudgetCheck: 'budget-check';
    readonly CallModel: 'call-model';
    readonly RequestApproval: 'request-approval';
    readonly CallTool: 'call-tool';
    readonly Finalize: 'finalize';
    readonly ApprovalCallback: 'approval-callback';
    /** `POST /runs` on the approval API: starts a run as the caller IAM proved (lambdas/runs/starter.ts). */
    readonly RunsApi: 'runs-api';
    readonly ExpireApprovals: 'expire-approvals';
    readonly RecoverRun: 'recover-run';
    readonly ExecutionStopped: 'execution-stopped';
    /** Every 15 minutes: resumes runs whose execution ended unnoticed, reports orphaned approvals. */
    readonly Sweep: 'sweep';
    readonly Handoff: 'handoff';
    /** Every 6 hours: deletes old state machine versions nothing needs (lambdas/steps/prune-versions.ts). */
    readonly PruneVersions: 'prune-versions';
    readonly Compact: 'compact';
};
export type StepName = (typeof Steps)[keyof typeof Steps];
