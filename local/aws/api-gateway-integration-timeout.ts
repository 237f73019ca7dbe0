/**
 * How long API Gateway waits for a REST API method's integration (`TimeoutInMillis`): 50 ms to
 * 29 s by default ("Amazon API Gateway quotas",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html; more only for a
 * regional or private API after a quota increase, which the twin does not assume), and up to 15
 * minutes for an integration that streams its response ("When you use response streaming, you can
 * configure the integration timeout up to 15 minutes":
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/response-streaming-http.html).
 * A streamed response is still ended by it (lambdas/shared/limits.ts), so the twin cuts a stream
 * there (local/aws/api-gateway-streaming.ts) and refuses a template API Gateway would refuse
 * (local/aws/cloudformation-template.ts). API Gateway's own wording of the refusal is not in the
 * stored documentation: the message below names the method and the range.
 */
import { API_GATEWAY_INTEGRATION_TIMEOUT_MS, API_GATEWAY_STREAMING_INTEGRATION_TIMEOUT_MS } from '../../lambdas/shared/limits.js';

const MIN_TIMEOUT_MS = 50;

interface MethodIntegration {
  TimeoutInMillis?: unknown;
  ResponseTransferMode?: unknown;
}

/** How long API Gateway waits for this integration: its `TimeoutInMillis`, or the 29 s default. */
export function integrationTimeoutMs(integration: MethodIntegration | undefined): number {
  const timeout = integration?.TimeoutInMillis;
  return typeof timeout === 'number' ? timeout : API_GATEWAY_INTEGRATION_TIMEOUT_MS;
}

/** Why API Gateway refuses this method's integration timeout, or undefined when it takes it. */
export function integrationTimeoutProblem(logicalId: string, integration: MethodIntegration | undefined): string | undefined {
  if (integration?.TimeoutInMillis === undefined) return undefined;
  const streamed = integration.ResponseTransferMode === 'STREAM';
  const max = streamed ? API_GATEWAY_STREAMING_INTEGRATION_TIMEOUT_MS : API_GATEWAY_INTEGRATION_TIMEOUT_MS;
  const timeout = integration.TimeoutInMillis;
  if (Number.isInteger(timeout) && (timeout as number) >= MIN_TIMEOUT_MS && (timeout as number) <= max) return undefined;
  return `Resource ${logicalId} (AWS::ApiGateway::Method): Integration.TimeoutInMillis must be from ${MIN_TIMEOUT_MS} to ${max} ms${streamed ? ' for a streamed response' : ` (up to ${API_GATEWAY_STREAMING_INTEGRATION_TIMEOUT_MS} only when the response streams)`}, got ${JSON.stringify(timeout)}`;
}
