import middy from '@middy/core';
import { TIMEOUT_EARLY_MS } from './middleware.js';
import { methodNotAllowed } from './api-methods.js';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { ApprovalRecord } from '../records/ledger-records.js';
import { ErrorNames, InvalidInputError, NotFoundError } from '../shared/errors.js';
import { duplicateKey } from '../shared/json.js';
import { evidenceFor, renderApprovalPage, renderErrorPage } from '../approvals/page.js';
import type { Identity } from '../approvals/policy.js';
import { assertApprovalId, createDecideApproval, deciderPerson, DEFAULT_POLICY, type ApprovalDeps } from '../approvals/decision.js';

/** What a caller may see of an approval (the task token is never on it: ledger getTaskToken). */
export function publicApproval(approval: ApprovalRecord) {
  const { kind: _kind, ...visible } = approval;
  return visible;
}

export const json = (statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'content-type': 'application/json', ...headers },
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
export function header(event: APIGatewayProxyEvent, name: string): string | undefined {
  const found = Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name);
  return found?.[1] ?? undefined;
}

/**
 * A decision is JSON: `application/json` (any parameters, e.g. charset) or a `+json` type. A form
 * or `text/plain` is refused before the body is read — it is what a cross-site form can send
 * without a preflight, and never what the CLI or the console sends.
 */
export function assertJsonContentType(event: APIGatewayProxyEvent): void {
  const contentType = header(event, 'content-type');
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType)) return;
  throw new HttpRequestError(415, `content-type: expected application/json, got ${contentType === undefined ? 'none' : JSON.stringify(contentType)}`);
}

export function parseBody(event: APIGatewayProxyEvent, example = '{"decision":"approve"}'): unknown {
  if (!event.body) throw new InvalidInputError(`body: required (JSON like ${example})`);
  const text = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new InvalidInputError('body: not valid JSON');
  }
  const repeated = duplicateKey(text);
  if (repeated !== undefined) throw new InvalidInputError(`body: the key ${JSON.stringify(repeated)} is given twice (which one counts depends on the parser): give each key once`);
  return body;
}

const html = (statusCode: number, body: string): APIGatewayProxyResult => ({
  statusCode,
  headers: {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // The page runs only its own inline script and talks only to its own origin.
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
    'referrer-policy': 'no-referrer',
  },
  body,
});

/**
 * Who called, as the transport proved it: on AWS the IAM principal API Gateway verified (SigV4),
 * locally the loopback server's user (local/services/approval-api.ts). Never a field of the body.
 */
export function callerOf(event: APIGatewayProxyEvent): Identity | undefined {
  const principal = event.requestContext?.identity?.userArn;
  if (!principal) return undefined;
  return principal.startsWith('arn:') ? { id: personOf(principal), via: 'iam', principal } : { id: principal, via: 'cli', principal };
}

/**
 * The person an IAM principal stands for, by what its caller cannot choose — what separation of
 * duties and "a second approver" compare. An assumed role's session name is chosen by whoever
 * calls AssumeRole, so it tells nobody apart:
 *   arn:aws:iam::<acct>:user/<name>                                   → itself (one IAM user, one person)
 *   arn:aws:sts::<acct>:assumed-role/AWSReservedSSO_<set>_<id>/<user> → identity-center:<acct>:<user>
 *       (IAM Identity Center names the session after its user, and only it can assume these roles;
 *        the same user under two permission sets is one person)
 *   arn:aws:sts::<acct>:assumed-role/<role>/<session>                 → arn:aws:iam::<acct>:role/<role>
 *       (every session of one role is one person)
 *   arn:aws:sts::<acct>:federated-user/<name>                         → arn:aws:sts::<acct>:federated-user
 *       (GetFederationToken's caller names it: all of them are one person)
 *   anything else (the account's root)                                → itself
 */
export function personOf(arn: string): string {
  const assumed = /^arn:(aws[\w-]*):sts::(\d{12}):assumed-role\/([^/]+)\/(.+)$/.exec(arn);
  if (assumed) {
    const [, partition, account, role, session] = assumed;
    return role!.startsWith('AWSReservedSSO_') ? `identity-center:${account}:${session}` : `arn:${partition}:iam::${account}:role/${role}`;
  }
  const federated = /^arn:(aws[\w-]*):sts::(\d{12}):federated-user\//.exec(arn);
  if (federated) return `arn:${federated[1]}:sts::${federated[2]}:federated-user`;
  return arn;
}

