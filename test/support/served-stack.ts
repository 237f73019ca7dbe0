import { SignatureV4 } from '@smithy/signature-v4';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeSha256 as Sha256 } from '../../client/aws.js';
import { secretSealer, type LedgerSealer } from '../../lambdas/ledger/seal.js';
import { outputDescription } from '../../infra/durable-agent.js';
import { outputsFromTemplate, startCfnEndpoint } from '../../local/services/cloudformation.js';
import { LEDGER_TABLE } from '../../local/runtime/local-stack.js';
import { cachedTemplate } from '../../local/template/cache.js';
import type { Harness } from './refund-harness.js';

/**
 * The local engine served as a deployed stack named `Savepoint`, for the `--stack` paths (the CLI's
 * and the console's): a CloudFormation DescribeStacks endpoint with the synthesized template's
 * outputs, and the environment that points the real SDK clients (`AWS_ENDPOINT_URL_*`) at the
 * local Step Functions API and DynamoDB. The approval API is reached through a proxy that records
 * each request and, like API Gateway's IAM authorization, refuses (403) one whose SigV4 signature
 * does not check out.
 */
export const STACK_ACCESS_KEY = 'AKIDSTACKTEST';
const SECRET = 'stack-test-secret';
const SEAL_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:SealKey-abc123';
const SEAL_KEY = 'k'.repeat(64);

/** The ledger's seal key as the stack keeps it (a generated secret): the harness seals with it, `serveStack` serves it as Secrets Manager would. */
export function stackSealer(): LedgerSealer {
  return secretSealer(SEAL_SECRET_ARN, SEAL_KEY);
}

export interface ApprovalRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  signed: boolean;
}

export interface ServedStack {
  env: NodeJS.ProcessEnv;
  /** The API stage's address, `http://127.0.0.1:<port>` (the stack's ApprovalApiUrl output without its `/approvals`). */
  apiUrl: string;
  /** Every request the approval API received, with whether its signature checked out. */
  approvalRequests: ApprovalRequest[];
  close(): Promise<void>;
}

export async function serveStack(harness: Harness): Promise<ServedStack> {
  const { stack } = harness;
  const approvalRequests: ApprovalRequest[] = [];
  const proxy = createServer(async (incoming, outgoing) => {
    let body = '';
    for await (const chunk of incoming) body += String(chunk);
    const received = { method: incoming.method!, path: incoming.url!, headers: incoming.headers, body };
    const signed = await signatureIsValid(received);
    approvalRequests.push({ ...received, signed });
    if (!signed) return outgoing.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Missing Authentication Token' }));
    // The stage's routes: /approvals… and /runs… (the runs API), each to its local route.
    const runs = /^\/runs(?:[/?]|$)/.test(incoming.url!);
    const target = new URL(runs ? stack.endpoints.runs : stack.endpoints.approvals);
    const forwarded = request({ host: target.hostname, port: target.port, path: `${target.pathname}${incoming.url!.replace(runs ? /^\/runs/ : /^\/approvals/, '')}`, method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(outgoing);
    });
    forwarded.end(body);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  // A stand-in for Secrets Manager: GetSecretValue of the seal key, and nothing else.
  const secrets = createServer(async (incoming, outgoing) => {
    let body = '';
    for await (const chunk of incoming) body += String(chunk);
    const known = incoming.headers['x-amz-target'] === 'secretsmanager.GetSecretValue' && (JSON.parse(body) as { SecretId?: string }).SecretId === SEAL_SECRET_ARN;
    outgoing.writeHead(known ? 200 : 400, { 'content-type': 'application/x-amz-json-1.1' });
    outgoing.end(JSON.stringify(known ? { ARN: SEAL_SECRET_ARN, Name: 'SealKey', SecretString: SEAL_KEY } : { __type: 'ResourceNotFoundException', message: 'no such secret' }));
  });
  await new Promise<void>((resolve) => secrets.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const approvalsUrl = `${apiUrl}/approvals`;
  const values: Record<string, string> = {
    [outputDescription('refund-reconciler', 'StateMachineArn')]: stack.stateMachineArn,
    [outputDescription('refund-reconciler', 'LedgerTableName')]: LEDGER_TABLE,
    [outputDescription('refund-reconciler', 'LedgerSealSecretArn')]: SEAL_SECRET_ARN,
    [outputDescription('refund-reconciler', 'ApprovalApiUrl')]: approvalsUrl,
  };
  const template = await cachedTemplate('refund-reconciler');
  const cfn = await startCfnEndpoint([{ stackName: 'Savepoint', outputs: outputsFromTemplate(template as never, (description) => values[description]) }]);
  const env = {
    ...process.env,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: STACK_ACCESS_KEY,
    AWS_SECRET_ACCESS_KEY: SECRET,
    AWS_PROFILE: '',
    AWS_ENDPOINT_URL_CLOUDFORMATION: cfn.url,
    AWS_ENDPOINT_URL_SFN: stack.endpoints.sfn,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${(secrets.address() as AddressInfo).port}`,
    AWS_ENDPOINT_URL_DYNAMODB: 'dynamodb' in stack.endpoints ? stack.endpoints.dynamodb : '',
    SAVEPOINT_AGENT: '',
  };
  return {
    env,
    apiUrl,
    approvalRequests,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
      await new Promise((resolve) => secrets.close(resolve));
      await cfn.close();
    },
  };
}

/** Checks a request's SigV4 signature the way API Gateway does: sign it again with the secret, compare. */
async function signatureIsValid(received: Omit<ApprovalRequest, 'signed'>): Promise<boolean> {
  const authorization = String(received.headers['authorization'] ?? '');
  const match = /^AWS4-HMAC-SHA256 Credential=AKIDSTACKTEST\/\d{8}\/us-east-1\/execute-api\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/.exec(authorization);
  if (!match) return false;
  const signer = new SignatureV4({ service: 'execute-api', region: 'us-east-1', credentials: { accessKeyId: STACK_ACCESS_KEY, secretAccessKey: SECRET }, sha256: Sha256 });
  const headers = Object.fromEntries(match[1]!.split(';').map((name) => [name, String(received.headers[name])]));
  const date = String(received.headers['x-amz-date']);
  const signingDate = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`);
  const host = String(received.headers['host']);
  const url = new URL(received.path, 'http://stack.invalid');
  const again = await signer.sign(
    { method: received.method, protocol: 'http:', hostname: host.split(':')[0]!, port: Number(host.split(':')[1]), path: url.pathname, query: Object.fromEntries(url.searchParams), headers, body: received.body },
    { signingDate },
  );
  return again.headers['authorization'] === authorization;
}
