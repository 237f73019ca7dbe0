import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { SFNClient } from '@aws-sdk/client-sfn';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, Provider } from '@smithy/types';
import { createHash, createHmac } from 'node:crypto';
import { InvalidInputError } from '../lambdas/shared/errors.js';

/**
 * A deployed stack as the clients reach it: found by its CloudFormation outputs, its APIs called
 * with requests signed (SigV4) with the caller's AWS credentials. What `connect({ stack })` loads
 * (with the AWS SDK) only for a stack, and what client/aws.ts builds the CLI's client on.
 */

/**
 * The region the SDK's configuration gives the client (the one passed, else AWS_REGION or the
 * profile's), resolved before any request: the SDK's own error ("Region is missing", or "Region not
 * accepted" for one that is not a region's name) names nothing the caller set, and is the caller's
 * to fix, as credentials it cannot find are.
 */
async function regionOf(cfn: CloudFormationClient): Promise<string> {
  try {
    return await cfn.config.region();
  } catch (error) {
    const said = error instanceof Error ? error.message : String(error);
    throw new InvalidInputError(`region: the AWS SDK found no usable region (${said}): pass one (--region <region>), or set AWS_REGION or a region in your AWS profile`, { cause: error });
  }
}

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
  /** The stack's agents whose runs its ledger table holds (its outputs name the same table): what a list of every agent's runs reads, by each one's index. */
  ledgerAgents?: string[];
}

const OUTPUT = /^savepoint:([a-z][a-z0-9-]*):(StateMachineArn|StateMachineAliasArn|LedgerTableName|LedgerSealSecretArn|ApprovalApiUrl)$/;

export async function describeDeployment(options: { stackName: string; region?: string; agent?: string; /** Any agent served by the stack's one API will do (its runs API serves them all). */ anyOnSharedApi?: boolean }): Promise<Deployment> {
  const cfn = new CloudFormationClient({ ...(options.region && { region: options.region }) });
  try {
    const region = await regionOf(cfn);
    const { Stacks } = await cfn.send(new DescribeStacksCommand({ StackName: options.stackName }));
    const stack = Stacks?.[0];
    if (!stack) throw new InvalidInputError(`stack: no stack ${options.stackName}`);
    const agents = new Map<string, Partial<Record<string, string>>>();
    for (const output of stack.Outputs ?? []) {
      const match = OUTPUT.exec(output.Description ?? '');
      if (!match || !output.OutputValue) continue;
      agents.set(match[1]!, { ...agents.get(match[1]!), [match[2]!]: output.OutputValue });
    }
    const names = [...agents.keys()];
    // A stack's agents share its one API (infra/stack-api.ts): each agent's ApprovalApiUrl is that API's.
    const urls = new Set([...agents.values()].map((outputs) => outputs['ApprovalApiUrl']));
    const shared = options.anyOnSharedApi === true && names.length > 1 && urls.size === 1 && !urls.has(undefined);
    const agentName = options.agent ?? (names.length === 1 || shared ? names[0] : undefined);
    if (!agentName) {
      throw new InvalidInputError(`agent: stack ${options.stackName} runs ${names.length === 0 ? 'no savepoint agent' : `${names.join(', ')}: name one with --agent`}`);
    }
    const outputs = agents.get(agentName);
    if (!outputs?.['StateMachineArn'] || !outputs['LedgerTableName']) throw new InvalidInputError(`agent: stack ${options.stackName} runs no agent ${agentName} (it runs ${names.join(', ') || 'none'})`);
    return {
      stackName: options.stackName,
      region,
      agentName,
      // New runs start on the alias (the newest published version); live ones keep theirs.
      stateMachineArn: outputs['StateMachineAliasArn'] ?? outputs['StateMachineArn'],
      tableName: outputs['LedgerTableName'],
      ...(outputs['ApprovalApiUrl'] && { approvalApiUrl: outputs['ApprovalApiUrl'] }),
      ...(outputs['LedgerSealSecretArn'] && { sealSecretArn: outputs['LedgerSealSecretArn'] }),
      ledgerAgents: names.filter((name) => agents.get(name)?.['LedgerTableName'] === outputs['LedgerTableName']),
    };
  } catch (error) {
    if (error instanceof Error && error.name === 'ValidationError') throw new InvalidInputError(`stack: ${error.message}`, { cause: error });
    throw error;
  } finally {
    cfn.destroy();
  }
}

/**
 * The runs API of a deployed stack (`connect({ stack, region })`): the stage of its API (the
 * `ApprovalApiUrl` output without `/approvals`), each request signed with SigV4 for `execute-api`
 * with the caller's AWS credentials (the default provider chain). A stack's agents share one API
 * (infra/stack-api.ts), so a stack of several agents needs no agent named; one deployed before
 * 0.5.0 has an API per agent, and `agent` picks it.
 */
export async function stackEndpoint(options: { stack: string; region?: string; agent?: string }): Promise<{ base: string; fetch: typeof fetch }> {
  const deployment = await describeDeployment({ stackName: options.stack, ...(options.region && { region: options.region }), ...(options.agent && { agent: options.agent }), anyOnSharedApi: true });
  if (!deployment.approvalApiUrl) throw new InvalidInputError(`stack: ${options.stack} has no runs API (its agent ${deployment.agentName} is deployed without the approval API)`);
  const base = deployment.approvalApiUrl.replace(/\/approvals\/?$/, '');
  const sfn = new SFNClient({ region: deployment.region });
  const credentials = sfn.config.credentials;
  return { base, fetch: signedFetch(base, deployment.region, () => credentials()) };
}

/** A fetch that signs each request with SigV4 for `execute-api` (the API at `url`); plain `http://` only on loopback. */
export function signedFetch(url: string, region: string, credentials: Provider<AwsCredentialIdentity>): typeof fetch {
  const base = new URL(url);
  if (base.protocol === 'http:' && !['127.0.0.1', 'localhost', '[::1]'].includes(base.hostname)) {
    throw new InvalidInputError(`approval API: ${url} is plain http outside loopback`);
  }
  const signer = new SignatureV4({ service: 'execute-api', region, credentials, sha256: NodeSha256 });
  const send: typeof fetch = async (input, init = {}) => {
    const target = new URL(String(input));
    const body = typeof init.body === 'string' ? init.body : undefined;
    const signed = await signer.sign({
      method: init.method ?? 'GET',
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port ? Number(target.port) : undefined,
      path: target.pathname,
      query: Object.fromEntries(target.searchParams),
      headers: { ...(init.headers as Record<string, string>), host: target.host },
      body,
    });
    return fetch(target, { ...init, headers: signed.headers });
  };
  return send;
}

/** The `Checksum` SignatureV4 hashes with, on node:crypto (an HMAC when given a secret). */
export class NodeSha256 {
  #hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  readonly #secret?: Uint8Array | string;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#secret =
      secret === undefined || typeof secret === 'string'
        ? secret
        : secret instanceof ArrayBuffer
          ? new Uint8Array(secret)
          : new Uint8Array(secret.buffer, secret.byteOffset, secret.byteLength);
    this.#hash = this.#secret === undefined ? createHash('sha256') : createHmac('sha256', this.#secret);
  }
  update(data: Uint8Array): void {
    this.#hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
  reset(): void {
    this.#hash = this.#secret === undefined ? createHash('sha256') : createHmac('sha256', this.#secret);
  }
}
