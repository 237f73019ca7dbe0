import { createHmac } from 'node:crypto';
import { sameSecret } from '../shared/same-secret.js';
import type { ApprovalRecord } from '../records/ledger-records.js';

/**
 * Decisions are signed by the approval callback with a key only it can sign with (a KMS HMAC key
 * on AWS: the callback may `GenerateMac`, CallTool may only `VerifyMac`; a key file locally), and
 * verified before an approved call runs: an approval record written by anything else that can
 * write to the table — a bug, a tool, a person with table access — is not a decision.
 */
export interface DecisionMac {
  sign(message: string): Promise<string>;
  verify(message: string, mac: string): Promise<boolean>;
  /** The key, as messages name it (`keys/decisions.key`, a KMS key id). */
  readonly keyName?: string;
}

/** What a decision's MAC covers: which approval, of which run and call, decided how, by whom, when. */
export function decisionMessage(approval: Pick<ApprovalRecord, 'approvalId' | 'runId' | 'turn' | 'call' | 'status' | 'decidedBy' | 'decidedVia' | 'decidedAt' | 'effect'>): string {
  const { approvalId, runId, turn, call, status, decidedBy, decidedVia, decidedAt, effect } = approval;
  const decision = [approvalId, runId, turn, call, status, decidedBy ?? '', decidedVia ?? '', decidedAt ?? ''];
  // An effect's approval also names the effect and the subject it approves: so its decision can
  // be shared by another run's call of the same effect (ApprovalRecord `sharedWith`), and by no other.
  return JSON.stringify(effect ? ['savepoint-decision-v2', ...decision, effect.key, effect.subject] : ['savepoint-decision-v1', ...decision]);
}

/**
 * What a first approval's MAC covers (a two-person rule, approvals/policy.ts): which approval, of
 * which run, call and effect — as a decision's does — approved first by whom, how and when. The
 * callback signs it when it records the first approval, and verifies it before a second person's
 * approval completes the decision: a first approval written past the callback is not an approver.
 */
export function firstApprovalMessage(
  approval: Pick<ApprovalRecord, 'approvalId' | 'runId' | 'turn' | 'call' | 'effect'>,
  first: Pick<NonNullable<ApprovalRecord['firstApproval']>, 'by' | 'via' | 'at'>,
): string {
  const { approvalId, runId, turn, call, effect } = approval;
  return JSON.stringify(['savepoint-first-approval-v1', approvalId, runId, turn, call, effect?.key ?? '', effect?.subject ?? '', 'approved', first.by, first.via, first.at]);
}

/** Whether an approval's first approval carries a valid MAC of the callback's key (firstApprovalMessage). */
export async function verifiedFirstApproval(mac: DecisionMac, approval: ApprovalRecord): Promise<boolean> {
  const first = approval.firstApproval;
  if (!first?.mac) return false;
  return mac.verify(firstApprovalMessage(approval, first), first.mac);
}

/**
 * Whether an approved record carries a valid MAC of the callback's key: its own decision's, or —
 * decided as the approval it shares (`sharedWith`) — that one's, over the same effect and subject.
 */
export async function verifiedDecision(mac: DecisionMac, approval: ApprovalRecord): Promise<boolean> {
  if (approval.sharedWith && approval.sharedDecision) {
    const { decidedAt, decisionMac } = approval.sharedDecision;
    if (!decisionMac || !approval.effect) return false;
    return mac.verify(decisionMessage({ ...approval, ...approval.sharedWith, decidedAt }), decisionMac);
  }
  if (!approval.decisionMac) return false;
  return mac.verify(decisionMessage(approval), approval.decisionMac);
}

/**
 * What is wrong with a decided approval's signature, for `savepoint verify`: an approval recorded as
 * approved whose MAC the decision key does not verify was not decided by the approval callback —
 * or the key was replaced since — and its call was refused (steps/call-tool.ts).
 */
export async function decisionProblem(mac: DecisionMac, approval: ApprovalRecord): Promise<string | undefined> {
  if (approval.status !== 'approved' || (await verifiedDecision(mac, approval))) return undefined;
  const key = mac.keyName ? `the decision key (${mac.keyName})` : 'the decision key';
  return approval.decisionMac
    ? `the approval's decision does not verify with ${key}: the key was replaced after the decision, or the record was not written by the approval callback`
    : `the approval is recorded as approved with no signature of ${key}: it was not decided by the approval callback`;
}

/** An HMAC-SHA256 DecisionMac over a local key. */
export function hmacDecisionMac(key: () => Promise<Buffer>, keyName?: string): DecisionMac {
  const compute = async (message: string) => createHmac('sha256', await key()).update(message).digest();
  return {
    ...(keyName && { keyName }),
    sign: async (message) => (await compute(message)).toString('base64'),
    verify: async (message, mac) => {
      const actual = Buffer.from(mac, 'base64');
      const wanted = await compute(message);
      return sameSecret(actual, wanted);
    },
  };
}
