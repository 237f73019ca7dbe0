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
export declare function decisionMessage(approval: Pick<ApprovalRecord, 'approvalId' | 'runId' | 'turn' | 'call' | 'status' | 'decidedBy' | 'decidedVia' | 'decidedAt'>): string;
/** Whether an approved record carries a valid MAC of the callback's key. */
export declare function verifiedDecision(mac: DecisionMac, approval: ApprovalRecord): Promise<boolean>;
/**
 * What is wrong with a decided approval's signature, for `savepoint verify`: an approval recorded as
 * approved whose MAC the decision key does not verify was not decided by the approval callback —
 * or the key was replaced since — and its call was refused (steps/call-tool.ts).
 */
export declare function decisionProblem(mac: DecisionMac, approval: ApprovalRecord): Promise<string | undefined>;
/** An HMAC-SHA256 DecisionMac over a local key. */
export declare function hmacDecisionMac(key: () => Promise<Buffer>, keyName?: string): DecisionMac;
