import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { hmacLinkSigner, type LinkKeyVersions, type LinkSigner } from '../approvals/links.js';
import { systemClock, type Clock } from '../shared/ports.js';
import { notificationRequests, type ApprovalNotifier } from '../approvals/notify.js';

/**
 * The approval ports on AWS: the approval-requested event on EventBridge (and an optional SNS
 * topic for people who read mail), the link key in Secrets Manager; the decision key in KMS is
 * adapters/kms-decision-mac.ts (CallTool loads it on first use: adapters/clients-on-first-call.ts).
 */

/**
 * `PutEvents` on the bus (default: the account's default bus), with no link, then the topic if
 * there is one: one message per approver, each with only that approver's link (approvals/notify.ts).
 * SNS delivers a message to every subscription whose filter policy matches it, so each message
 * carries the attribute `approver`: subscribe each approver with the filter policy
 * `{"approver": ["<their address>"]}` (a subscription without one receives every approver's link).
 */
export function eventBridgeNotifier(events: EventBridgeClient, options: { busName?: string; topicArn?: string; sns?: () => SNSClient }): ApprovalNotifier {
  return {
    async approvalRequested(request) {
      const requests = notificationRequests(request, { ...(options.busName !== undefined && { busName: options.busName }), ...(options.topicArn && options.sns && { topicArn: options.topicArn }) });
      for (const entries of requests.putEvents) {
        const put = await events.send(new PutEventsCommand({ Entries: entries }));
        const failed = put.Entries?.find((entry) => entry.ErrorCode);
        if (put.FailedEntryCount) throw new Error(`PutEvents failed: ${failed?.ErrorCode ?? 'unknown'} ${failed?.ErrorMessage ?? ''}`);
      }
      for (const message of requests.publish) await options.sns!().send(new PublishCommand(message));
    },
  };
}

/** How long the link key's versions are kept before they are read again. */
export const LINK_KEYS_TTL_MS = 5 * 60_000;
/** A link no held key verifies makes the signer read the key again, at most this often (a forged link cannot make every request a read). */
export const LINK_KEYS_REFRESH_MS = 60_000;

/**
 * HMAC links whose key is a Secrets Manager secret: its AWSCURRENT version signs, and its
 * AWSPREVIOUS version (the one a rotation replaced: `put-secret-value` moves the stages) still
 * verifies links for LINK_KEY_ROTATION_WINDOW_MS after the current version was made
 * (approvals/links.ts). The versions are kept LINK_KEYS_TTL_MS, and read again early when a link
 * verifies with none of them (RequestApproval may have read the rotated key first).
 */
export function secretsLinkSigner(secrets: SecretsManagerClient, secretId: string, clock: Clock = systemClock): LinkSigner {
  let kept: { versions: Promise<LinkKeyVersions>; readAt: number } | undefined;
  const keyOf = (value: string | undefined) => {
    if (!value || value.length < 32) throw new Error(`secret ${secretId}: expected at least 32 characters of key`);
    return Buffer.from(value, 'utf8');
  };
  const read = async (): Promise<LinkKeyVersions> => {
    const current = await secrets.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSCURRENT' }));
    const previous = await secrets.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSPREVIOUS' })).catch((error: unknown) => {
      // A secret never rotated has no AWSPREVIOUS version.
      if ((error as Error).name === 'ResourceNotFoundException') return undefined;
      throw error;
    });
    return { current: keyOf(current.SecretString), ...(current.CreatedDate && { currentSince: current.CreatedDate }), ...(previous?.SecretString && { previous: keyOf(previous.SecretString) }) };
  };
  return hmacLinkSigner((fresh) => {
    const now = clock.now().getTime();
    const age = kept === undefined ? Infinity : now - kept.readAt;
    if (kept === undefined || age >= LINK_KEYS_TTL_MS || (fresh && age >= LINK_KEYS_REFRESH_MS)) {
      const entry = { versions: read(), readAt: now };
      kept = entry;
      entry.versions.catch(() => kept === entry && (kept = undefined));
    }
    return kept.versions;
  });
}
