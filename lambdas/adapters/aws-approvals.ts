import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { GenerateMacCommand, KMSClient, VerifyMacCommand } from '@aws-sdk/client-kms';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import type { DecisionMac } from '../approvals/decision-mac.js';
import { hmacLinkSigner, type LinkSigner } from '../approvals/links.js';
import { notificationRequests, type ApprovalNotifier } from '../approvals/notify.js';

/**
 * The approval ports on AWS: the approval-requested event on EventBridge (and an optional SNS
 * topic for people who read mail), the link key in Secrets Manager, the decision key in KMS.
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

/** HMAC links whose key is a Secrets Manager secret, read once per container. */
export function secretsLinkSigner(secrets: SecretsManagerClient, secretId: string): LinkSigner {
  let key: Promise<Buffer> | undefined;
  const read = async () => {
    const secret = await secrets.send(new GetSecretValueCommand({ SecretId: secretId }));
    if (!secret.SecretString || secret.SecretString.length < 32) throw new Error(`secret ${secretId}: expected at least 32 characters of key`);
    return Buffer.from(secret.SecretString, 'utf8');
  };
  return hmacLinkSigner(() => (key ??= read().catch((error: unknown) => ((key = undefined), Promise.reject(error)))));
}

/** Decision MACs by a KMS HMAC key: the callback may GenerateMac, CallTool only VerifyMac. */
export function kmsDecisionMac(kms: KMSClient, keyId: string): DecisionMac {
  const algorithm = 'HMAC_SHA_256' as const;
  return {
    async sign(message) {
      const answer = await kms.send(new GenerateMacCommand({ KeyId: keyId, MacAlgorithm: algorithm, Message: Buffer.from(message) }));
      return Buffer.from(answer.Mac!).toString('base64');
    },
    async verify(message, mac) {
      try {
        const answer = await kms.send(new VerifyMacCommand({ KeyId: keyId, MacAlgorithm: algorithm, Message: Buffer.from(message), Mac: Buffer.from(mac, 'base64') }));
        return answer.MacValid === true;
      } catch (error) {
        // KMS answers a wrong MAC with KMSInvalidMacException: not valid, not an outage.
        if ((error as Error).name === 'KMSInvalidMacException') return false;
        throw error;
      }
    },
  };
}
