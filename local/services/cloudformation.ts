import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLoopbackServer, type ConnectionLimits } from '../../lambdas/shared/loopback-server.js';
import { credentialedUrl, MISSING_CREDENTIAL, newLoopbackCredential, credentialChecker } from './loopback-credential.js';

/**
 * A loopback endpoint speaking CloudFormation's `DescribeStacks` (AWS Query protocol, XML), so the
 * CLI's `--stack` path — the real @aws-sdk/client-cloudformation reading a stack's outputs — runs
 * here against the local engine: the outputs are the synthesized template's, with the values the
 * local stack has (its state machine, table and approval API). Like the engine's other loopback
 * endpoints it serves only requests that carry its credential (local/services/loopback-credential.ts): the
 * outputs it gives name the approval API with its credential, and `url` includes it.
 */
export interface LocalStackOutputs {
  stackName: string;
  outputs: { key: string; value: string; description?: string }[];
}

export interface CfnTemplateOutputs {
  Outputs?: Record<string, { Description?: string; Value: unknown }>;
}

/** The template's outputs, each valued by `valueOf(description)`; outputs it cannot value are left out. */
export function outputsFromTemplate(template: CfnTemplateOutputs, valueOf: (description: string) => string | undefined): LocalStackOutputs['outputs'] {
  return Object.entries(template.Outputs ?? {}).flatMap(([key, output]) => {
    const value = output.Description ? valueOf(output.Description) : undefined;
    return value === undefined ? [] : [{ key, value, description: output.Description }];
  });
}

export async function startCfnEndpoint(
  stacks: LocalStackOutputs[],
  options: { credential?: string; limits?: ConnectionLimits } = {},
): Promise<{ url: string; close: () => Promise<void> }> {
  const credential = options.credential ?? newLoopbackCredential();
  const pathAfterCredential = credentialChecker(credential);
  const server = createLoopbackServer((req, res) => {
    if (pathAfterCredential(req.url ?? '/') === undefined) {
      req.resume(); // read and dropped: the refusal is sent after the body, not as a reset
      // The code the real service answers an unsigned or badly signed request with.
      return reply(res, 403, errorXml('Sender', 'InvalidClientTokenId', `The security token included in the request is invalid: ${MISSING_CREDENTIAL}`));
    }
    handle(req, res, stacks).catch(() => reply(res, 500, errorXml('Receiver', 'InternalFailure', 'internal error')));
  }, options.limits);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: credentialedUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, credential),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, stacks: LocalStackOutputs[]): Promise<void> {
  let body = '';
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > 65_536) return reply(res, 413, errorXml('Sender', 'ValidationError', 'request too large'));
  }
  const params = new URLSearchParams(body);
  if (req.method !== 'POST' || params.get('Action') !== 'DescribeStacks') {
    return reply(res, 400, errorXml('Sender', 'InvalidAction', `only DescribeStacks is served here, not ${params.get('Action') ?? '(none)'}`));
  }
  const name = params.get('StackName');
  const stack = stacks.find((candidate) => candidate.stackName === name);
  if (!stack) return reply(res, 400, errorXml('Sender', 'ValidationError', `Stack with id ${name ?? ''} does not exist`));
  const outputs = stack.outputs
    .map((output) => `<member><OutputKey>${xml(output.key)}</OutputKey><OutputValue>${xml(output.value)}</OutputValue>${output.description ? `<Description>${xml(output.description)}</Description>` : ''}</member>`)
    .join('');
  reply(
    res,
    200,
    `<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>` +
      `<StackName>${xml(stack.stackName)}</StackName><StackId>arn:aws:cloudformation:us-east-1:123456789012:stack/${xml(stack.stackName)}/local</StackId>` +
      `<CreationTime>2026-11-30T00:00:00.000Z</CreationTime><StackStatus>CREATE_COMPLETE</StackStatus><Outputs>${outputs}</Outputs>` +
      `</member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></DescribeStacksResponse>`,
  );
}

function errorXml(type: string, code: string, message: string): string {
  return `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>${type}</Type><Code>${code}</Code><Message>${xml(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`;
}

function reply(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/xml', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function xml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
