import middy from '@middy/core';
import { TIMEOUT_EARLY_MS } from './middleware.js';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { StarterRefused } from '../runs/start-route.js';
import { BatchConflict } from '../runs/batch.js';
import { RequestTooLarge } from '../runs/run-request.js';
import { SEEN_LIFECYCLE_HEADER } from '../runs/lifecycle.js';
import { createRunsRoutes, NoEngine, RunConflict, type RunResource, type RunsApiDeps, type RunsReaderDeps } from '../runs/runs-api.js';
import type { RunsRoutes } from '../runs/stack-routes.js';
import { assertJsonContentType, callerOf, header, httpErrors, json, parseBody, publicApproval } from './approval-http.js';
import { routeTable, RUNS_API_ROUTES, type RunsApiRoute } from './api-methods.js';
import type { Identity } from '../approvals/policy.js';

/**
 * The runs API behind API Gateway (REST, proxy integration, IAM-signed; the stage is `v1`) and
 * behind `savepoint serve`'s loopback port (the credential in its path):
 *   POST /runs                 {"agent"?, "runId"?, "input", "config"?, "model"?, "force"?, "fork"?, …}
 *                              → 202 {"runId", "agent", "executionArn", "startedBy", "lifecycle", "created"}, Location: /v1/runs/{runId}
 *   GET  /runs/{runId}[?wait=] → 200 {"runId", "agent", "lifecycle", "report", "approvals", "pollAfterSeconds"?}, Retry-After while it lives;
 *                              a long-poll waits from the lifecycle its `savepoint-seen-lifecycle` header names
 *   GET  /runs[?agent=&status=&cursor=&limit=] → 200 {"runs": [...], "nextCursor"?, "damaged"?}
 *   POST /runs/{runId}/cancel  {"reason"?} → 202 the run; 409 when it has ended
 *   POST /batches              {"agent"?, "items" | "manifest", "concurrency"?, "batchId"?, "key"?} → 202 the batch, Location: /v1/batches/{batchId}; 413 over its size
 *   GET  /batches/{batchId}    → 200 its progress (lambdas/runs/batch.ts)
 * A run is started and cancelled as the caller API Gateway verified (callerOf: the person an IAM
 * principal stands for); a request without a verified caller reads and changes nothing (403). The
 * routes themselves are lambdas/runs/runs-api.ts. Over a ledger no engine drives (RunsReaderDeps:
 * a state directory read in process), a start is refused 503.
 */
export function createRunsApi(routes: RunsRoutes) {
  return async (event: APIGatewayProxyEvent, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<APIGatewayProxyResult> => {
    // By API Gateway's resource (`/runs/{runId}` matches itself), the path parameters from the event.
    const found = RUNS_TABLE.match(event.httpMethod, event.resource);
    if (!found) {
      // API Gateway calls it with the template's methods only; called otherwise (in process, a test), another method is 405 as on the loopback ports.
      const refused = RUNS_TABLE.methodNotAllowed(event.httpMethod, event.resource, event.path);
      if (refused) return json(405, { message: refused.message }, { allow: refused.allow });
      return json(404, { message: `no route ${event.httpMethod} ${event.path}` });
    }
    const params: Record<string, string> = {};
    for (const name of Object.keys(found.params)) {
      const value = event.pathParameters?.[name];
      if (value === undefined) return json(404, { message: `no route ${event.httpMethod} ${event.path}` });
      params[name] = value;
    }
    const caller = callerOf(event);
    if (!caller) return json(403, { message: 'caller: the runs API serves the IAM principal that signed the request, and none was verified' });
    try {
      return await found.route.serve({ routes, caller, event, params, context });
    } catch (error) {
      if (error instanceof StarterRefused) return json(403, { message: error.message });
      if (error instanceof RunConflict) return json(409, { message: error.message, run: visible(error.run), ...(error.killedByCaller !== undefined && { killedByCaller: error.killedByCaller }) });
      if (error instanceof BatchConflict) return json(409, { message: error.message });
      if (error instanceof RequestTooLarge) return json(413, { message: error.message });
      if (error instanceof NoEngine) return json(503, { message: error.message });
      throw error;
    }
  };
}

/** A request to a route of the runs API, its caller verified and its path parameters (API Gateway's, decoded) present. */
interface RunsCall {
  readonly routes: RunsRoutes;
  readonly caller: Identity;
  readonly event: APIGatewayProxyEvent;
  readonly params: Readonly<Record<string, string>>;
  readonly context: Pick<Context, 'getRemainingTimeInMillis'> | undefined;
}

/** What answers each route of the runs API's function: every one of RUNS_API_ROUTES, and no other. */
const SERVE: { readonly [Route in RunsApiRoute]: (call: RunsCall) => Promise<APIGatewayProxyResult> } = {
  'GET /runs': async ({ routes, event }) => json(200, await routes.list(event.queryStringParameters ?? {})),
  'POST /runs': async ({ routes, caller, event }) => {
    assertJsonContentType(event);
    const accepted = await routes.start(caller, parseBody(event, '{"input":{…}}'));
    return json(202, accepted, { location: `/v1/runs/${encodeURIComponent(accepted.runId)}` });
  },
  'GET /runs/{runId}': async ({ routes, event, params, context }) =>
    resource(200, await routes.get(params['runId']!, event.queryStringParameters ?? {}, context?.getRemainingTimeInMillis(), header(event, SEEN_LIFECYCLE_HEADER))),
  'POST /runs/{runId}/cancel': async ({ routes, caller, event, params }) => {
    // An empty body is no reason given; any body is JSON.
    if (event.body) assertJsonContentType(event);
    return resource(202, await routes.cancel(caller, params['runId']!, event.body ? parseBody(event, '{"reason":"…"}') : {}));
  },
  'POST /batches': async ({ routes, caller, event }) => {
    assertJsonContentType(event);
    const batch = await routes.startBatch(caller, parseBody(event, '{"items":[…],"concurrency":10}'));
    return json(202, batch, { location: `/v1/batches/${encodeURIComponent(batch.batchId)}` });
  },
  'GET /batches/{batchId}': async ({ routes, params }) => json(200, await routes.getBatch(params['batchId']!)),
};

/** The runs API's one table: it dispatches a request and refuses (405) a method its route does not take. */
const RUNS_TABLE = routeTable(RUNS_API_ROUTES.map((route) => ({ route, serve: SERVE[route] })));

/** A run as a caller may see it (never an approval's task token), with the poll hint as a header too. */
function resource(status: number, run: RunResource): APIGatewayProxyResult {
  return json(status, visible(run), run.pollAfterSeconds === undefined ? {} : { 'retry-after': String(run.pollAfterSeconds) });
}

function visible(run: RunResource) {
  return { ...run, approvals: run.approvals.map(publicApproval) };
}

/** One agent's runs API (`savepoint serve`'s engine, a test's), or the API over a state directory no engine drives (RunsReaderDeps). */
export function runsApiHandler(deps: RunsApiDeps | RunsReaderDeps, middlewares: readonly middy.MiddlewareObj[] = []) {
  return runsRoutesHandler(createRunsRoutes(deps), middlewares);
}

/** The runs API of `routes`: one agent's, or a stack's (lambdas/runs/stack-routes.ts), behind the same middy handler. */
export function runsRoutesHandler(routes: RunsRoutes, middlewares: readonly middy.MiddlewareObj[] = []) {
  const api = createRunsApi(routes);
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>({ timeoutEarlyInMillis: TIMEOUT_EARLY_MS });
  for (const middleware of middlewares) handler.use(middleware as middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>);
  return handler.use(httpErrors()).handler((event, context) => api(event, context));
}
