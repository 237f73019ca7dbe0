import { SFNClient } from '@aws-sdk/client-sfn';
import type { AwsCredentialIdentity, Provider } from '@smithy/types';
import type { AgentDefinition } from '../lambdas/define.js';
import { DynamoDbLedger } from '../lambdas/ledger/dynamodb-ledger.js';
import { type SavepointClient } from './index.js';
/**
 * A deployed stack, found by its CloudFormation outputs: each `DurableAgent` describes its
 * outputs as `savepoint:<agent>:<output>` (infra/durable-agent.ts). The clients are the real SDK
 * clients with the caller's credentials; their endpoints follow the SDK's own configuration
 * (e.g. `AWS_ENDPOINT_URL_SFN`), which is how the tests point this very code at the local engine.
 */
export interface Deployment {
    stackName: string;
    region: string;
    agentName: string;
    stateMachineArn: string;
    tableName: string;
    approvalApiUrl?: string;
    /** The secret holding the ledger's seal key (read with the caller's credentials, to verify records). */
    sealSecretArn?: string;
}
export declare function describeDeployment(options: {
    stackName: string;
    region?: string;
    agent?: string;
}): Promise<Deployment>;
/** Where to watch an execution in the AWS console. */
export declare function executionConsoleLink(region: string, executionArn: string): string;
/** A client of a deployed agent, with the caller's AWS credentials (and its Step Functions client, for reading execution histories). */
export declare function deploymentClient(deployment: Deployment, agent?: AgentDefinition): {
    client: SavepointClient;
    ledger: DynamoDbLedger;
    sfn: SFNClient;
    close: () => void;
};
/**
 * Decides through the deployed approval API, which takes IAM-signed requests only: each request is
 * signed with SigV4 for `execute-api` with the caller's credentials (the caller's principal is who
 * decided). Plain `http://` is refused outside loopback.
 */
export declare function signedApprovalDecider(url: string, region: string, credentials: Provider<AwsCredentialIdentity>): (approvalId: string, body: import("./index.js").DecisionBody) => Promise<import("../lambdas/approvals/decision.js").DecideResult>;
/** A fetch that signs each request with SigV4 for `execute-api` (the API at `url`); plain `http://` only on loopback. */
export declare function signedFetch(url: string, region: string, credentials: Provider<AwsCredentialIdentity>): typeof fetch;
/** The `Checksum` SignatureV4 hashes with, on node:crypto (an HMAC when given a secret). */
export declare class NodeSha256 {
    #private;
    constructor(secret?: string | ArrayBuffer | ArrayBufferView);
    update(data: Uint8Array): void;
    digest(): Promise<Uint8Array>;
    reset(): void;
}