/**
 * The approval API behind API Gateway (REST, proxy integration):
 *   GET  /approvals                  pending approvals                        (IAM)
 *   GET  /approvals/{approvalId}     one approval                             (IAM)
 *   POST /approvals/{approvalId}     {"decision":"approve"|"reject","reason"?,"runId"?}   (IAM: the caller decides)
 *   GET  /decide/{approvalId}?link=… the approval page (HTML; never decides)  (the signed link)
 *   POST /decide/{approvalId}        {"decision", "reason"?, "link"}          (the link's approver decides)
 */
export function createApprovalApi(deps: ApprovalDeps) {
  const decide = createDecideApproval(deps);
  const policy = deps.policy ?? DEFAULT_POLICY;
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    // API Gateway calls it with the template's methods only; called otherwise (in process, a test), another method is 405 as on the loopback ports.
    const refused = methodNotAllowed(event.httpMethod, event.resource, event.path);
    if (refused) return json(405, { message: refused.message }, { allow: refused.allow });
    const approvalId = event.pathParameters?.['approvalId'];
    const page = event.resource.startsWith('/decide');
    if (!page && event.httpMethod === 'GET') {
      // Reading approvals is the approvers' too (the resource policy's rule on AWS, held here as well).
      const caller = callerOf(event);
      const person = caller && deciderPerson(caller, policy, deps.links);
      if (!person) return json(401, { message: 'authentication: sign the request (IAM)' });
      if (!person.ok) return json(403, { message: person.message });
    }
    if (event.httpMethod === 'GET' && approvalId === undefined && !page) {
      const pending = await deps.ledger.listPendingApprovals();
      return json(200, { approvals: pending.map(publicApproval) });
    }
    const id = assertApprovalId(approvalId);
    if (event.httpMethod === 'GET') {
      if (page) return approvalPage(deps, id, event);
      const approval = await deps.ledger.findApproval(id);
      return approval ? json(200, publicApproval(approval)) : json(404, { message: `no approval ${id}` });
    }
    // Past methodNotAllowed, a method other than GET and POST is on a resource no route serves.
    if (event.httpMethod !== 'POST') return json(404, { message: `no route ${event.httpMethod} ${event.path}` });
    assertJsonContentType(event);
    const body = parseBody(event);
    // The page's route takes only links: an IAM caller decides on /approvals, as itself.
    if (page && !(typeof body === 'object' && body !== null && 'link' in body)) throw new InvalidInputError('link: required (open the signed link you were sent)');
    const result = await decide(id, body, page ? {} : { caller: callerOf(event) });
    if (result.ok) return json(result.waitingForSecond ? 202 : 200, { ...publicApproval(result.approval), delivered: result.delivered, ...(result.waitingForSecond && { waitingForSecond: true }) });
    const { ok: _ok, status, message, approval, ...decided } = result;
    return json(status, { message, ...(approval && { approval: publicApproval(approval) }), ...decided });
  };
}

/**
 * The approval API of a stack: one API for every agent of the stack (issue 34), each approval
 * decided by the deps of the agent whose run asked for it (`approval.agent`) — that agent's
 * approvers, separation of duties and second approver, as the deployment set them for it — so an
 * approval is decided exactly as the agent's own API decided it. The listing holds the pending
 * approvals of the agents whose approvers the caller is among; a caller who is none of them is
 * refused as one agent's API refuses them.
 */
export function createStackApprovalApi(agents: ReadonlyMap<string, ApprovalDeps>, ledger: Pick<ApprovalDeps['ledger'], 'findApproval' | 'listPendingApprovals'>) {
  if (agents.size === 0) throw new Error('the stack approval API serves at least one agent');
  const apis = new Map([...agents].map(([name, deps]) => [name, { deps, api: createApprovalApi({ ...deps, agentName: name }) }]));
  const first = apis.values().next().value!;
  return async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
    const approvalId = event.pathParameters?.['approvalId'];
    if (approvalId === undefined) {
      if (event.resource.startsWith('/decide') || event.httpMethod !== 'GET') return first.api(event);
      const caller = callerOf(event);
      if (!caller) return json(401, { message: 'authentication: sign the request (IAM)' });
      const admitted = new Set<string>();
      let refusal: string | undefined;
      for (const [name, { deps }] of apis) {
        const person = deciderPerson(caller, deps.policy ?? DEFAULT_POLICY, deps.links);
        if (person.ok) admitted.add(name);
        else refusal ??= person.message;
      }
      if (admitted.size === 0) return json(403, { message: refusal ?? 'caller: not an approver of any agent here' });
      const pending = (await ledger.listPendingApprovals()).filter((approval) => approval.agent === undefined || admitted.has(approval.agent));
      return json(200, { approvals: pending.map(publicApproval) });
    }
    // The approval's agent decides it; an approval of no agent served here is not found by its API.
    const approval = await ledger.findApproval(assertApprovalId(approvalId));
    const owner = approval?.agent === undefined ? first : apis.get(approval.agent);
    if (!owner) return event.resource.startsWith('/decide') && event.httpMethod === 'GET' ? html(404, renderErrorPage(404, `no approval ${approvalId}`)) : json(404, { message: `no approval ${approvalId}` });
    return owner.api(event);
  };
}

