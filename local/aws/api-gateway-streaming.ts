import type { APIGatewayProxyEvent } from 'aws-lambda';
import { Writable } from 'node:stream';
import { serveRunEvents, type LambdaStreaming } from '../../lambdas/adapters/run-events-lambda.js';
import type { RunEventsRoute } from '../../lambdas/adapters/run-events-http.js';
import type { EventSink } from '../../lambdas/runs/event-feed.js';
import { timersOf, type Clock } from '../../lambdas/shared/ports.js';
import { Steps } from '../../lambdas/shared/steps.js';
import type { CfnTemplateJson } from '../template/asl.js';
import { integrationTimeoutMs } from './api-gateway-integration-timeout.js';
import { functionTimeoutMs } from './lambda-function-timeout.js';

/**
 * The run events stream as AWS serves it (infra/durable-agent.ts): API Gateway's Lambda proxy
 * integration with response streaming, in front of the RunEvents function, with the limits AWS
 * cuts a stream at whatever the function does:
 *
 * - 15 minutes at most, and an idle timeout of 5 minutes on a regional or private endpoint, 30
 *   seconds on an edge-optimized one (API Gateway developer guide, "Stream the integration
 *   response for your proxy integrations in API Gateway",
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode.html);
 * - 200 MB of streamed response payload (Lambda developer guide, "Response streaming for Lambda
 *   functions", https://docs.aws.amazon.com/lambda/latest/dg/configuration-response-streaming.html);
 * - the function's own timeout (`Timeout` in the template): the invocation ends there;
 * - the integration's timeout (`TimeoutInMillis`, 29 s unless set; up to 15 minutes for a streamed
 *   response): API Gateway stops waiting there (local/aws/api-gateway-integration-timeout.ts).
 *
 * The function writes the format API Gateway requires (metadata, 8 null bytes, the body: see
 * lambdas/adapters/run-events-lambda.ts); this relay reads it back as API Gateway does, sends the
 * metadata as the response's status and headers and the body as it comes, and cuts the response
 * at the first limit reached. A cut ends the response where it stands (whole frames only reach the
 * client's parser: a torn one is dropped), and the client resumes after the last event it got.
 * Unverified: how exactly AWS ends a cut connection (a clean end or a reset); the client treats
 * both alike (client/events.ts).
 */

export interface StreamedResponseLimits {
  maxDurationMs: number;
  idleTimeoutMs: number;
  maxBytes: number;
}

export const API_GATEWAY_STREAM = {
  maxDurationMs: 15 * 60_000,
  idleTimeoutMs: { REGIONAL: 5 * 60_000, PRIVATE: 5 * 60_000, EDGE: 30_000 },
} as const;
/** Lambda's largest streamed response. */
export const LAMBDA_STREAMED_RESPONSE_BYTES = 200 * 1024 * 1024;

/** The API's endpoint type (CloudFormation's default for a REST API: EDGE). */
function endpointTypeOf(template: CfnTemplateJson): keyof typeof API_GATEWAY_STREAM.idleTimeoutMs {
  const api = Object.values(template.Resources ?? {}).find((resource) => resource.Type === 'AWS::ApiGateway::RestApi');
  const types = (api?.Properties?.['EndpointConfiguration'] as { Types?: string[] } | undefined)?.Types;
  const type = types?.[0];
  return type === 'REGIONAL' || type === 'PRIVATE' ? type : 'EDGE';
}

/** The RunEvents function's logical id in the template, if it has one. */
export function runEventsFunctionOf(template: CfnTemplateJson): string | undefined {
  return Object.entries(template.Resources ?? {}).find(
    ([, resource]) => resource.Type === 'AWS::Lambda::Function' && (resource.Properties?.['Environment'] as { Variables?: Record<string, unknown> } | undefined)?.Variables?.['SAVEPOINT_STEP'] === Steps.RunEvents,
  )?.[0];
}

/** The integration of the method that serves the function (its `Integration` property), if one does. */
function integrationOf(template: CfnTemplateJson, functionLogicalId: string): { TimeoutInMillis?: unknown } | undefined {
  const method = Object.values(template.Resources ?? {}).find(
    (resource) => resource.Type === 'AWS::ApiGateway::Method' && JSON.stringify((resource.Properties?.['Integration'] as { Uri?: unknown } | undefined)?.Uri ?? '').includes(`"${functionLogicalId}"`),
  );
  return method?.Properties?.['Integration'] as { TimeoutInMillis?: unknown } | undefined;
}

/** What AWS cuts the template's run events stream at: the API's endpoint type, the function's and the integration's timeouts. */
export function streamedResponseLimits(template: CfnTemplateJson): StreamedResponseLimits & { functionTimeoutMs: number } {
  const fn = runEventsFunctionOf(template);
  const functionMs = fn ? functionTimeoutMs(template, fn) : API_GATEWAY_STREAM.maxDurationMs;
  const integrationMs = fn ? integrationTimeoutMs(integrationOf(template, fn)) : API_GATEWAY_STREAM.maxDurationMs;
  return {
    maxDurationMs: Math.min(API_GATEWAY_STREAM.maxDurationMs, functionMs, integrationMs),
    idleTimeoutMs: API_GATEWAY_STREAM.idleTimeoutMs[endpointTypeOf(template)],
    maxBytes: LAMBDA_STREAMED_RESPONSE_BYTES,
    functionTimeoutMs: functionMs,
  };
}

