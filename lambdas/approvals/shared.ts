import { createHash } from 'node:crypto';
import { stableJson } from '../define.js';
import type { ApprovalLedger, EffectApprovalLedger, Ledger } from '../ledger/ledger.js';
import { countWait } from './decision.js';
import type { ApprovalRecord, ApprovalRef } from '../records/ledger-records.js';

/**
 * One approval per effect: calls of an effect named by a business key in concurrent runs share one
 * request to a person (the ledger's rule: ledger/effect-approvals.ts). The first call to ask leads
 * and is asked as any; a call of another run asking for the same subject follows: its approval is
 * recorded (its execution waits on its own task token) with `sharedWith` the leader, and nobody is
 * told. The leader's decision wakes it (`wakeFollowers`, by the approval API and the expiry sweep),
 * or is found decided when it asks; its CallTool then takes that decision as its own
 * (`takeSharedDecision`), signed as it was: the MAC covers the effect and the subject
 * (approvals/decision-mac.ts), so it approves that write with those arguments in any of the runs.
 *
 *   run A: RequestApproval ─► shareApproval: leader ─► asks a person ─────────► decided ─► wakes B
 *   run B: RequestApproval ─► shareApproval: follower of A ─► waits (nobody asked) ──► CallTool takes A's decision
 */

/** What a call's approval approves: the tool and its arguments, as a SHA-256 (two calls asking the same share one request). */
export function effectSubject(toolName: string, args: unknown): string {
  return createHash('sha256').update(stableJson([toolName, args ?? null])).digest('hex');
}

const refOf = (approval: ApprovalRecord): ApprovalRef => ({ approvalId: approval.approvalId, runId: approval.runId, turn: approval.turn, call: approval.call });

/**
 * The approval RequestApproval records for `requested`: itself as the effect's leader (with the
 * leader's id: a retry asks under the first attempt's), or following the leader's request, or apart
 * (another subject holds the key). A leader found expired undecided is replaced: this call asks.
 */
export async function shareEffectApproval(ledger: Pick<EffectApprovalLedger, 'shareApproval'> & Pick<ApprovalLedger, 'getApproval'>, requested: ApprovalRecord, now: Date): Promise<ApprovalRecord> {
  const { effect } = requested;
  if (!effect) return requested;
  const ask = (replacing?: string) => ledger.shareApproval({ key: effect.key, subject: effect.subject, approval: refOf(requested), ...(replacing && { replacing }) }, now);
  let share = await ask();
  if (share.role === 'follower') {
    const leader = await ledger.getApproval(share.leader.runId, share.leader.turn, share.leader.call);
    if (leader?.status === 'expired') share = await ask(share.leader.approvalId);
  }
  if (share.role === 'apart') return requested;
  if (share.role === 'leader') return { ...requested, approvalId: share.leader.approvalId };
  return { ...requested, sharedWith: share.leader };
}

/** The approval a follower shares, when it is decided (and for the same effect and subject); else undefined. */
export async function sharedDecisionOf(ledger: Pick<ApprovalLedger, 'getApproval'>, follower: ApprovalRecord): Promise<ApprovalRecord | undefined> {
  const ref = follower.sharedWith;
  if (!ref || !follower.effect) return undefined;
  const leader = await ledger.getApproval(ref.runId, ref.turn, ref.call);
  if (!leader || leader.approvalId !== ref.approvalId || leader.status === 'pending') return undefined;
  if (leader.effect?.key !== follower.effect.key || leader.effect.subject !== follower.effect.subject) return undefined;
  return leader;
}

/**
 * A follower's pending approval decided as the approval it shares was (CallTool, once it is
 * woken): the same status, decider and channel, and that decision's MAC. Undecided there: unchanged.
 */
export async function takeSharedDecision(ledger: Pick<ApprovalLedger, 'getApproval' | 'decideApproval'> & Pick<Ledger, 'listConversation' | 'countStep'>, follower: ApprovalRecord, now: Date): Promise<ApprovalRecord> {
  if (follower.status !== 'pending') return follower;
  const leader = await sharedDecisionOf(ledger, follower);
  if (!leader || leader.status === 'pending') return follower;
  const { record } = await ledger.decideApproval(
    follower,
    {
      status: leader.status,
      reason: leader.reason ?? '',
      decidedBy: leader.decidedBy ?? 'unknown',
      ...(leader.decidedVia && { decidedVia: leader.decidedVia }),
      waitedMs: Math.max(0, now.getTime() - Date.parse(follower.createdAt)),
      sharedDecision: { decidedAt: leader.decidedAt ?? now.toISOString(), ...(leader.decisionMac && { decisionMac: leader.decisionMac }) },
    },
    now,
  );
  // Its wait for a person is not the run's work, as any approval's (the wake delivered no decided record to count).
  await countWait(ledger, record);
  return record;
}
