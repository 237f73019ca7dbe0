import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { KMSClient } from '@aws-sdk/client-kms';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import type { DecisionMac } from '../approvals/decision-mac.js';
import { type LinkSigner } from '../approvals/links.js';
import { type ApprovalNotifier } from '../approvals/notify.js';
/**
 * The approval ports on AWS: the approval-requested event on EventBridge (and an optional SNS
 * topic for people who read mail), the link key in Secrets Manager, the decision key in KMS.
 */
/**
 * `PutEvents` on the bus (default: the account's default bus), then the topic if there is one:
 * one event and one message per approver, each with only that approver's link (approvals/notify.ts).
 * SNS delivers a message to every subscription whose filter policy matches it, so each message
 * carries the attribute `approver`: subscribe each approver with the filter policy
 * `{"approver": ["<their address>"]}` (a subscription without one receives every approver's link).
 */
export declare function eventBridgeNotifier(events: EventBridgeClient, options: {
    busName?: string;
    topicArn?: string;
    sns?: () => SNSClient;
}): ApprovalNotifier;
/** HMAC links whose key is a Secrets Manager secret, read once per container. */
export declare function secretsLinkSigner(secrets: SecretsManagerClient, secretId: string): LinkSigner;
/** Decision MACs by a KMS HMAC key: the callback may GenerateMac, CallTool only VerifyMac. */
export declare function kmsDecisionMac(kms: KMSClient, keyId: string): DecisionMac;
