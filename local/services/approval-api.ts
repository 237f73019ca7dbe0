import { localUser } from './local-user.js';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLoopbackServer, type ConnectionLimits } from '../../lambdas/shared/loopback-server.js';
import { readBoundedBody } from './http-body.js';
import { lambdaContext } from './lambda-context.js';
import { credentialedUrl, MISSING_CREDENTIAL, newLoopbackCredential, credentialChecker } from './loopback-credential.js';
import { PAYLOAD_LIMIT_BYTES } from '../../lambdas/shared/limits.js';
import type { RunEventsRoute } from '../../lambdas/adapters/run-events-http.js';
import { nodeStreamResponse } from './event-stream.js';
import { responseTooLarge } from '../aws/lambda-response-size.js';
import { methodNotAllowed } from '../../lambdas/adapters/api-methods.js';

export { localUser };

type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

const MAX_BODY = 64 * 1024;
/** A run request carries the run's input: up to Step Functions' 256 KiB execution input, and its framing. */
const MAX_RUN_BODY = PAYLOAD_LIMIT_BYTES + 4 * 1024;
const ROUTE = /^\/v1\/(approvals|decide|runs|batches)(?:\/([^/]+)(\/cancel)?)?\/?$/;
/** `GET /v1/runs/{id}/events`: a run's events as a stream (lambdas/adapters/run-events-http.ts). */
const RUN_EVENTS = /^\/v1\/runs\/([^/]+)\/events\/?$/;
/**
 * Each follower of a run's events holds a socket for as long as it follows (the console, an app's
 * client, a hundred in the benchmark): room for them above the default caps. Only a request with
 * the credential gets a stream, so the sockets without one stay idle and are the ones evicted.
 */
const STREAM_LIMITS: ConnectionLimits = { maxConnections: 320, maxPerClient: 320 };

/**
 * The approval API on loopback, as API Gateway would call the ApprovalCallback function: each HTTP
 * request becomes a REST API proxy event for the same handler, and its result becomes the response.
 *   GET /v1/approvals · GET /v1/approvals/{approvalId} · POST /v1/approvals/{approvalId}
 *   GET /v1/decide/{approvalId}?link=… · POST /v1/decide/{approvalId}
 *   POST /v1/runs · GET /v1/runs · GET /v1/runs/{runId} · POST /v1/runs/{runId}/cancel
 *   GET /v1/runs/{runId}/events (a stream: lambdas/adapters/run-events-http.ts)
 *     (the runs API, RunsApi's function on AWS: runs started and cancelled as this machine's user)
 * Where API Gateway verifies the caller's SigV4 signature, the loopback API requires its credential
 * (local/services/loopback-credential.ts) on /approvals: its address is `http://127.0.0.1:<port>/<credential>/v1/approvals`,
 * readable only by the state directory's owner, and its requests carry this machine's user as their
 * principal (`local:<user>`, recorded as `cli`). The page (/decide) needs none: its signed link is
 * the credential, as on AWS.
 */
