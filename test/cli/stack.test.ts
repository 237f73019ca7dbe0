import { execFile } from 'node:child_process';
import { secretSealer } from '../../lambdas/ledger/seal.js';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { NodeSha256 as Sha256 } from '../../client/aws.js';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputDescription } from '../../infra/durable-agent.js';
import { outputsFromTemplate, startCfnEndpoint } from '../../local/cfn-endpoint.js';
import { LEDGER_TABLE } from '../../local/runtime.js';
import { synthesizeTemplate } from '../../local/template.js';
import { duplicatePayments, sampleDay, startHarness, waitFor, type Harness } from '../engine/harness.js';

/**
 * `savepoint --stack <name> …`: the CLI's deployed-stack path — CloudFormation outputs, the Step
 * Functions API, the DynamoDB ledger and the IAM-signed approval API, each through the real SDK
 * client — pointed (by the SDK's own endpoint settings) at the local engine. What is tested is the
 * code that runs against AWS.
 */
const exec = promisify(execFile);
const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;

let harness: Harness;
let cfn: { url: string; close: () => Promise<void> };
let proxy: Server;
const approvalRequests: { method: string; path: string; headers: IncomingHttpHeaders; body: string }[] = [];
let env: NodeJS.ProcessEnv;
let secrets: Server;
const SEAL_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:SealKey-abc123';
const SEAL_KEY = 'k'.repeat(64);

