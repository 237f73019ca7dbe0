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
}

/** What a decision's MAC covers: which approval, of which run and call, decided how, by whom, when. */
export function decisionMessage(approval: Pick<ApprovalRecord, 'approvalId' | 'runId' | 'turn' | 'call' | 'status' | 'decidedBy' | 'decidedVia' | 'decidedAt'>): string {
  const { approvalId, runId, turn, call, status, decidedBy, decidedVia, decidedAt } = approval;
  return JSON.stringify(['savepoint-decision-v1', approvalId, runId, turn, call, status, decidedBy ?? '', decidedVia ?? '', decidedAt ?? '']);
}

/** Whether an approved record carries a valid MAC of the callback's key. */
export async function verifiedDecision(mac: DecisionMac, approval: ApprovalRecord): Promise<boolean> {
  if (!approval.decisionMac) return false;
  return mac.verify(decisionMessage(approval), approval.decisionMac);
}

/** An HMAC-SHA256 DecisionMac over a local key. */
export function hmacDecisionMac(key: () => Promise<Buffer>): DecisionMac {
  const compute = async (message: string) => createHmac('sha256', await key()).update(message).digest();
  return {
    sign: async (message) => (await compute(message)).toString('base64'),
    verify: async (message, mac) => {
      const actual = Buffer.from(mac, 'base64');
      const wanted = await compute(message);
      return sameSecret(actual, wanted);
    },
  };
}