export async function startApprovalApi(
  handler: ProxyHandler,
  options: {
    port?: number;
    user?: string;
    credential?: string;
    limits?: ConnectionLimits;
    runs?: ProxyHandler;
    /** `GET /v1/runs/{id}/events`, served as a stream behind the same credential. */
    runEvents?: RunEventsRoute;
    /**
     * What API Gateway decides before the handler runs (the twin's: local/aws/iam/api-gateway.ts,
     * the template's resource policy and methods), given the method, the route's path and the
     * caller (undefined on the open page). A refusal is answered with its status, the handler never called.
     */
    authorize?: (method: string, path: string, principal: string | undefined) => { allowed: true } | { allowed: false; status: number; message: string };
    /**
     * What else this port serves, outside the credential's paths (`savepoint serve`'s console:
     * console/proxy.ts): given a request without the credential first, it answers it and returns
     * true, or returns false and the request is refused as any other without the credential.
     */
    fallback?: (request: IncomingMessage, response: ServerResponse) => boolean;
  } = {},
) {
  const user = options.user ?? localUser();
  const credential = options.credential ?? newLoopbackCredential();
  const pathAfterCredential = credentialChecker(credential);
  const server = createLoopbackServer(async (request, response) => {
    const answer = (status: number, message: string, headers: Record<string, string> = {}) =>
      response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ message }));
    try {
      const target = request.url ?? '/';
      const page = target.startsWith('/v1/decide');
      const authorized = page ? target : pathAfterCredential(target);
      if (authorized === undefined && !page && options.fallback?.(request, response)) return;
      if (authorized === undefined) {
        request.resume(); // read and dropped: the refusal is sent after the body, not as a reset
        return answer(403, MISSING_CREDENTIAL);
      }
      const url = parseUrl(authorized);
      const events = page ? null : RUN_EVENTS.exec(url.pathname);
      if (events) {
        request.resume();
        if (!options.runEvents) return answer(404, `no route ${url.pathname}`);
        assertMethod(request.method, url.pathname);
        const runId = decodePathSegment(events[1]!, 'runId');
        const decision = options.authorize?.('GET', `/runs/${runId}/events`, user);
        if (decision && !decision.allowed) return answer(decision.status, decision.message);
        const lastEventId = request.headers['last-event-id'];
        return await options.runEvents({ runId, query: Object.fromEntries(url.searchParams), lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined }, nodeStreamResponse(request, response));
      }
      const { route, approvalId, cancel, runsRoute, body: limit } = apiRoute(url.pathname, page, Boolean(options.runs));
      const decision = options.authorize?.(request.method ?? 'GET', `/${route}${approvalId === undefined ? '' : `/${approvalId}`}${cancel ? '/cancel' : ''}`, route === 'decide' ? undefined : user);
      if (decision && !decision.allowed) {
        request.resume();
        return answer(decision.status, decision.message);
      }
      // After API Gateway's own check (the twin's: its 403 for a method the template has not), as on AWS.
      assertMethod(request.method, url.pathname);
      const body = await readBody(request, limit);
      const event = proxyEvent(request, url, { route, approvalId, cancel, body, principal: route === 'decide' ? undefined : user });
      const result = runsRoute ? await options.runs!(event, lambdaContext('RunsApi', 20_000)) : await handler(event, lambdaContext('ApprovalCallback', 30_000));
      // Over Lambda's synchronous response limit the invocation fails, and API Gateway answers 502 (local/aws/lambda-response-size.ts).
      if (responseTooLarge(result)) return answer(502, 'Internal server error');
      response.writeHead(result.statusCode, result.headers as Record<string, string>).end(result.body);
    } catch (error) {
      // What API Gateway itself refuses (a body over its limit, a path it cannot decode) is the
      // caller's fault, answered 4xx before the handler runs; anything else is ours.
      if (error instanceof RefusedRequest) {
        request.resume(); // a body not read yet: the refusal is sent after it, not as a reset
        return answer(error.status, error.message, error.headers);
      }
      if (response.headersSent) return void response.destroy(); // a stream that failed midway: the client resumes
      answer(500, String(error));
    }
  }, options.limits ?? STREAM_LIMITS);
  // A request Node cannot parse (an unknown method, a bad header) never reaches the handler above:
  // answer it in the API's shape, a JSON 400, instead of Node's bare one.
  server.on('clientError', (error: Error & { code?: string }, socket) => {
    if (!socket.writable) return socket.destroy();
    const body = JSON.stringify({ message: `malformed HTTP request (${error.code ?? error.message})` });
    socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject); // a port asked for that is taken (EADDRINUSE): the caller says so
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    /** The API's address, with its credential: publish it only where the owner alone can read it. */
    url: credentialedUrl(`http://127.0.0.1:${port}`, credential, '/v1/approvals'),
    /** The runs API's address (`POST` a run request), with the credential. */
    runsUrl: credentialedUrl(`http://127.0.0.1:${port}`, credential, '/v1/runs'),
    /** Where the approval page is served (signed links point here). */
    pageUrl: `http://127.0.0.1:${port}/v1/decide`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The route of a request to the API: which handler, its path's ids, and the body it may have. */
export interface ApiRoute {
  route: 'approvals' | 'decide' | 'runs' | 'batches';
  approvalId: string | undefined;
  cancel: boolean;
  /** The runs API's handler serves it (runs and batches), else the approval API's. */
  runsRoute: boolean;
  body: { limit: number; what: string };
}

/**
 * The route of a request's path (after the credential, `/v1/…`), as the loopback API serves it
 * and as a state directory's API answers in process (local/services/state-dir-api.ts); a
 * RefusedRequest (its 4xx) when no route takes it. `page`: the request came without the
 * credential, for the approval page; `servesRuns`: a runs API stands behind it.
 */
export function apiRoute(pathname: string, page: boolean, servesRuns: boolean): ApiRoute {
  const match = ROUTE.exec(pathname);
  if (!match) throw new RefusedRequest(404, `no route ${pathname}`);
  const route = match[1] as ApiRoute['route'];
  // `/v1/decide/../approvals` parses to /approvals: without the credential, only the page is served.
  if (page && route !== 'decide') throw new RefusedRequest(403, MISSING_CREDENTIAL);
  // Named as each route names its id (apiGatewayEvent's path parameter): a run's is no approval's.
  const approvalId = match[2] === undefined ? undefined : decodePathSegment(match[2], route === 'runs' ? 'runId' : route === 'batches' ? 'batchId' : 'approvalId');
  if (route === 'decide' && approvalId === undefined) throw new RefusedRequest(404, `no route ${pathname}`);
  const cancel = match[3] !== undefined;
  // The runs API's handler serves batches too (lambdas/runs/batch.ts; a deployed stack has no such route yet, and its resource policy refuses it).
  const runsRoute = route === 'runs' || route === 'batches';
  if ((runsRoute && !servesRuns) || (cancel && route !== 'runs')) throw new RefusedRequest(404, `no route ${pathname}`);
  const body = runsRoute ? { limit: MAX_RUN_BODY, what: route === 'runs' ? 'a run request' : 'a batch request' } : { limit: MAX_BODY, what: 'an approval decision' };
  return { route, approvalId, cancel, runsRoute, body };
}

/** A request refused before it becomes an event for the handler. */
export class RefusedRequest extends Error {
  constructor(
    readonly status: 400 | 403 | 404 | 405 | 413,
    message: string,
    /** Sent with the refusal: a 405's `Allow`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/**
 * Refuses (RefusedRequest 405, the route's methods in `Allow`) a method the route of `pathname`
 * (`/v1/…`) does not take (lambdas/adapters/api-methods.ts); a path of no route is left to its 404.
 */
export function assertMethod(method: string | undefined, pathname: string): void {
  const refused = methodNotAllowed(method ?? 'GET', pathname.replace(/^\/v1/, '').replace(/(.)\/$/, '$1'), pathname);
  if (refused) throw new RefusedRequest(405, refused.message, { allow: refused.allow });
}

/** A request's target as a URL; one that is none (`//[`) is the caller's mistake, refused 400 (RefusedRequest), never a 500. */
export function parseUrl(raw: string | undefined): URL {
  try {
    return new URL(raw ?? '/', 'http://localhost');
  } catch {
    throw new RefusedRequest(400, `path: not a valid request target: ${JSON.stringify(raw)}`);
  }
}

/** A path segment, decoded; a malformed percent-encoding is refused 400 (RefusedRequest) naming `field`. */
export function decodePathSegment(segment: string, field = 'approvalId'): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new RefusedRequest(400, `${field}: malformed percent-encoding in the path: ${JSON.stringify(segment)}`);
  }
}

/** The body, up to `limit` bytes; a larger one is refused with 413 (read to its end first: local/services/http-body.ts). */
async function readBody(request: IncomingMessage, { limit, what }: { limit: number; what: string }): Promise<string | null> {
  const body = await readBoundedBody(request, limit);
  if (body === undefined) throw new RefusedRequest(413, `body: larger than the ${limit} bytes ${what} may have`);
  return body.length === 0 ? null : body.toString('utf8');
}


function proxyEvent(
  request: IncomingMessage,
  url: URL,
  { route, approvalId, cancel, body, principal }: { route: 'approvals' | 'decide' | 'runs' | 'batches'; approvalId: string | undefined; cancel: boolean; body: string | null; principal: string | undefined },
): APIGatewayProxyEvent {
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : value]));
  return apiGatewayEvent({
    method: request.method ?? 'GET',
    route,
    approvalId,
    cancel,
    path: url.pathname,
    headers,
    query: url.searchParams.size > 0 ? Object.fromEntries(url.searchParams) : null,
    body,
    principal,
    sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
    userAgent: request.headers['user-agent'] ?? null,
  });
}

