import { GenerateMacCommand, KMSClient, VerifyMacCommand } from '@aws-sdk/client-kms';
import type { DecisionMac } from '../approvals/decision-mac.js';

/** What a MAC by a KMS key starts with: the key it was made with follows (base64url), then the MAC. */
const KMS_MAC_TAG = 'kms1.';

/**
 * MACs by a KMS HMAC key (decisions: the callback may GenerateMac, CallTool only VerifyMac; starters
 * likewise). KMS rotates no HMAC key, neither automatically nor on demand
 * (https://docs.aws.amazon.com/kms/latest/developerguide/rotate-keys.html): a rotation is a new
 * key. So a MAC names the key it was made with (`kms1.<key>.<mac>`), and is verified with that key
 * if it is this deployment's key or one of its `previous` keys (`approvals.previousDecisionKeys`),
 * else refused; a MAC from before keys were named is verified with the current key.
 */
export function kmsDecisionMac(kms: KMSClient, keyId: string, previous: readonly string[] = []): DecisionMac {
  const algorithm = 'HMAC_SHA_256' as const;
  const trusted = new Set([keyId, ...previous]);
  return {
    keyName: keyId,
    async sign(message) {
      const answer = await kms.send(new GenerateMacCommand({ KeyId: keyId, MacAlgorithm: algorithm, Message: Buffer.from(message) }));
      return `${KMS_MAC_TAG}${Buffer.from(keyId).toString('base64url')}.${Buffer.from(answer.Mac!).toString('base64')}`;
    },
    async verify(message, given) {
      let key = keyId;
      let mac = given;
      if (given.startsWith(KMS_MAC_TAG)) {
        const [named, rest, ...extra] = given.slice(KMS_MAC_TAG.length).split('.');
        if (named === undefined || rest === undefined || extra.length > 0) return false;
        key = Buffer.from(named, 'base64url').toString('utf8');
        mac = rest;
        if (!trusted.has(key)) return false;
      }
      try {
        const answer = await kms.send(new VerifyMacCommand({ KeyId: key, MacAlgorithm: algorithm, Message: Buffer.from(message), Mac: Buffer.from(mac, 'base64') }));
        return answer.MacValid === true;
      } catch (error) {
        // KMS answers a wrong MAC with KMSInvalidMacException: not valid, not an outage.
        if ((error as Error).name === 'KMSInvalidMacException') return false;
        throw error;
      }
    },
  };
}

/** MACs by the KMS key `keyId` (and its `previous` keys) over a client of its own: the decision key and the starter key (adapters/aws-clients.ts). */
export const kmsKeyMac = (keyId: string, previous?: readonly string[]): DecisionMac => kmsDecisionMac(new KMSClient({}), keyId, previous);
