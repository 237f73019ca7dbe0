import type { AgentDefinition } from '../define.js';
import type { ApprovalLedger, FleetLedger, GuardLedger, RunLedger } from '../ledger/ledger.js';
import { returnFleetLease } from '../guards/fleet.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Clock } from '../shared/ports.js';
import { ExecutionStatusChange, runIdOf } from '../runs/status-change.js';

/**
 * `StopExecution` is a kill: the execution is gone without reaching Finalize, so the run record is
 * marked killed here — by StopExecution, when, and why — and is never resumed.
 */
export function createExecutionStopped(deps: { agent: AgentDefinition; ledger: RunLedger & GuardLedger & Pick<ApprovalLedger, 'listPendingApprovals' | 'decideApproval'> & Pick<FleetLedger, 'returnFleetLease'>; clock: Clock }) {
  return async (input: unknown): Promise<{ runId?: string; action: 'killed' | 'ignored' }> => {
    const { detail } = parseOrThrow(ExecutionStatusChange, input, 'execution status change');
    if (detail.status !== 'ABORTED') return { action: 'ignored' };
    const runId = runIdOf(deps.agent, detail.input);
    const run = runId ? await deps.ledger.getRun(runId) : undefined;
    // Only the execution that drives a running run can kill it (not an earlier one of a resume).
    if (!run || run.executionArn !== detail.executionArn || run.status !== 'running') return { runId, action: 'ignored' };
    const at = new Date(detail.stopDate ?? deps.clock.now().getTime()).toISOString();
    const why = [detail.error, detail.cause].filter(Boolean).join(': ');
    const flag = { by: 'StopExecution', at, reason: why };
    await deps.ledger.killRun(run.runId, flag);
    const reason = `killed by StopExecution at ${at}${why ? `: ${why}` : ''}`;
    const finished = await deps.ledger.finishRun(run.runId, { status: 'killed', stopReason: reason }, deps.clock.now());
    await returnFleetLease(deps.ledger, finished, deps.clock.now());
    await deps.ledger.recordGuardEvent(run.runId, { guard: 'kill', action: 'stopped', reason, at });
    // Its pending approvals wait for nothing now (their task tokens died with the execution): closed,
    // so that no one is asked to decide them and no list shows them as waiting.
    const now = deps.clock.now();
    for (const approval of await deps.ledger.listPendingApprovals()) {
      if (approval.runId !== run.runId) continue;
      await deps.ledger.decideApproval(approval, { status: 'expired', reason: `the run was ${reason}`, decidedBy: 'StopExecution', decidedVia: 'timeout', waitedMs: now.getTime() - Date.parse(approval.createdAt) }, now);
    }
    return { runId: run.runId, action: 'killed' };
  };
}
