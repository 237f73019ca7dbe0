import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { ExecutionDescription, LocalEngine } from '../engine/local-engine.js';
/**
 * Waits for a run's execution and, when it handed the run off (continue-as-new), for its
 * successor, and so on: resolves with the last execution of the chain. The successor is started
 * before its predecessor ends, so it is always there to wait for (a successor that never started —
 * a crash — is the watchdog's: the chain ends here).
 */
export declare function waitForChain(engine: Pick<LocalEngine, 'waitForExecution'>, ledger: Pick<Ledger, 'getRun'>, runId: string, executionArn: string): Promise<ExecutionDescription>;
