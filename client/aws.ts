import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import type { AwsCredentialIdentity, Provider } from '@smithy/types';
import type { AgentDefinition } from '../lambdas/define.js';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { secretSealer } from '../lambdas/ledger/seal.js';
import { DynamoDbLedger } from '../lambdas/ledger/dynamodb-ledger.js';
import { InvalidInputError } from '../lambdas/shared/errors.js';
import { approvalApiDecider, createClient, runsApiStarter, runsUrlOf, type SavepointClient } from './ledger-client.js';
import { signedFetch, type Deployment } from './deployment.js';

export { describeDeployment, NodeSha256, signedFetch, type Deployment } from './deployment.js';

export { executionConsoleLink } from './console-link.js';

/** A client of a deployed agent, with the caller's AWS credentials (and its Step Functions client, for reading execution histories). */
export function deploymentClient(deployment: Deployment, agent?: AgentDefinition): { client: SavepointClient; ledger: DynamoDbLedger; sfn: SFNClient; close: () => void } {
  const sfn = new SFNClient({ region: deployment.region });
  const dynamodb = new DynamoDBClient({ region: deployment.region });
  const secrets = new SecretsManagerClient({ region: deployment.region });
  const ledger = new DynamoDbLedger(dynamodb, deployment.tableName, async () => {
    const secretId = deployment.sealSecretArn;
    if (!secretId) throw new InvalidInputError(`stack: ${deployment.stackName} has no LedgerSealSecretArn output (deployed before the ledger was sealed): deploy it again`);
    return secretSealer(secretId, (await secrets.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString);
  }, undefined, deployment.ledgerAgents);
  const decide = deployment.approvalApiUrl ? signedApprovalDecider(deployment.approvalApiUrl, deployment.region, sfn.config.credentials) : undefined;
  // Runs start through the runs API when the stack has one: its caller, as IAM verified it, is the run's starter.
  const startRun = deployment.approvalApiUrl ? runsApiStarter(runsUrlOf(deployment.approvalApiUrl), signedFetch(deployment.approvalApiUrl, deployment.region, sfn.config.credentials)) : undefined;
  const client = createClient({ ledger, sfn, stateMachineArn: deployment.stateMachineArn, ...(agent && { agent }), ...(decide && { decide }), ...(startRun && { startRun }) });
  return { client, ledger, sfn, close: () => (sfn.destroy(), dynamodb.destroy(), secrets.destroy()) };
}

/**
 * Decides through the deployed approval API, which takes IAM-signed requests only: each request is
 * signed with SigV4 for `execute-api` with the caller's credentials (the caller's principal is who
 * decided). Plain `http://` is refused outside loopback.
 */
export function signedApprovalDecider(url: string, region: string, credentials: Provider<AwsCredentialIdentity>) {
  return approvalApiDecider(url, signedFetch(url, region, credentials));
}

