/**
 * The time a run waits for people, from its approvals: each approval's wait, and the part of it no
 * other wait of the run covers, so that the run's waiting time is the union of its waits, not their
 * sum (two approvals of one turn wait side by side). Pure arithmetic over the records: decision.ts
 * counts a decided approval's part into the run once; a report adds the pending ones' so far.
 */
import { approvalSkOf, type ApprovalRecord } from '../records/ledger-records.js';

/** When an approval waited: from its request to its decision (`undefined` while pending). */
export function waitOf(approval: ApprovalRecord): { from: number; to: number } | undefined {
  const from = Date.parse(approval.createdAt);
  const to = approval.waitedMs !== undefined ? from + approval.waitedMs : approval.decidedAt ? Date.parse(approval.decidedAt) : undefined;
  return to === undefined ? undefined : { from, to };
}

/**
 * The part of `approval`'s wait not covered by the waits of the approvals decided before it (an
 * order every counter agrees on: by decision time, then by key). Each approval adds what it waited
 * beyond the earlier ones, so the counts add up to the union of the waits, whatever order they are
 * counted in.
 */
export function uncoveredWaitMs(approval: ApprovalRecord, others: readonly ApprovalRecord[]): number {
  const own = waitOf(approval);
  if (!own) return 0;
  const key = approvalSkOf(approval);
  const earlier = (other: { to: number; key: string }) => other.to < own.to || (other.to === own.to && other.key < key);
  const covering = others
    .flatMap((other) => {
      const wait = waitOf(other);
      return wait && approvalSkOf(other) !== key && other.runId === approval.runId ? [{ ...wait, key: approvalSkOf(other) }] : [];
    })
    .filter(earlier)
    .sort((a, b) => a.from - b.from);
  let uncovered = 0;
  let at = own.from;
  for (const wait of covering) {
    if (wait.to <= at) continue;
    if (wait.from >= own.to) break;
    if (wait.from > at) uncovered += wait.from - at;
    at = Math.max(at, wait.to);
    if (at >= own.to) break;
  }
  return uncovered + Math.max(0, own.to - at);
}

/**
 * How long the pending approvals of one run (`approvals`: its own) have waited by `now`, beyond what its decided approvals
 * covered: the wait a report counts as waiting for people (not the wall clock's) before any
 * decision counts it into the run (`approvalWaitMs`).
 */
export function pendingWaitMs(approvals: readonly ApprovalRecord[], now: Date): number {
  const pending = approvals.filter((approval) => approval.status === 'pending');
  if (pending.length === 0) return 0;
  // Each pending approval as if decided now: ordered after every decided one, so only its uncovered part counts.
  const asOfNow = approvals.map((approval) => (approval.status === 'pending' ? { ...approval, waitedMs: Math.max(0, now.getTime() - Date.parse(approval.createdAt)) } : approval));
  return asOfNow.filter((approval) => approval.status === 'pending').reduce((sum, approval) => sum + uncoveredWaitMs(approval, asOfNow), 0);
}
