import type { AgentDefinition } from '../define.js';
import type { ApprovalLedger, GuardLedger, RunLedger } from '../ledger/ledger.js';
import type { Clock } from '../shared/ports.js';
/**
 * `StopExecution` is a kill: the execution is gone without reaching Finalize, so the run record is
 * marked killed here — by StopExecution, when, and why — and is never resumed.
 */
export declare function createExecutionStopped(deps: {
    agent: AgentDefinition;
    ledger: RunLedger & GuardLedger & Pick<ApprovalLedger, 'listPendingApprovals' | 'decideApproval'>;
    clock: Clock;
}): (input: unknown) => Promise<{
    runId?: string;
    action: 'killed' | 'ignored';
}>;
