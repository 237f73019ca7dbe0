import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hmacDecisionMac, type DecisionMac } from '../lambdas/approvals/decision-mac.js';
import { hmacLinkSigner, type LinkSigner } from '../lambdas/approvals/links.js';

/**
 * The local stand-ins for the link secret (Secrets Manager) and the decision key (KMS): two
 * random 32-byte keys in the state directory (`keys/`, readable by its owner only), so links and
 * decisions stay valid across restarts; in memory when there is no state directory (tests).
 */
export function localApprovalKeys(stateDir?: string): { links: LinkSigner; decisions: DecisionMac } {
  const key = (name: string) => {
    if (!stateDir) return randomBytes(32);
    const dir = join(stateDir, 'keys');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, name);
    try {
      return readFileSync(file);
    } catch {
      const made = randomBytes(32);
      // `wx`: two processes racing to make the key keep the first one's.
      try {
        writeFileSync(file, made, { mode: 0o600, flag: 'wx' });
        return made;
      } catch {
        return readFileSync(file);
      }
    }
  };
  const linkKey = key('approval-links.key');
  const decisionKey = key('decisions.key');
  return { links: hmacLinkSigner(async () => linkKey), decisions: hmacDecisionMac(async () => decisionKey) };
}
