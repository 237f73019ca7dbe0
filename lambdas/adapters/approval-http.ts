import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { ApprovalRecord } from '../ledger/records.js';
import { ErrorNames, InvalidInputError } from '../shared/errors.js';
import { assertApprovalId, createDecideApproval, type ApprovalDeps } from '../steps/approvals.js';

/** What a caller may see of an approval: never the task token. */
export function publicApproval(approval: ApprovalRecord) {
  const { taskToken: _secret, kind: _kind, ...visible } = approval;
  return visible;
}

const json = (statusCode: number, body: unknown): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/**
 * A request refused for what it is, not for its content: the status (4xx) and a message that
 * names the problem reach the caller. Content errors stay `Agent.InvalidInput` (400).
 */
export class HttpRequestError extends Error {
  constructor(
    readonly statusCode: 413 | 415 | 400,
    message: string,
  ) {
    super(message);
    this.name = 'HttpRequestError';
  }
}

/** API Gateway passes header names as the client spelled them: look them up case-insensitively. */
function header(event: APIGatewayProxyEvent, name: string): string | undefined {
  const found = Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name);
  return found?.[1] ?? undefined;
}

/**
 * A decision is JSON: `application/json` (any parameters, e.g. charset) or a `+json` type. A form
 * or `text/plain` is refused before the body is read — it is what a cross-site form can send
 * without a preflight, and never what the CLI or the console sends.
 */
function assertJsonContentType(event: APIGatewayProxyEvent): void {
  const contentType = header(event, 'content-type');
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType)) return;
  throw new HttpRequestError(415, `content-type: expected application/json, got ${contentType === undefined ? 'none' : JSON.stringify(contentType)}`);
}

function parseBody(event: APIGatewayProxyEvent): unknown {
  if (!event.body) throw new InvalidInputError('body: required (JSON like {"decision":"approve"})');
  const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidInputError('body: not valid JSON');
  }
}

/**
 * The approval API behind API Gateway (REST, proxy integration):
 *   GET  /approvals                  pending approvals
 *   GET  /approvals/{approvalId}     one approval
 *   POST /approvals/{approvalId}     {"decision":"approve"|"reject","reason"?, "decidedBy"?}
 */
export function createApprovalApi(deps: ApprovalDeps) {
  const decide = createDecideApproval(deps);
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const approvalId = event.pathParameters?.['approvalId'];
    if (event.httpMethod === 'GET' && approvalId === undefined) {
      const pending = await deps.ledger.listPendingApprovals();
      return json(200, { approvals: pending.map(publicApproval) });
    }
    const id = assertApprovalId(approvalId);
    if (event.httpMethod === 'GET') {
      const approval = await deps.ledger.findApproval(id);
      return approval ? json(200, publicApproval(approval)) : json(404, { message: `no approval ${id}` });
    }
    if (event.httpMethod !== 'POST') return json(405, { message: `${event.httpMethod} is not allowed here` });
    assertJsonContentType(event);
    const result = await decide(id, parseBody(event));
    if (result.ok) return json(200, { ...publicApproval(result.approval), delivered: result.delivered });
    if (result.reason === 'not_found') return json(404, { message: `no approval ${id}` });
    return json(409, { message: `approval ${id} is already ${result.approval?.status}`, approval: result.approval && publicApproval(result.approval) });
  };
}

/**
 * middy's http-error-handler shape: invalid input becomes a 400 whose message names the field, a
 * refused request (HttpRequestError) its own 4xx; anything else is a 500 whose details stay in
 * the logs.
 */
export const httpErrors = (): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  onError: (request) => {
    const error = request.error;
    if (error?.name === ErrorNames.InvalidInput) {
      request.response = json(400, { message: error.message });
      return;
    }
    if (error instanceof HttpRequestError) {
      request.response = json(error.statusCode, { message: error.message });
      return;
    }
    console.error(JSON.stringify({ level: 'ERROR', error: error?.name, message: error?.message }));
    request.response = json(500, { message: 'internal error' });
  },
});

export function approvalApiHandler(deps: ApprovalDeps, middlewares: readonly middy.MiddlewareObj[] = []) {
  const api = createApprovalApi(deps);
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>({ timeoutEarlyInMillis: 1_000 });
  for (const middleware of middlewares) handler.use(middleware as middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>);
  return handler.use(httpErrors()).handler((event) => api(event));
}
