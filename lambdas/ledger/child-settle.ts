import { spendIsFinal } from '../records/child-budget.js';
import type { RunRecord } from '../records/ledger-records.js';
import { keep, write, type Current, type Step } from './protocol.js';

/**
 * A child run closed for its parent (GuardLedger `closeChildRun`), on its own run item: a resume's
 * attach (protocol.ts `attachExecution`) and this close read the same item, so one comes first —
 * closed, the run is not resumed any more; resumed first, it is running, its spend not final, and
 * it is closed at its next end. A second close finds it closed and changes nothing.
 */
export function closeChildRun(current: Current<RunRecord>, now: Date): Step<RunRecord | undefined> {
  if (!current) return keep(undefined);
  const run = current.record;
  if (run.settledIntoParentAt !== undefined) return keep(run);
  if (!spendIsFinal(run)) return keep(undefined);
  const closed: RunRecord = { ...run, settledIntoParentAt: now.toISOString() };
  return write(closed, current.meta, closed);
}
