import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SNSClient } from '@aws-sdk/client-sns';
import type { DecisionMac } from '../approvals/decision-mac.js';
import type { LinkSigner } from '../approvals/links.js';
import type { ApprovalNotifier } from '../approvals/notify.js';
import type { FunctionVersions } from '../steps/prune-function-versions.js';
import { eventBridgeNotifier, secretsLinkSigner } from './aws-approvals.js';
import { kmsKeyMac } from './kms-decision-mac.js';
import { headEtag, type ManifestReader } from '../runs/batch.js';
import type { StepFunctionsPorts } from './sfn-clients.js';

/**
 * The AWS clients a function uses beside the ledger's (DynamoDB and the seal key's secret, which
 * every function has), one factory each. A handler file passes the ones its step uses and no
 * other: esbuild keeps only the SDKs a bundle's handler names (the client packages declare no side
 * effects), so CallTool's bundle holds KMS and not Step Functions, EventBridge or SNS. A step that
 * reaches for a client its handler did not pass fails, naming the client and the handler file.
 */
export interface AwsClients {
  /** Step Functions: task callbacks, execution history, starts and lookups, over one client (`traced` wraps it for X-Ray). */
  readonly stepFunctions?: (traced: <T>(client: T) => T) => StepFunctionsPorts;
  /** The approval-requested event on EventBridge, and the optional SNS topic (`APPROVAL_EVENT_BUS`, `APPROVAL_TOPIC_ARN`). */
  readonly approvalNotifier?: (options: { busName?: string; topicArn?: string }) => ApprovalNotifier;
  /** The link key in Secrets Manager (`APPROVAL_LINK_SECRET_ARN`). */
  readonly linkSigner?: (secretId: string) => LinkSigner;
  /** The decision key in KMS (`DECISION_KEY_ID`), and the keys it replaced that still verify (`DECISION_PREVIOUS_KEY_IDS`). */
  readonly decisionMac?: (keyId: string, previous?: readonly string[]) => DecisionMac;
  /** The starter key in KMS (`STARTER_KEY_ID`: lambdas/runs/starter.ts). */
  readonly starterMac?: (keyId: string) => DecisionMac;
  /** The step functions' Lambda versions (the version pruner), its SDK loaded on first use. */
  readonly functionVersions?: (traced: <T>(client: T) => T) => Promise<FunctionVersions>;
  /** S3 GetObject and HeadObject of a batch's manifest (the runs API names its version as it starts, lists its runs), its SDK loaded on first use. */
  readonly manifestReader?: (traced: <T>(client: T) => T) => ManifestReader;
}

/** Lambda versions (the version pruner): the Lambda SDK, in its own chunk, loaded when the pruner first reaches it. */
export const lambdaVersions = {
  functionVersions: async (traced) => {
    const [{ LambdaClient }, { lambdaFunctionVersions }] = await Promise.all([import('@aws-sdk/client-lambda'), import('./lambda-versions.js')]);
    return lambdaFunctionVersions(traced(new LambdaClient({})));
  },
} satisfies AwsClients;

/**
 * A batch manifest's text (the runs function: `GET /v1/batches/{id}` of a manifest batch), the S3
 * SDK in its own chunk, loaded when a manifest is first read: the runs API's other routes never load it.
 */
export const manifestObjects = {
  manifestReader: (traced) => {
    let loaded: Promise<{ client: import('@aws-sdk/client-s3').S3Client; sdk: typeof import('@aws-sdk/client-s3') }> | undefined;
    const s3 = () => (loaded ??= import('@aws-sdk/client-s3').then((sdk) => ({ client: traced(new sdk.S3Client({})), sdk })));
    return {
      text: async (bucket, key, etag) => {
        const { client, sdk } = await s3();
        const object = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key, ...(etag !== undefined && { IfMatch: etag }) }));
        return object.Body!.transformToString('utf8');
      },
      etag: async (bucket, key) => {
        const { client, sdk } = await s3();
        return headEtag(() => client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key })));
      },
    };
  },
} satisfies AwsClients;

/** The approval-requested event and topic (RequestApproval). */
export const approvalEvents = {
  approvalNotifier: (options) => eventBridgeNotifier(new EventBridgeClient({}), { ...options, sns: () => new SNSClient({}) }),
} satisfies AwsClients;

/** The signed links' key (RequestApproval signs, the approval callback verifies). */
export const approvalLinks = { linkSigner: (secretId) => secretsLinkSigner(new SecretsManagerClient({}), secretId) } satisfies AwsClients;

/** The decision key (the callback signs; CallTool, BudgetCheck and CallModel verify). */
export const decisionKey = { decisionMac: (keyId, previous) => kmsKeyMac(keyId, previous) } satisfies AwsClients;

/** The starter key (the runs API signs who started a run; StartRun verifies). */
export const starterKey = { starterMac: (keyId) => kmsKeyMac(keyId) } satisfies AwsClients;
