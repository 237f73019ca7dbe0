import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { KillFlag } from '../lambdas/records/ledger-records.js';
import type { SavepointClient } from './ledger-client.js';
import { InvalidInputError } from '../lambdas/shared/errors.js';

/**
 * The global kill switch on (`savepoint kill --all`, the console's kill-all): every run stops
 * before its next step. A run waiting for a person takes no next step until its approval is
 * decided (up to its timeout), so each such run is killed as `kill <runId>` kills it — its pending
 * approvals rejected — and stops now. Answers the runs stopped so.
 */
export async function killEveryRun(ledger: Pick<Ledger, 'setGlobalKill'>, client: Pick<SavepointClient, 'approvals' | 'cancel'>, flag: KillFlag): Promise<string[]> {
  await ledger.setGlobalKill(flag);
  const waiting = [...new Set((await client.approvals()).map((approval) => approval.runId))];
  // Every waiting run is tried: one that cannot be stopped (an approval this caller may not reject)
  // does not leave the others waiting for a person; what failed is said once all were tried.
  const failed: string[] = [];
  for (const runId of waiting) {
    try {
      await client.cancel(runId, { by: flag.by, reason: flag.reason });
    } catch (error) {
      failed.push(error instanceof Error ? error.message : String(error));
    }
  }
  if (failed.length > 0) throw new InvalidInputError(`the global kill switch is on; ${failed.join('; ')}`);
  return waiting;
}
