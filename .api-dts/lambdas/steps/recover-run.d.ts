import type { AgentDefinition } from '../define.js';
import type { RunLedger } from '../ledger/ledger.js';
import type { RecoveryRecord, RunRecord } from '../records/ledger-records.js';
import type { Clock } from '../shared/ports.js';
/**
 * Recovery without an operator. A run whose execution ended without finishing it — failed after
 * its retries, timed out, or lost with the process that ran it — is resumed by a new execution
 * under the same run id: StartRun takes the run over and every step finds its recorded result in
 * the ledger, so nothing completed is done again and an in-flight side effect is re-sent with its
 * own idempotency key.
 *
 * On AWS an EventBridge rule on the state machine's "Execution Status Change" (FAILED, TIMED_OUT)
 * calls this step; the local engine calls it the same way, and its watchdog calls it for runs that
 * were running when a process died. Recoveries are bounded: after `maxWithoutProgress` recoveries
 * in a row after which the run made no progress, the run is given up with a clear reason.
 *
 * Why a new execution and not RedriveExecution: a redrive continues an execution from the state
 * that failed, but ours fail through a Catch into RecordFailure and end in a Fail state (a redrive
 * would fail there again), a timed-out execution is not redrivable, and an execution lost with
 * its process cannot be redriven anywhere. The ledger is the checkpoint; a new execution reads it.
 * ABORTED is not recovered: StopExecution is an operator's kill.
 */
/** How an execution ended, as recovery needs it. */
export interface EndedExecution {
    runId: string;
    executionArn: string;
    /** `LOST`: found by the local watchdog, the process that ran it is gone. */
    status: 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'LOST';
    /** When it ended (or was found lost); with the ARN, what makes a second delivery harmless. */
    endedAt: string;
    error?: string;
    cause?: string;
}
export interface RecoveryPolicy {
    /** Recoveries in a row without progress (the run's steps did not grow) before the run is given up. */
    readonly maxWithoutProgress: number;
}
export declare const RECOVERY: RecoveryPolicy;
export type RecoveryVerdict = {
    action: 'ignore';
    reason: string;
} | {
    action: 'give-up';
    reason: string;
} | {
    action: 'recover';
    recovery: RecoveryRecord;
    recorded: boolean;
};
/** A run that failed by an accident (its retries ran out), not a decision: recovery resumes it. */
export declare function failedByAccident(run: Pick<RunRecord, 'status' | 'error'>): boolean;
/** What to do about a run whose execution ended: a pure function of the run record. */
export declare function recoveryVerdict(run: RunRecord, ended: EndedExecution, policy: RecoveryPolicy, now: Date): RecoveryVerdict;
/** Starts executions of the agent state machine (`StartExecution`); idempotent per name. */
export interface ExecutionStarter {
    /**
     * Starts execution `name`. With `sameVersionAs`, on the state machine version that execution
     * runs: a run is continued (resumed, recovered, handed off) on its own version, never moved to
     * newer code by accident (runs/versions.ts); otherwise on the configured ARN (the alias).
     */
    start(name: string, input: string, options?: {
        sameVersionAs?: string;
    }): Promise<{
        executionArn: string;
    }>;
}
export interface RecoverDeps {
    ledger: Pick<RunLedger, 'getRun' | 'recordRecovery' | 'finishRun'>;
    starter: ExecutionStarter;
    clock: Clock;
    policy?: RecoveryPolicy;
}
export type RecoverResult = {
    runId: string;
    action: 'ignored' | 'gave-up';
    reason: string;
} | {
    runId: string;
    action: 'recovered';
    reason: string;
    attempt: number;
    executionArn: string;
};
export declare function createRecoverRun(deps: RecoverDeps): (ended: EndedExecution) => Promise<RecoverResult>;
/** The recovery Lambda: an execution status change in, a recovery (or a reason not to) out. */
export declare function createRecoverOnStatusChange(deps: RecoverDeps & {
    agent: AgentDefinition;
}): (event: unknown) => Promise<RecoverResult | {
    action: 'ignored';
    reason: string;
}>;
/** `<runId>-recovery-<n>`, within the 80 characters an execution name may have. */
export declare function recoveryExecutionName(runId: string, attempt: number): string;
