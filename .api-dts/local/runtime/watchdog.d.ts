import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { Clock, Executions } from '../../lambdas/shared/ports.js';
import { type EndedExecution, type RecoverResult } from '../../lambdas/steps/recover-run.js';
/** How many of the newest runs the watchdog reads for failed ones (a failed run is not in the running index). */
export declare const FAILED_RUNS_SCANNED = 100;
/**
 * The local engine's watchdog. Executions live in the process that runs the engine: when it dies
 * (a crash, a kill, a power cut), its runs stay marked running in the ledger with nothing driving
 * them — "a perfectly preserved corpse". When an engine starts it looks for such runs and hands
 * each to the same recovery as an EventBridge status change, as an execution found LOST.
 *
 * It also resumes runs that failed by accident (their retries ran out) whose recovery never ran:
 * on AWS the status-change rule recovers them; locally it runs in the engine's process, which may
 * have ended first (`savepoint run` returns once the execution fails, and a closing stack starts
 * nothing). Such a run is recovered as the rule would, keyed by when it failed (a second sweep
 * starts the same recovery, not another); among the newest FAILED_RUNS_SCANNED runs.
 *
 * Only the runs of its own agent: agents may share a state directory (a table), and another
 * agent's run resumed on this engine's state machine would fail each start and be given up as
 * Agent.Unrecoverable. Such a run waits for an engine of its own agent.
 */
export declare function recoverOrphans(deps: {
    ledger: Ledger;
    executions: Pick<Executions, 'isRunning'>;
    recover: (ended: EndedExecution) => Promise<RecoverResult>;
    clock: Clock;
    /** The agent (its name) whose runs this engine drives: only they are recovered. */
    agent: string;
    /** A run the caller resumes itself. */
    except?: string;
    /**
     * Told of a running run whose record fails verification, which is then not recovered (nothing in
     * it can be trusted) while the others are. Without it, such a run's Ledger.IntegrityError is thrown.
     */
    onDamaged?: (runId: string, error: Error) => void;
    /** Whether runs that failed by accident are recovered too (off with the stack's `recovery: false`). @default true */
    failed?: boolean;
}): Promise<RecoverResult[]>;
