import type { StreamLimits } from './event-feed.js';

/**
 * The limits a run's event stream keeps on AWS, where it is served by Lambda response streaming
 * behind IAM (lambdas/adapters/run-events-lambda.ts; the twin cuts a stream at each:
 * local/aws/api-gateway-streaming.ts). The documented way, and the limits each side sets:
 *
 * - API Gateway REST API, a Lambda proxy (AWS_PROXY) integration with `responseTransferMode:
 *   STREAM` (aws-cdk-lib 2.276: `IntegrationOptions.responseTransferMode`,
 *   `ResponseTransferMode.STREAM`, aws-apigateway/lib/integration.d.ts), behind the API's IAM
 *   authorization like the rest of the runs API. API Gateway developer guide, "Stream the
 *   integration response for your proxy integrations in API Gateway"
 *   (https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode.html):
 *   REST APIs only; a stream lasts at most 15 minutes; it is closed after an idle timeout of
 *   5 minutes on a regional or private endpoint, 30 seconds on an edge-optimized one; the first
 *   10 MB of a response are not throttled, the rest is limited to 2 MB/s.
 * - Or a function URL with `authType: FunctionUrlAuthType.AWS_IAM` and `invokeMode:
 *   InvokeMode.RESPONSE_STREAM` (aws-cdk-lib aws-lambda/lib/function-url.d.ts). Lambda developer
 *   guide, "Invoking a response streaming enabled function using Lambda function URLs"
 *   (https://docs.aws.amazon.com/lambda/latest/dg/config-rs-invoke-furls.html): up to 200 MB of
 *   response payload (the CDK typings still say 20 MB); the first 6 MB are not throttled
 *   ("Response streaming for Lambda functions").
 * - A Node.js handler streams through the runtime's `awslambda.streamifyResponse` and
 *   `awslambda.HttpResponseStream.from` (API Gateway developer guide, "Configure a Lambda proxy
 *   integration with payload response streaming",
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/response-streaming-lambda-configure.html);
 *   a streamed response may be up to 200 MB (Lambda developer guide, "Response streaming for
 *   Lambda functions", https://docs.aws.amazon.com/lambda/latest/dg/configuration-response-streaming.html).
 *
 * Chosen: the REST API's streaming integration (infra/durable-agent.ts), on the runs API's own
 * API, its IAM authorization and resource policy: no second URL, and the client's signed requests
 * as they are. The integration's timeout ends a streamed response too ("make sure the timeout of
 * your integration is long enough", "Troubleshoot issues with response streaming in API Gateway"),
 * and a streamed integration may wait up to 15 minutes ("Set up an HTTP proxy integration with
 * payload response streaming"): the method's is set to 15 minutes (lambdas/shared/limits.ts
 * API_GATEWAY_STREAMING_INTEGRATION_TIMEOUT_MS), not the 29 s default. API Gateway's usual
 * `lambda:InvokeFunction` permission is the one `InvokeWithResponseStream` needs ("This operation
 * requires permission for the lambda:InvokeFunction action", Lambda API reference,
 * https://docs.aws.amazon.com/lambda/latest/api/API_InvokeWithResponseStream.html).
 *
 * So the stream keeps under every one of them, whichever way it is served: a heartbeat well
 * inside the shortest idle timeout (30 s), an end before 15 minutes (and before the function's own
 * timeout), and an end once it has sent what streams unthrottled on either side (6 MB). An
 * ended stream is resumed by the client after its last event (client/events.ts), so a limit costs
 * a reconnection, never an event.
 */
export const AWS_STREAM = {
  maxDurationMs: 15 * 60_000,
  idleTimeoutMs: { regional: 5 * 60_000, edge: 30_000 },
  unthrottledBytes: { apiGateway: 10 * 1024 * 1024, lambda: 6 * 1024 * 1024 },
} as const;

/** What the stream keeps to on AWS, for a function that may run `functionTimeoutMs`. */
export function awsStreamLimits(functionTimeoutMs: number): Required<StreamLimits> {
  return {
    heartbeatMs: 15_000, // half the shortest idle timeout (an edge-optimized endpoint's 30 s)
    // Ended by the function, with a minute to spare, before API Gateway or Lambda end it.
    maxDurationMs: Math.min(AWS_STREAM.maxDurationMs, functionTimeoutMs) - 60_000,
    maxBytes: Math.min(AWS_STREAM.unthrottledBytes.apiGateway, AWS_STREAM.unthrottledBytes.lambda),
  };
}
