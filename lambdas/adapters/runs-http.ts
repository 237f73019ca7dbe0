import middy from '@middy/core';
import { TIMEOUT_EARLY_MS } from './middleware.js';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { createStartRoute, StarterRefused, type StartRouteDeps } from '../runs/start-route.js';
import { assertJsonContentType, callerOf, httpErrors, json, parseBody } from './approval-http.js';

/**
 * The runs API, a route of the approval API (REST, proxy integration, IAM-signed):
 *   POST /runs   {"runId"?, "input", "config"?, "model"?, "force"?, "fork"?, "stateMachineArn"?, "executionName"?}
 *                → 202 {"runId", "executionArn", "startedBy"}
 * The run is started as the caller API Gateway verified (callerOf: the person an IAM principal
 * stands for), signed so that StartRun records it as the run's starter (runs/starter.ts). A
 * request without a verified caller starts nothing (403).
 */
export function createRunsApi(deps: StartRouteDeps) {
  const start = createStartRoute(deps);
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    if (event.httpMethod !== 'POST') return json(405, { message: `${event.httpMethod} is not allowed here` });
    const caller = callerOf(event);
    if (!caller) return json(403, { message: 'caller: a run is started as the IAM principal that signed the request, and none was verified' });
    assertJsonContentType(event);
    try {
      return json(202, await start(caller, parseBody(event, '{"input":{…}}')));
    } catch (error) {
      if (error instanceof StarterRefused) return json(403, { message: error.message });
      throw error;
    }
  };
}

export function runsApiHandler(deps: StartRouteDeps, middlewares: readonly middy.MiddlewareObj[] = []) {
  const api = createRunsApi(deps);
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>({ timeoutEarlyInMillis: TIMEOUT_EARLY_MS });
  for (const middleware of middlewares) handler.use(middleware as middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>);
  return handler.use(httpErrors()).handler((event) => api(event));
}
