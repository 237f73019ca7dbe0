import { handedOffTo } from '../../lambdas/guards/history.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { RecoveryRecord } from '../../lambdas/records/ledger-records.js';
import type { ExecutionDescription, LocalEngine } from '../engine/local-engine.js';
import { settleStatusChanges } from '../services/status-events.js';

/**
 * Waits for a run's execution and, when it handed the run off (continue-as-new), for its
 * successor, and so on: resolves with the last execution of the chain. The successor is started
 * before its predecessor ends, so it is always there to wait for (a successor that never started —
 * a crash — is the watchdog's: the chain ends here).
 */
export async function waitForChain(engine: Pick<LocalEngine, 'waitForExecution'>, ledger: Pick<Ledger, 'getRun'>, runId: string, executionArn: string): Promise<ExecutionDescription> {
  let description = await engine.waitForExecution(executionArn);
  for (;;) {
    const run = await ledger.getRun(runId);
    const next = run && handedOffTo(run, description.executionArn);
    if (!next) return description;
    try {
      description = await engine.waitForExecution(next);
    } catch {
      return description;
    }
  }
}

/**
 * Waits for a run to stop on this engine: its chain of executions (waitForChain), and when the last
 * one failed or timed out and recovery resumed the run (RecoverRun, on the execution's status
 * change), the recovery's chain, and so on — until an execution ends with nothing to resume it: the
 * run finished, stopped, waits for nobody's hand, or was given up (RecoverRun's bound). The
 * recovery is looked for once the engine's status changes were delivered (RecoverRun decided and,
 * if it recovers, started the execution); `onRecovery` is told of each one followed.
 */
export async function waitForRunEnd(
  engine: LocalEngine,
  ledger: Pick<Ledger, 'getRun'>,
  runId: string,
  executionArn: string,
  onRecovery?: (ended: ExecutionDescription, recovery: RecoveryRecord, next: string) => void,
): Promise<ExecutionDescription> {
  let description = await waitForChain(engine, ledger, runId, executionArn);
  while (description.status === 'FAILED' || description.status === 'TIMED_OUT') {
    await settleStatusChanges(engine);
    // A recovery of this very ending (its key: the ended execution and when), started by name, as
    // an execution of the same state machine (the ARN of an execution names the machine, not its version).
    const recovery = (await ledger.getRun(runId))?.recovery;
    if (!recovery?.key.startsWith(`${description.executionArn}@`)) return description;
    const next = `${description.executionArn.slice(0, description.executionArn.lastIndexOf(':') + 1)}${recovery.executionName}`;
    onRecovery?.(description, recovery, next);
    try {
      description = await waitForChain(engine, ledger, runId, next);
    } catch {
      return description;
    }
  }
  return description;
}
