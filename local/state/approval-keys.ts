import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { ephemeralSealer, hmacSealer, readOrCreateKeyFile, SEAL_KEY_FILE, type LedgerSealer } from '../../lambdas/ledger/seal.js';
import { hmacDecisionMac, type DecisionMac } from '../../lambdas/approvals/decision-mac.js';
import { hmacLinkSigner, type LinkSigner } from '../../lambdas/approvals/links.js';
import { keysHomeOf } from './agent-dirs.js';

/**
 * The local stand-ins for the link secret (Secrets Manager), the decision key and the starter key
 * (KMS, lambdas/runs/starter.ts): three random 32-byte keys in the state directory (`keys/`, readable by its owner only), so links and
 * decisions stay valid across restarts; in memory when there is no state directory (tests). An
 * agent's directory beneath a state directory of several uses the root's, as a stack's agents share
 * its keys on AWS: a decision recorded without the engine (`savepoint approve`, the console) is
 * signed with the key the agent's CallTool verifies. A key file is made (or read) when its key is
 * first used, not before.
 */
export function localApprovalKeys(stateDir?: string): { links: LinkSigner; decisions: DecisionMac; starters: DecisionMac } {
  const home = stateDir && keysHomeOf(stateDir);
  // Each read (or made) when first used: a command that signs and checks nothing — `status` on a
  // directory that holds no ledger, a typo of --state-dir — leaves no keys behind.
  const key = (name: string) => {
    let kept: Buffer | undefined;
    return async () => (kept ??= home ? readOrCreateKeyFile(join(home, 'keys', name)) : randomBytes(32));
  };
  return { links: hmacLinkSigner(key('approval-links.key')), decisions: hmacDecisionMac(key('decisions.key'), stateDir ? 'keys/decisions.key' : undefined), starters: hmacDecisionMac(key('starters.key')) };
}

/**
 * The local stand-in for the ledger's seal key (a Secrets Manager secret on AWS): the key file
 * `keys/ledger-seal.key` in the state directory, which the embedded ledger also opens by default;
 * a random key in memory when there is no state directory. It detects damage, not a determined
 * local attacker (who can read the key file as well as the ledger).
 */
export function localLedgerSealer(stateDir?: string): LedgerSealer {
  return stateDir ? hmacSealer(readOrCreateKeyFile(join(stateDir, SEAL_KEY_FILE))) : ephemeralSealer();
}
