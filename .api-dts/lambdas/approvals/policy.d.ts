import type { ApprovalRecord, DecisionChannel, RunConfig, RunRecord } from '../records/ledger-records.js';
/**
 * The approval policy: set by whoever deploys the agent (construct props, or the local runner),
 * never by the run's input, the model or a tool result. Pure and table-tested, like `decide`.
 */
export interface ApprovalPolicy {
    /** The identity that started a run may not approve its requests. @default true on AWS, false locally */
    readonly separationOfDuties: boolean;
    /** Above this amount (minor units), an approval needs two different approvers. @default none */
    readonly secondApproverAboveMinor?: number;
}
/** Who decides, as they proved it: a link's approver, an IAM principal, a local user. */
export interface Identity {
    readonly id: string;
    readonly via: DecisionChannel;
}
export type Verdict = {
    action: 'decide';
}
/** The first of two approvals: recorded, the approval stays pending for a second person. */
 | {
    action: 'first';
} | {
    action: 'refuse';
    status: 403 | 409;
    message: string;
};
/** Whether `identity` may decide `approval` now, and what its decision does. */
export declare function decisionVerdict(input: {
    approval: ApprovalRecord;
    run: Pick<RunRecord, 'runId' | 'startedBy'>;
    identity: Identity;
    decision: 'approve' | 'reject';
    policy: ApprovalPolicy;
    /** The run the decider means (a link's claim, or the body's `runId`). */
    runId?: string;
    linkId?: string;
}): Verdict;
export declare function needsTwo(approval: Pick<ApprovalRecord, 'amount'>, policy: ApprovalPolicy): boolean;
/** What the state machine allows, read from its definition (lambdas/approvals/limits.ts). */
export interface ExecutionLimits {
    /** The execution's own timeout (`TimeoutSeconds` of the definition). */
    readonly executionTimeoutSeconds?: number;
    /** The shortest task timeout of the states that wait for a decision (the backstop). */
    readonly approvalWaitSeconds?: number;
}
/**
 * Configurations that cannot work, refused at StartRun with the setting named: an approval that
 * would outlive the wait state, or a decision deadline after the execution's own timeout.
 */
export declare function configProblems(config: Pick<RunConfig, 'approvalTimeoutSeconds' | 'maxWallSeconds'>, limits: ExecutionLimits): string[];
/** The limits a definition (ASL JSON) sets: its `TimeoutSeconds` and its wait-for-token Tasks'. */
export declare function executionLimits(definition: string): ExecutionLimits;
