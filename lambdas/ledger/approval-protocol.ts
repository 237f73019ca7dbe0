import type { ApprovalDecision } from './ledger.js';
import type { ApprovalRecord } from '../records/ledger-records.js';
import { expiresAt, fail, keep, write, type Current, type Step } from './protocol.js';

/**
 * The ledger's protocol for approvals (protocol.ts has the rest, and says how a transition runs):
 * an approval is created once, decided once (a two-person rule's first approval recorded once
 * before it), and a decision is owed to its execution (`undelivered`) until it is delivered.
 */

/**
 * Whether a (re)requested approval needs its task token stored: a retried or resumed request
 * carries a new one, and a pending approval must wake the execution that waits now. A decided one
 * keeps its decision (and the token it was decided on).
 */
export function tokenWanted(current: Current<ApprovalRecord>): boolean {
  return !current || current.record.status === 'pending';
}

/** The approval is created once; a pending or decided one is returned as it is. */
export function upsertApproval(current: Current<ApprovalRecord>, approval: ApprovalRecord, now: Date): Step<ApprovalRecord> {
  return current ? keep(current.record) : write(approval, { expiresAt: expiresAt(now) }, approval);
}

type ApprovalKey = Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>;
const noApproval = (key: ApprovalKey) => new Error(`no approval for call ${key.turn}/${key.call} of run ${key.runId}`);
const withLink = (record: ApprovalRecord, linkId: string | undefined) => {
  const usedLinks = linkId ? [...(record.usedLinks ?? []), linkId] : record.usedLinks;
  return usedLinks ? { usedLinks } : {};
};

/** Only a pending approval can be decided: a second decision gets the first one back. */
export function decideApproval(current: Current<ApprovalRecord>, key: ApprovalKey, decision: ApprovalDecision, now: Date): Step<{ decided: boolean; record: ApprovalRecord }> {
  if (!current) return fail(noApproval(key));
  if (current.record.status !== 'pending') return keep({ decided: false, record: current.record });
  const { linkId, reason, status, decidedBy, decidedVia, decisionMac, waitedMs, sharedDecision, undelivered } = decision;
  const next: ApprovalRecord = {
    ...current.record,
    status,
    reason: reason ?? '',
    decidedBy,
    decidedAt: now.toISOString(),
    ...(decidedVia && { decidedVia }), ...(decisionMac && { decisionMac }),
    ...(waitedMs !== undefined && { waitedMs }), ...(sharedDecision && { sharedDecision }), ...(undelivered && { undelivered }),
    ...withLink(current.record, linkId),
  };
  return write(next, current.meta, { decided: true, record: next });
}

/** The first of two approvals, once: only on a pending approval without one. */
export function recordFirstApproval(
  current: Current<ApprovalRecord>,
  key: ApprovalKey,
  first: NonNullable<ApprovalRecord['firstApproval']>,
  linkId: string | undefined,
): Step<{ recorded: boolean; record: ApprovalRecord }> {
  if (!current) return fail(noApproval(key));
  if (current.record.status !== 'pending' || current.record.firstApproval) return keep({ recorded: false, record: current.record });
  const next: ApprovalRecord = { ...current.record, firstApproval: first, ...withLink(current.record, linkId) };
  return write(next, current.meta, { recorded: true, record: next });
}

/** A decision delivered, or no longer waited on: its `undelivered` mark dropped (ApprovalRecord); none, nothing written. */
export const markDelivered = (current: Current<ApprovalRecord>): Step<void> => (current?.record.undelivered ? write(withoutDeliveryMark(current.record), current.meta, undefined) : keep(undefined));
/** The record without its `undelivered` mark: what the decision is, delivered or not. */
export const withoutDeliveryMark = ({ undelivered: _delivered, ...record }: ApprovalRecord): ApprovalRecord => record;