/**
 * A REST API proxy event as API Gateway builds it for the approval API's routes: `principal` is
 * the caller it verified (`requestContext.identity.userArn`; none on the open page). What the
 * loopback server makes of each request, and what a test that plays several people hands the
 * runs API for one of them.
 */
export function apiGatewayEvent(request: {
  method: string;
  route: 'approvals' | 'decide' | 'runs' | 'batches';
  /** On `runs`: the `/cancel` action of the run `approvalId` names. */
  approvalId?: string | undefined;
  cancel?: boolean;
  path?: string;
  headers?: Record<string, string | undefined>;
  query?: Record<string, string> | null;
  body: string | null;
  principal?: string | undefined;
  sourceIp?: string;
  userAgent?: string | null;
}): APIGatewayProxyEvent {
  const { method, route, approvalId, principal, cancel = false } = request;
  // The runs API's resources name their parameter runId (infra/durable-agent.ts), the approvals' approvalId.
  const parameter = route === 'runs' ? 'runId' : route === 'batches' ? 'batchId' : 'approvalId';
  const resource = approvalId === undefined ? `/${route}` : `/${route}/{${parameter}}${cancel ? '/cancel' : ''}`;
  const path = request.path ?? `/v1/${route}${approvalId === undefined ? '' : `/${encodeURIComponent(approvalId)}${cancel ? '/cancel' : ''}`}`;
  return {
    resource,
    path: path.replace(/^\/v1/, ''),
    httpMethod: method,
    headers: request.headers ?? { 'content-type': 'application/json' },
    multiValueHeaders: {},
    queryStringParameters: request.query ?? null,
    multiValueQueryStringParameters: null,
    pathParameters: approvalId === undefined ? null : { [parameter]: approvalId },
    stageVariables: null,
    body: request.body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      protocol: 'HTTP/1.1',
      httpMethod: method,
      identity: {
        sourceIp: request.sourceIp ?? '127.0.0.1',
        userAgent: request.userAgent ?? null,
        userArn: principal ?? null,
        caller: principal ?? null,
      } as APIGatewayProxyEvent['requestContext']['identity'],
      path,
      stage: 'v1',
      requestId: randomUUID(),
      requestTimeEpoch: Date.now(),
      resourceId: 'local',
      resourcePath: resource,
    },
  } as APIGatewayProxyEvent;
}
