import type { AgentDefinition } from '../define.js';
import type { GuardLedger, RunLedger } from '../ledger/ledger.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Clock } from '../shared/ports.js';
import { ExecutionStatusChange, runIdOf } from '../runs/status-change.js';

/**
 * `StopExecution` is a kill: the execution is gone without reaching Finalize, so the run record is
 * marked killed here — by StopExecution, when, and why — and is never resumed.
 */
export function createExecutionStopped(deps: { agent: AgentDefinition; ledger: RunLedger & GuardLedger; clock: Clock }) {
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
    await deps.ledger.finishRun(run.runId, { status: 'killed', stopReason: reason }, deps.clock.now());
    await deps.ledger.recordGuardEvent(run.runId, { guard: 'kill', action: 'stopped', reason, at });
    return { runId: run.runId, action: 'killed' };
  };
}
