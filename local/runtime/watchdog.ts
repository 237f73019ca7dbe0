import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { Clock, Executions } from '../../lambdas/shared/ports.js';
import { failedByAccident, type EndedExecution, type RecoverResult } from '../../lambdas/steps/recover-run.js';

/** How many of the newest runs the watchdog reads for failed ones (a failed run is not in the running index). */
export const FAILED_RUNS_SCANNED = 100;

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
export async function recoverOrphans(deps: {
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
}): Promise<RecoverResult[]> {
  // One instant for the whole sweep: with the ARN, the key that makes this sweep's recovery of a run happen once.
  const foundAt = deps.clock.now().toISOString();
  const results: RecoverResult[] = [];
  // A run lost while it waited for a person was not stuck: its recovery is not counted against it
  // (recover-run.ts), so stopping and starting `savepoint serve` never gives such a run up.
  let waiting: Set<string> | undefined;
  for (const run of await deps.ledger.listRunningRuns(deps.onDamaged && { onDamaged: deps.onDamaged })) {
    if (run.agent !== deps.agent || run.runId === deps.except || (await deps.executions.isRunning(run.executionArn))) continue;
    waiting ??= new Set((await deps.ledger.listPendingApprovals()).map((approval) => approval.runId));
    results.push(await deps.recover({ runId: run.runId, executionArn: run.executionArn, status: 'LOST', endedAt: foundAt, ...(waiting.has(run.runId) && { waitingForPerson: true }) }));
  }
  if (deps.failed === false) return results;
  for (const run of await deps.ledger.listRuns(FAILED_RUNS_SCANNED, deps.onDamaged && { onDamaged: deps.onDamaged })) {
    if (run.agent !== deps.agent || run.runId === deps.except || !failedByAccident(run)) continue;
    results.push(
      await deps.recover({
        runId: run.runId,
        executionArn: run.executionArn,
        status: 'FAILED',
        endedAt: run.finishedAt ?? foundAt,
        ...(run.error && { error: run.error.error, cause: run.error.cause }),
      }),
    );
  }
  return results;
}
