import type { AgentDefinition } from '../define.js';
import type { ApprovalLedger, RunLedger } from '../ledger/ledger.js';
import type { RunRecord } from '../records/ledger-records.js';
import type { Clock } from '../shared/ports.js';
import { type EndedExecution, type ExecutionStarter, type RecoveryPolicy } from './recover-run.js';
/**
 * The sweeper: what the event-driven recovery missed. Recovery normally starts from the EventBridge
 * rule on a FAILED or TIMED_OUT execution; if that event never arrived, or its Lambda failed past
 * its retries (the message then waits in the failed-events queue), the run stays `running` with no
 * execution driving it. Every 15 minutes the sweeper lists the agent's runs still marked `running`,
 * asks Step Functions how their execution ended, and resumes them through the very same
 * `createRecoverRun` — same verdict, same bound, same idempotency key (`<arn>@<stopDate>`), so a
 * sweep racing the event-driven recovery starts the same named execution, not a second one.
 *
 *   run running, execution RUNNING                 → left alone
 *   run running, execution FAILED / TIMED_OUT      → recovered (or given up past the bound)
 *   run running, execution gone (history expired)  → recovered as LOST
 *   run running, execution ABORTED / SUCCEEDED     → reported (a kill the stop rule missed; an
 *                                                    execution that ended without finishing the run)
 *
 * It also reports pending approvals whose execution is gone (nobody would ever receive the
 * decision) and how long the oldest approval has waited: the metrics behind two alarms.
 */
/** How an execution stands, as the sweeper needs it (`DescribeExecution`); `undefined`: no such execution. */
export interface ExecutionDescription {
    status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'PENDING_REDRIVE';
    /** ISO time the execution ended. */
    stopDate?: string;
    error?: string;
    cause?: string;
}
export interface ExecutionLookup {
    describe(executionArn: string): Promise<ExecutionDescription | undefined>;
}
export interface SweepDeps {
    agent: Pick<AgentDefinition, 'name'>;
    ledger: Pick<RunLedger, 'listRunningRuns' | 'getRun' | 'recordRecovery' | 'finishRun'> & Pick<ApprovalLedger, 'listPendingApprovals'>;
    executions: ExecutionLookup;
    starter: ExecutionStarter;
    clock: Clock;
    policy?: RecoveryPolicy;
    /**
     * An execution that ended less than this long ago is left to the event-driven recovery (which
     * normally answers within seconds). @default 5 minutes
     */
    graceMs?: number;
    /** The most runs read per sweep. @default 1000 */
    maxRuns?: number;
}
export interface SweepResult {
    /** Runs of this agent marked `running` that were looked at. */
    checked: number;
    recovered: {
        runId: string;
        executionArn: string;
        reason: string;
    }[];
    gaveUp: {
        runId: string;
        reason: string;
    }[];
    /** Runs that need a person: their execution ended in a way recovery does not answer. */
    reported: {
        runId: string;
        reason: string;
    }[];
    /** Runs that could not be swept (the error is in the log; the next sweep tries again). */
    failed: {
        runId: string;
        error: string;
    }[];
    approvalsWaiting: number;
    /** Seconds the oldest pending approval has waited (0 when none waits). */
    oldestApprovalAgeSeconds: number;
    /** Pending approvals whose execution is gone: a decision would reach nobody. */
    orphanedApprovals: {
        approvalId: string;
        runId: string;
        reason: string;
    }[];
    /** One line for the log: what was done and what needs a person (run ids and reasons, nothing else). */
    summary: string;
}
export declare function createSweep(deps: SweepDeps): () => Promise<SweepResult>;
/** What recovery needs to know about the execution of a running run, or why it is not recovery's to answer. */
export declare function endedExecution(run: RunRecord, execution: ExecutionDescription | undefined): EndedExecution | 'running' | {
    report: string;
};