const DELIMITER = Buffer.alloc(8);

/** `awslambda.HttpResponseStream` as the runtime's: the metadata as JSON, the delimiter, then the body. */
export const httpResponseStream: LambdaStreaming['HttpResponseStream'] = {
  from(writable, metadata) {
    writable.write(Buffer.concat([Buffer.from(JSON.stringify(metadata)), DELIMITER]));
    return writable;
  },
};

/**
 * `route` (the function's) served as API Gateway streams it: through the Lambda adapter, read back,
 * cut at `limits`. `onCut` hears which limit cut a stream (the twin's log).
 */
export function servedAsApiGatewayStreams(route: RunEventsRoute, clock: Clock, limits: StreamedResponseLimits, onCut: (limit: keyof StreamedResponseLimits) => void = () => {}): RunEventsRoute {
  const timers = timersOf(clock);
  return async (request, response) => {
    let head = Buffer.alloc(0);
    let metadata: { statusCode: number; headers: Record<string, string> } | undefined;
    let sink: EventSink | undefined;
    let refusal = '';
    let sent = 0;
    let cut = false;
    let cancelIdle = () => {};
    let cancelDuration = () => {};
    /** When the body last moved (clock ms): the idle timeout is counted from it. */
    let movedAt = 0;
    let opened = () => {};
    // The body passes as it is written (a batch of frames is one buffer shared by every follower, a
    // string is ASCII: lambdas/runs/event-feed.ts sseFrame), not copied per write per follower.
    const relay = new Writable({
      decodeStrings: false,
      write(written: Buffer | string, _encoding, done) {
        if (cut) return done();
        if (metadata && sink) return forward(written, done);
        let chunk = typeof written === 'string' ? Buffer.from(written) : written;
        if (!metadata) {
          head = Buffer.concat([head, chunk]);
          const at = head.indexOf(DELIMITER);
          if (at < 0) return done();
          metadata = JSON.parse(head.subarray(0, at).toString('utf8')) as typeof metadata;
          chunk = head.subarray(at + DELIMITER.length);
          opened();
          if (metadata!.statusCode === 200) {
            sink = response.open(metadata!.headers);
            response.onClose(() => stopRelay());
            cancelDuration = timers.after(limits.maxDurationMs, () => cutAt('maxDurationMs'));
            movedAt = clock.now().getTime();
            armIdle(limits.idleTimeoutMs);
          }
        }
        if (!sink) {
          refusal += chunk.toString('utf8');
          return done();
        }
        forward(chunk, done);
      },
      final(done) {
        if (metadata && !sink) {
          let message = refusal;
          try {
            message = (JSON.parse(refusal) as { message: string }).message;
          } catch {
            // not the API's JSON: passed on as it is
          }
          response.refuse(metadata.statusCode as 400 | 404, message);
        } else if (!cut) sink?.end();
        stopTimers();
        done();
      },
    });
    function forward(chunk: Buffer | string, done: () => void) {
      if (chunk.length === 0) return done();
      if (sent + chunk.length > limits.maxBytes) {
        // What fits goes out, then the response is cut (mid-frame, as likely as not).
        sink!.write(typeof chunk === 'string' ? chunk.slice(0, limits.maxBytes - sent) : chunk.subarray(0, limits.maxBytes - sent));
        sent = limits.maxBytes;
        cutAt('maxBytes');
        return done();
      }
      sent += chunk.length;
      sink!.write(chunk);
      movedAt = clock.now().getTime();
      done();
    }
    // One timer for the stream's life, not one per write: when it fires after a write, it waits out the rest.
    function armIdle(delay: number) {
      cancelIdle = timers.after(delay, () => {
        const idle = clock.now().getTime() - movedAt;
        if (idle < limits.idleTimeoutMs) return armIdle(limits.idleTimeoutMs - idle);
        cutAt('idleTimeoutMs');
      });
    }
    function stopTimers() {
      cancelIdle();
      cancelDuration();
    }
    function stopRelay() {
      stopTimers();
      if (!relay.destroyed) relay.destroy();
    }
    function cutAt(limit: keyof StreamedResponseLimits) {
      if (cut) return;
      cut = true;
      onCut(limit);
      sink?.end();
      stopRelay(); // the function's stream closes: it stops following the run
    }
    const event = {
      httpMethod: 'GET',
      resource: '/runs/{runId}/events',
      path: `/runs/${encodeURIComponent(request.runId)}/events`,
      pathParameters: { runId: request.runId },
      queryStringParameters: Object.keys(request.query).length === 0 ? null : { ...request.query },
      headers: request.lastEventId === undefined ? {} : { 'Last-Event-ID': request.lastEventId },
    } as unknown as APIGatewayProxyEvent;
    // The request is answered once API Gateway has the metadata (or the function failed first);
    // the body streams on after.
    const headed = new Promise<void>((resolve) => (opened = resolve));
    const served = serveRunEvents(route, httpResponseStream, event, relay);
    await Promise.race([served, headed]);
    served.catch(() => stopRelay()); // a failure midway: the stream ends, the client resumes
  };
}
