import { handedOffTo } from '../../lambdas/guards/history.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { ExecutionDescription, LocalEngine } from '../engine/local-engine.js';

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
