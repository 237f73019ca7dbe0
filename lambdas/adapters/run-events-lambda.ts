import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { Writable } from 'node:stream';
import type { RunEventsRoute, StreamResponse } from './run-events-http.js';

/**
 * `GET /v1/runs/{id}/events` on AWS: API Gateway's REST API calls the function with Lambda response
 * streaming (a Lambda proxy integration with `responseTransferMode: STREAM`, infra/durable-agent.ts),
 * and the same route as locally (run-events-http.ts) writes its frames to Lambda's response stream.
 *
 * The format API Gateway requires of a streaming proxy integration, and how a Node.js function
 * writes it: `awslambda.streamifyResponse(async (event, responseStream, context) => …)` and
 * `awslambda.HttpResponseStream.from(responseStream, { statusCode, headers })`, which writes the JSON
 * metadata and the delimiter (8 null bytes) before the body. API Gateway developer guide, "Set up a
 * Lambda proxy integration with payload response streaming in API Gateway"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode-lambda.html)
 * and "Configure a Lambda proxy integration with payload response streaming"
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/response-streaming-lambda-configure.html);
 * @types/aws-lambda declares the same global (handler.d.ts `awslambda`).
 *
 * `awslambda` exists only inside Lambda's Node.js runtime, so it is passed in: the handler file
 * hands over the runtime's, tests (and the twin) one shaped as AWS documents it.
 */

/** The part of the runtime's `awslambda` global the stream uses (the shape AWS documents). */
export interface LambdaStreaming {
  streamifyResponse<E>(handler: (event: E, responseStream: Writable, context: Context) => Promise<void>): unknown;
  HttpResponseStream: { from(writable: Writable, metadata: { statusCode: number; headers: Record<string, string> }): Writable };
}

/** The request the route needs, from API Gateway's proxy event (the same event as the runs API's). */
export function runEventsRequestOf(event: Pick<APIGatewayProxyEvent, 'pathParameters' | 'queryStringParameters' | 'headers'>) {
  const header = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === 'last-event-id')?.[1];
  return {
    runId: event.pathParameters?.runId ?? '',
    query: event.queryStringParameters ?? {},
    lastEventId: header ?? undefined,
  };
}

/**
 * Serves one request on `responseStream`: a refusal (404, 400) as the API's JSON, a 204 (nothing
 * after the run's last event), or the opened event stream; resolves once the response has ended
 * (the final event, a limit, or the client gone), so that the invocation lasts as long as its
 * stream and no longer.
 */
export function serveRunEvents(route: RunEventsRoute, streaming: LambdaStreaming['HttpResponseStream'], event: APIGatewayProxyEvent, responseStream: Writable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let stop: (() => void) | undefined;
    // API Gateway closes its side when the client goes away (or at its own limits): stop following.
    responseStream.once('close', () => {
      stop?.();
      resolve();
    });
    responseStream.once('finish', () => resolve());
    responseStream.once('error', () => {
      stop?.();
      resolve();
    });
    const response: StreamResponse = {
      refuse(status, message) {
        const body = streaming.from(responseStream, { statusCode: status, headers: { 'content-type': 'application/json' } });
        body.end(JSON.stringify({ message }));
      },
      nothingMore() {
        streaming.from(responseStream, { statusCode: 204, headers: {} }).end();
      },
      open(headers) {
        const body = streaming.from(responseStream, { statusCode: 200, headers });
        return { write: (chunk) => void body.write(chunk), end: () => void body.end() };
      },
      onClose(stopStream) {
        stop = stopStream;
        if (responseStream.destroyed) stopStream();
      },
    };
    route(runEventsRequestOf(event), response).catch(reject);
  });
}

/** The Lambda handler: `route` served through the runtime's streaming (`awslambda` given). */
export function streamingRunEventsHandler(streaming: LambdaStreaming, route: (context: Context) => RunEventsRoute) {
  return streaming.streamifyResponse<APIGatewayProxyEvent>((event, responseStream, context) => serveRunEvents(route(context), streaming.HttpResponseStream, event, responseStream));
}