/** GET with a signed link: the page, or why the link cannot be used. Reading it changes nothing. */
async function approvalPage(deps: ApprovalDeps, approvalId: string, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const link = event.queryStringParameters?.['link'];
  if (!link) return html(401, renderErrorPage(401, 'link: missing (open the signed link you were sent)'));
  if (!deps.links) return html(401, renderErrorPage(401, 'link: this API does not take signed links'));
  const verdict = await deps.links.signer.verify(link, { approvalId }, deps.clock.now());
  if (!verdict.ok) return html(verdict.status, renderErrorPage(verdict.status, verdict.message));
  // A link outlives its approver's removal: the page (the call, its arguments, the evidence) is
  // shown only to whom a POST from it would let decide, and before the approval is looked up.
  const person = deciderPerson({ id: verdict.claims.approver, via: 'link' }, deps.policy ?? DEFAULT_POLICY, deps.links);
  if (!person.ok) return html(403, renderErrorPage(403, person.message));
  const approval = await deps.ledger.findApproval(approvalId);
  if (!approval) return html(404, renderErrorPage(404, `no approval ${approvalId}`));
  if (approval.usedLinks?.includes(verdict.claims.linkId)) return html(409, renderErrorPage(409, 'link: already used (each link decides once)'));
  const args = await argsOf(deps, approval);
  const view = {
    approval: publicApproval(approval),
    ...(args && { args }),
    evidence: await evidenceFor(deps.ledger, approval),
    approver: verdict.claims.approver,
    link,
    postUrl: `${event.requestContext.stage ? `/${event.requestContext.stage}` : ''}/decide/${encodeURIComponent(approvalId)}`,
  };
  return html(200, renderApprovalPage(view));
}

/** The arguments of the call an approval guards (a budget extension has none). */
async function argsOf(deps: ApprovalDeps, approval: ApprovalRecord): Promise<Record<string, unknown> | undefined> {
  if (approval.budget) return undefined;
  const turn = await deps.ledger.getTurn(approval.runId, approval.turn);
  const block = turn?.content.filter((b) => b.type === 'tool_use')[approval.call - 1];
  return block && 'input' in block ? (block.input as Record<string, unknown>) : undefined;
}

/**
 * middy's http-error-handler shape: invalid input becomes a 400 whose message names the field, a
 * refused request (HttpRequestError) its own 4xx; a ledger record that fails verification a 500
 * that names it (damaged state is named: which run, which record, what is wrong — what `savepoint
 * verify` would say); anything else is a 500 whose details stay in the logs.
 */
export const httpErrors = (): middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> => ({
  onError: (request) => {
    const error = request.error;
    if (error instanceof NotFoundError) {
      request.response = json(404, { message: error.message });
      return;
    }
    if (error?.name === ErrorNames.InvalidInput) {
      request.response = json(400, { message: error.message });
      return;
    }
    if (error instanceof HttpRequestError) {
      request.response = json(error.statusCode, { message: error.message });
      return;
    }
    console.error(JSON.stringify({ level: 'ERROR', error: error?.name, message: error?.message }));
    request.response = json(500, { message: error?.name === ErrorNames.LedgerIntegrity ? error.message : 'internal error' });
  },
});

export function approvalApiHandler(deps: ApprovalDeps, middlewares: readonly middy.MiddlewareObj[] = []) {
  return proxyHandler(createApprovalApi(deps), middlewares);
}

/** A stack's approval API (createStackApprovalApi) behind the same middy handler. */
export function stackApprovalApiHandler(agents: ReadonlyMap<string, ApprovalDeps>, ledger: Pick<ApprovalDeps['ledger'], 'findApproval' | 'listPendingApprovals'>, middlewares: readonly middy.MiddlewareObj[] = []) {
  return proxyHandler(createStackApprovalApi(agents, ledger), middlewares);
}

function proxyHandler(api: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>, middlewares: readonly middy.MiddlewareObj[]) {
  const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>({ timeoutEarlyInMillis: TIMEOUT_EARLY_MS });
  for (const middleware of middlewares) handler.use(middleware as middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>);
  return handler.use(httpErrors()).handler((event) => api(event));
}
