import { describe, expect, it } from 'vitest';
import { Steps } from '../../lambdas/shared/steps.js';
import { AWS_STREAM, awsStreamLimits } from '../../lambdas/runs/stream-limits.js';
import { API_GATEWAY_STREAMING_INTEGRATION_TIMEOUT_MS } from '../../lambdas/shared/limits.js';
import { exampleTemplate } from './example-template.js';

/**
 * `GET /runs/{runId}/events` on AWS (infra/durable-agent.ts): the approval API's method, behind its
 * IAM authorization, streamed from its own function through a Lambda proxy integration with
 * response streaming, whose role only reads a run's partitions of the ledger.
 */

type Resource = { Type: string; Properties: Record<string, any> };
const resources = Object.entries(exampleTemplate().toJSON().Resources as Record<string, Resource>);
const byId = Object.fromEntries(resources);
const [functionId, fn] = resources.find(([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Properties['Environment']?.Variables?.SAVEPOINT_STEP === Steps.RunEvents)!;
const roleId = fn.Properties['Role']['Fn::GetAtt'][0] as string;
const policies = resources.filter(([, resource]) => resource.Type === 'AWS::IAM::Policy' && resource.Properties['Roles'].some((role: { Ref: string }) => role.Ref === roleId));
const statements = policies.flatMap(([, policy]) => policy.Properties['PolicyDocument'].Statement as { Action: string | string[]; Resource: unknown; Condition?: unknown }[]);

/** The path of an API Gateway resource, from its parts. */
function pathOf(resourceId: string | undefined): string {
  if (!resourceId) return '';
  const resource = byId[resourceId]!;
  return `${pathOf(resource.Properties['ParentId'].Ref)}/${resource.Properties['PathPart']}`;
}

describe('the run events stream on AWS', () => {
  const [, method] = resources.find(([, resource]) => resource.Type === 'AWS::ApiGateway::Method' && JSON.stringify(resource.Properties['Integration']?.Uri ?? '').includes(functionId))!;

  it('is GET /runs/{runId}/events on the runs API, signed with IAM like the rest of it', () => {
    expect(method.Properties['HttpMethod']).toBe('GET');
    expect(pathOf(method.Properties['ResourceId'].Ref)).toBe('/runs/{runId}/events');
    expect(method.Properties['AuthorizationType']).toBe('AWS_IAM');
    const runsGet = resources.find(([, resource]) => resource.Type === 'AWS::ApiGateway::Method' && pathOf(resource.Properties['ResourceId'].Ref) === '/runs/{runId}' && resource.Properties['HttpMethod'] === 'GET')![1];
    expect(method.Properties['RestApiId']).toEqual(runsGet.Properties['RestApiId']);
  });

  it('streams the function\'s response: a Lambda proxy integration in STREAM mode, invoked with InvokeWithResponseStream', () => {
    const integration = method.Properties['Integration'];
    expect(integration.Type).toBe('AWS_PROXY');
    expect(integration.ResponseTransferMode).toBe('STREAM');
    expect(JSON.stringify(integration.Uri)).toContain('2021-11-15/functions/');
    expect(JSON.stringify(integration.Uri)).toContain('/response-streaming-invocations');
  });

  it('is invoked as API Gateway invokes any proxy function: InvokeWithResponseStream needs lambda:InvokeFunction', () => {
    // Lambda API reference, InvokeWithResponseStream: "This operation requires permission for the
    // lambda:InvokeFunction action" (https://docs.aws.amazon.com/lambda/latest/api/API_InvokeWithResponseStream.html).
    const permissions = resources.filter(([, resource]) => resource.Type === 'AWS::Lambda::Permission' && JSON.stringify(resource.Properties['FunctionName']).includes(functionId));
    expect(permissions.length).toBeGreaterThan(0);
    for (const [, permission] of permissions) expect(permission.Properties).toMatchObject({ Action: 'lambda:InvokeFunction', Principal: 'apigateway.amazonaws.com' });
  });

  it('waits for the stream as long as a stream may last: an integration timeout of 15 minutes, not the 29 s that would end every stream there', () => {
    expect(method.Properties['Integration'].TimeoutInMillis).toBe(API_GATEWAY_STREAMING_INTEGRATION_TIMEOUT_MS);
    expect(API_GATEWAY_STREAMING_INTEGRATION_TIMEOUT_MS).toBe(AWS_STREAM.maxDurationMs);
  });

  it('runs as long as a stream may last (15 minutes), and the stream ends a minute before', () => {
    expect(fn.Properties['Timeout']).toBe(AWS_STREAM.maxDurationMs / 1000);
    expect(awsStreamLimits(fn.Properties['Timeout'] * 1000).maxDurationMs).toBe(fn.Properties['Timeout'] * 1000 - 60_000);
  });

  it('only reads the ledger: GetItem and Query on runs\' and their blobs\' partitions, the seal key to verify', () => {
    const dynamodb = statements.filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:')));
    expect(dynamodb).toEqual([
      {
        Action: ['dynamodb:GetItem', 'dynamodb:Query'],
        Effect: 'Allow',
        Resource: { 'Fn::GetAtt': [expect.stringMatching(/^LedgerTable/), 'Arn'] },
        Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RUN#*', 'BLOB#*'] } },
      },
    ]);
    const actions = statements.flatMap((statement) => [statement.Action].flat()).filter((action) => !action.startsWith('xray:') && !action.startsWith('logs:'));
    expect(actions.sort()).toEqual(['dynamodb:GetItem', 'dynamodb:Query', 'secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
  });
});