beforeAll(async () => {
  // The DynamoDB ledger, as on AWS: the CLI reads it with the real DynamoDB client.
  // The seal key as the stack keeps it (a generated secret), served by a stand-in for Secrets Manager.
  harness = await startHarness({ ledger: 'dynalite', sealer: secretSealer(SEAL_SECRET_ARN, SEAL_KEY) });
  secrets = createServer(async (incoming, outgoing) => {
    let body = '';
    for await (const chunk of incoming) body += String(chunk);
    const known = incoming.headers['x-amz-target'] === 'secretsmanager.GetSecretValue' && (JSON.parse(body) as { SecretId?: string }).SecretId === SEAL_SECRET_ARN;
    outgoing.writeHead(known ? 200 : 400, { 'content-type': 'application/x-amz-json-1.1' });
    outgoing.end(JSON.stringify(known ? { ARN: SEAL_SECRET_ARN, Name: 'SealKey', SecretString: SEAL_KEY } : { __type: 'ResourceNotFoundException', message: 'no such secret' }));
  });
  await new Promise<void>((resolve) => secrets.listen(0, '127.0.0.1', resolve));
  const { stack } = harness;
  // The approval API as API Gateway would receive it: this proxy records each request's headers.
  proxy = createServer(async (incoming, outgoing) => {
    let body = '';
    for await (const chunk of incoming) body += String(chunk);
    approvalRequests.push({ method: incoming.method!, path: incoming.url!, headers: incoming.headers, body });
    const target = new URL(stack.endpoints.approvals);
    const forwarded = request({ host: target.hostname, port: target.port, path: `${target.pathname}${incoming.url!.replace(/^\/approvals/, '')}`, method: incoming.method, headers: incoming.headers }, (answer) => {
      outgoing.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(outgoing);
    });
    forwarded.end(body);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const approvalsUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/approvals`;
  const values: Record<string, string> = {
    [outputDescription('refund-reconciler', 'StateMachineArn')]: stack.stateMachineArn,
    [outputDescription('refund-reconciler', 'LedgerTableName')]: LEDGER_TABLE,
    [outputDescription('refund-reconciler', 'LedgerSealSecretArn')]: SEAL_SECRET_ARN,
    [outputDescription('refund-reconciler', 'ApprovalApiUrl')]: approvalsUrl,
  };
  const template = await synthesizeTemplate('refund-reconciler');
  cfn = await startCfnEndpoint([{ stackName: 'Savepoint', outputs: outputsFromTemplate(template as never, (description) => values[description]) }]);
  env = {
    ...process.env,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIDSTACKTEST',
    AWS_SECRET_ACCESS_KEY: 'stack-test-secret',
    AWS_PROFILE: '',
    AWS_ENDPOINT_URL_CLOUDFORMATION: cfn.url,
    AWS_ENDPOINT_URL_SFN: stack.endpoints.sfn,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${(secrets.address() as AddressInfo).port}`,
    AWS_ENDPOINT_URL_DYNAMODB: 'dynamodb' in stack.endpoints ? stack.endpoints.dynamodb : '',
    SAVEPOINT_AGENT: '',
  };
});

afterAll(async () => {
  await new Promise((resolve) => proxy.close(resolve));
  await new Promise((resolve) => secrets.close(resolve));
  await cfn.close();
  await harness.stack.close();
});

async function savepoint(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, '--stack', 'Savepoint', ...args], { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Checks a request's SigV4 signature the way API Gateway does: sign it again with the secret, compare. */
async function signatureIsValid(received: (typeof approvalRequests)[number]): Promise<boolean> {
  const authorization = String(received.headers['authorization'] ?? '');
  const match = /^AWS4-HMAC-SHA256 Credential=AKIDSTACKTEST\/\d{8}\/us-east-1\/execute-api\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=[0-9a-f]{64}$/.exec(authorization);
  if (!match) return false;
  const signer = new SignatureV4({ service: 'execute-api', region: 'us-east-1', credentials: { accessKeyId: 'AKIDSTACKTEST', secretAccessKey: 'stack-test-secret' }, sha256: Sha256 });
  const headers = Object.fromEntries(match[1]!.split(';').map((name) => [name, String(received.headers[name])]));
  const date = String(received.headers['x-amz-date']);
  const signingDate = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`);
  const host = String(received.headers['host']);
  const again = await signer.sign(
    { method: received.method, protocol: 'http:', hostname: host.split(':')[0]!, port: Number(host.split(':')[1]), path: received.path, headers, body: received.body },
    { signingDate },
  );
  return again.headers['authorization'] === authorization;
}

const pendingOf = (runId: string, index = 0) => waitFor(() => harness.approvals.filter((approval) => approval.runId === runId)[index]);

describe('the CLI against a deployed stack', () => {
  it('starts a run, decides its approvals with IAM-signed requests, and reports it from the stack', async () => {
    const started = await savepoint('run', '--agent', 'refund-reconciler', '--input', JSON.stringify({ date: sampleDay.date }), '--json');
    expect(started.code, started.stderr).toBe(0);
    const { runId, executionArn } = JSON.parse(started.stdout) as { runId: string; executionArn: string };
    expect(runId).toBe('refunds-2026-11-28');
    expect(executionArn).toContain(':execution:');

    const first = await pendingOf(runId);
    const listed = JSON.parse((await savepoint('approvals', '--json')).stdout) as { approvals: { approvalId: string }[] };
    expect(listed.approvals.map((approval) => approval.approvalId)).toContain(first.approvalId);
    expect(await savepoint('approve', first.approvalId, '--reason', 'checked')).toMatchObject({ code: 0 });
    expect(await signatureIsValid(approvalRequests.at(-1)!)).toBe(true);

    const second = await pendingOf(runId, 1);
    expect(await savepoint('reject', second.approvalId, '--reason', 'too much')).toMatchObject({ code: 0 });
    await harness.stack.engine.waitForExecution(executionArn);

    const status = await savepoint('status', runId, '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({ lifecycle: 'completed', status: 'succeeded', summary: { issued: 17, escalated: 1 } });
    expect(duplicatePayments(harness.stack)).toEqual([]);
    const runs = JSON.parse((await savepoint('runs', '--status', 'succeeded', '--json')).stdout) as { runs: { runId: string; execution: string }[] };
    expect(runs.runs.find((run) => run.runId === runId)?.execution).toMatch(/^https:\/\/us-east-1\.console\.aws\.amazon\.com\/states\/home\?region=us-east-1#\/v2\/executions\/details\/arn:/);
    // Finance's check, with its own credentials: the seal key from the stack's secret.
    const verified = await savepoint('verify', runId);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(new RegExp(`^${runId}: OK, \\d+ records \\(\\d+ turns, \\d+ calls, 2 approvals\\) verify`));
  }, 240_000);

  it('kills a run waiting for a person, through the stack', async () => {
    const started = await savepoint('run', '--run-id', 'stack-kill', '--input', JSON.stringify({ date: sampleDay.date }), '--json');
    const { executionArn } = JSON.parse(started.stdout) as { executionArn: string };
    await pendingOf('stack-kill');
    expect(await savepoint('kill', 'stack-kill', '--reason', 'wrong day')).toMatchObject({ code: 0 });
    await harness.stack.engine.waitForExecution(executionArn);
    const status = JSON.parse((await savepoint('status', 'stack-kill', '--json')).stdout) as Record<string, unknown>;
    expect(status).toMatchObject({ lifecycle: 'cancelled', status: 'killed', killed: { reason: 'wrong day' } });
  }, 240_000);

  it('names a stack that does not exist, and an input it cannot start, exiting 2', async () => {
    const missing = await exec(process.execPath, [bin, '--stack', 'Nope', 'runs'], { env }).catch((error: { code: number; stderr: string }) => error);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/Stack with id Nope does not exist/) });
    const bad = await savepoint('run', '--input', '{"date":"2026-02-30"}');
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/date: 2026-02-30 is not a calendar date/) });
  }, 240_000);
});
