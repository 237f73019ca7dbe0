import type { ApprovalShare, ApprovalShareRequest } from './ledger.js';
import { expiresAt, keep, write, type Current, type Key, type Step } from './protocol.js';
import type { ApprovalRef, EffectApprovalRecord } from '../records/ledger-records.js';

/**
 * The ledger's rule for one approval per effect, in protocol.ts's shape. Calls of an effect named
 * by a business key (`defineTool({ idempotencyKey })`) in concurrent runs would each ask a person
 * to approve the same write; instead the first to ask leads, and every other call asking for the
 * same subject (the tool and its arguments) follows: it asks nobody and takes the leader's decision
 * (steps/request-approval.ts, approvals/decision.ts). One conditional write decides who leads:
 *
 *   run A: read nothing ─► put(leader A, IF_UNCHANGED: absent) ✓ ─► asks a person
 *   run B: read nothing ─► put(leader B, IF_UNCHANGED: absent) ✗ (A wrote)
 *          read leader A ─► put(followers [B], IF_UNCHANGED) ✓ ─► waits on A's decision
 *
 * The leader's own call asking again (a retried RequestApproval) leads still; a call asking for
 * another subject under the same key is `apart`: it asks on its own (its send is refused or
 * answered by the effect's claim anyway). A leader whose approval expired undecided is replaced by
 * the call that finds it so (`replacing`): a person is asked again, once, for the next one.
 */
export const EFFECT_APPROVAL_FOLLOWERS_KEPT = 256;

/** Where it lives: beside the effect's claim (protocol.ts `effectKey`), in the effect's partition. */
export const effectApprovalKey = (key: string): Key => ({ pk: `EFFECT#${key}`, sk: 'APPROVAL' });

const sameCall = (a: ApprovalRef, b: ApprovalRef) => a.runId === b.runId && a.turn === b.turn && a.call === b.call;

export function shareApproval(current: Current<EffectApprovalRecord>, request: ApprovalShareRequest, now: Date): Step<ApprovalShare> {
  const record = current?.record;
  const lead = (): Step<ApprovalShare> => {
    const written: EffectApprovalRecord = { kind: 'effectApproval', key: request.key, subject: request.subject, leader: request.approval, followers: [], createdAt: now.toISOString(), updatedAt: now.toISOString() };
    return write(written, { ...current?.meta, expiresAt: expiresAt(now) }, { role: 'leader', leader: request.approval });
  };
  if (!record) return lead();
  if (sameCall(record.leader, request.approval)) return keep({ role: 'leader', leader: record.leader });
  if (record.subject !== request.subject) return keep({ role: 'apart' });
  if (request.replacing !== undefined && request.replacing === record.leader.approvalId) return lead();
  const known = record.followers.find((follower) => sameCall(follower, request.approval));
  if (known) return keep({ role: 'follower', leader: record.leader });
  if (record.followers.length >= EFFECT_APPROVAL_FOLLOWERS_KEPT) return keep({ role: 'apart' });
  const written: EffectApprovalRecord = { ...record, followers: [...record.followers, request.approval], updatedAt: now.toISOString() };
  return write(written, { ...current.meta, expiresAt: expiresAt(now) }, { role: 'follower', leader: record.leader });
}
