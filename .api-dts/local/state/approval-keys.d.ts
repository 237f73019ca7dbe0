import { type LedgerSealer } from '../../lambdas/ledger/seal.js';
import { type DecisionMac } from '../../lambdas/approvals/decision-mac.js';
import { type LinkSigner } from '../../lambdas/approvals/links.js';
/**
 * The local stand-ins for the link secret (Secrets Manager), the decision key and the starter key
 * (KMS, lambdas/runs/starter.ts): three random 32-byte keys in the state directory (`keys/`, readable by its owner only), so links and
 * decisions stay valid across restarts; in memory when there is no state directory (tests).
 */
export declare function localApprovalKeys(stateDir?: string): {
    links: LinkSigner;
    decisions: DecisionMac;
    starters: DecisionMac;
};
/**
 * The local stand-in for the ledger's seal key (a Secrets Manager secret on AWS): the key file
 * `keys/ledger-seal.key` in the state directory, which the embedded ledger also opens by default;
 * a random key in memory when there is no state directory. It detects damage, not a determined
 * local attacker (who can read the key file as well as the ledger).
 */
export declare function localLedgerSealer(stateDir?: string): LedgerSealer;
