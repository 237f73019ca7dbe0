import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLoopbackServer } from '../lambdas/shared/loopback-server.js';
import { PAYLOAD_LIMIT_BYTES } from '../lambdas/shared/limits.js';
import { readBoundedBody } from '../local/services/http-body.js';
import { parseOrThrow } from '../lambdas/shared/validation.js';
import { ListQuery, type RunSummary } from '../lambdas/runs/runs-api.js';
import { SEEN_LIFECYCLE_HEADER } from '../lambdas/runs/lifecycle.js';
import { decodeCursor, mergeRunPages } from '../lambdas/runs/run-pages.js';
import { credentialedUrl, MISSING_CREDENTIAL, newLoopbackCredential, credentialChecker } from '../local/services/loopback-credential.js';
import { assertMethod, decodePathSegment, parseUrl, RefusedRequest } from '../local/services/approval-api.js';
import { BATCH_ID_PATTERN, batchIdRefusal, RUN_ID_PATTERN, runIdRefusal } from '../lambdas/runs/run-id.js';

/** One agent's engine behind the front door: its runs and approval APIs, with their credential. */
export interface AgentApis {
  readonly name: string;
  /** `http://127.0.0.1:<port>/<credential>/v1/runs` */
  readonly runs: string;
  /** `http://127.0.0.1:<port>/<credential>/v1/approvals` */
  readonly approvals: string;
}

const MAX_BODY = PAYLOAD_LIMIT_BYTES + 4 * 1024;
const RUN = /^\/v1\/runs\/([^/]+)(\/cancel|\/events)?\/?$/;
const APPROVAL = /^\/v1\/approvals\/([^/]+)\/?$/;
const BATCH = /^\/v1\/batches\/([^/]+)\/?$/;
const PAGE = /^\/v1\/decide\/([^/]+)\/?$/;

/** An engine's batches (`…/<credential>/v1/batches`): its runs API serves them beside its runs (lambdas/adapters/runs-http.ts). */
const batchesOf = (agent: AgentApis) => agent.runs.replace(/\/v1\/runs$/, '/v1/batches');
/** An engine's approval page (`http://127.0.0.1:<port>/v1/decide`): on its API's port, outside the credential (its signed link is its own). */
const pageOf = (agent: AgentApis) => `${new URL(agent.approvals).origin}/v1/decide`;

/**
 * `savepoint serve` with several agents: each agent has an engine of its own (its own ledger, as
 * a `DurableAgent` of its own has on AWS), and this one loopback port, behind its own credential,
 * routes the runs API and the approval API to them — a start (of a run or a batch) by the `agent`
 * it names, a run (its events too), a batch or an approval to the engine that holds it, a listing by its `agent` (without one,
 * every engine's runs merged, newest first); the approvals waiting in every engine are listed
 * together. Each engine answers as it would alone (its 4xx included). The approval page too
 * (`/v1/decide/<approvalId>`, outside the credential: its signed link is its own), relayed to the
 * engine that holds the approval, so that every agent's links name this one port (`pageUrl`) and
 * a tunnel to it reaches them all.
 *
 * It listens first, its port known to the engines' links before they start; until `serve` hands
 * it the engines it answers 503.
 */
export async function startFrontDoor(options: { port?: number; fallback?: (request: IncomingMessage, response: ServerResponse) => boolean } = {}) {
  const credential = newLoopbackCredential();
  const pathAfterCredential = credentialChecker(credential);
  let agents: readonly AgentApis[] = [];
  const server = createLoopbackServer((request, response) => {
    // A target or an id it cannot parse is the caller's mistake (its 4xx, as each engine answers it); anything else is ours.
    route(request, response).catch((error: unknown) => {
      if (!(error instanceof RefusedRequest)) return answer(response, 500, String(error));
      request.resume(); // a body not read yet: the refusal is sent after it, not as a reset
      answer(response, error.status, error.message, undefined, error.headers);
    });
  });

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (agents.length === 0) {
      request.resume();
      return answer(response, 503, 'savepoint serve is starting its engines: try again in a moment', undefined, { 'retry-after': '1' });
    }
    const target = request.url ?? '/';
    // As each engine's own API: the page's path alone is served without the credential.
    if (target.startsWith('/v1/decide')) return page(request, response, target);
    const authorized = pathAfterCredential(target);
    if (authorized === undefined) {
      if (options.fallback?.(request, response)) return;
      request.resume();
      return answer(response, 403, MISSING_CREDENTIAL);
    }
    const url = parseUrl(authorized);
    // A method the route does not take is refused as each engine refuses it (405, with Allow), before
    // any engine is asked: every route below sees only a method it takes.
    assertMethod(request.method, url.pathname);
    const body = await readBoundedBody(request, MAX_BODY);
    if (body === undefined) return answer(response, 413, `body: larger than the ${MAX_BODY} bytes a run request may have`);
    const method = request.method ?? 'GET';
    const forward = (target: string) => relay(request, response, target, body);
    const byName = (name: string | null | undefined) => {
      if (name === undefined || name === null) return agents.length === 1 ? agents[0] : undefined;
      return agents.find((agent) => agent.name === name);
    };
    const names = agents.map((agent) => agent.name).join(', ');
    const noSuchAgent = (named: string | null | undefined) => answer(response, 400, named ? `agent: no agent ${named} here (this serve runs ${names})` : `agent: this serve runs ${names}: name one`);

    // A start is routed by the agent its body names: a body that is no JSON names none, and is
    // refused for what it is (as each engine refuses it), not as a request that forgot its agent.
    const start = method === 'POST' && /^\/v1\/(runs|batches)\/?$/.test(url.pathname);
    const sent = start && body.length > 0 ? startRequest(body) : {};
    if (!sent) return answer(response, 400, 'body: not valid JSON');
    if (/^\/v1\/runs\/?$/.test(url.pathname)) {
      const named = method === 'POST' ? sent.agent : url.searchParams.get('agent');
      if (method === 'GET' && named === null && agents.length > 1) return listEvery(agents, url.searchParams, response);
      const agent = byName(named);
      if (!agent) return noSuchAgent(named);
      return forward(`${agent.runs}${url.search}`);
    }
    if (/^\/v1\/batches\/?$/.test(url.pathname)) {
      const named = sent.agent;
      const agent = byName(named);
      if (!agent) return noSuchAgent(named);
      return forward(`${batchesOf(agent)}${url.search}`);
    }
    const batch = BATCH.exec(url.pathname);
    if (batch) {
      const batchId = decodePathSegment(batch[1]!, 'batchId');
      // An id no batch can have is refused as each engine refuses it (400), not answered as a batch none holds (404).
      if (!BATCH_ID_PATTERN.test(batchId)) return answer(response, 400, batchIdRefusal());
      const owner = await holder(agents, (agent) => `${batchesOf(agent)}/${batch[1]}`);
      if (!owner) return answer(response, 404, `batchId: no batch ${batchId}`);
      return forward(`${batchesOf(owner)}/${batch[1]}${url.search}`);
    }
    const run = RUN.exec(url.pathname);
    if (run) {
      const runId = decodePathSegment(run[1]!, 'runId');
      if (!RUN_ID_PATTERN.test(runId)) return answer(response, 400, runIdRefusal());
      const owner = await holder(agents, (agent) => `${agent.runs}/${run[1]}`);
      if (!owner) return answer(response, 404, `runId: no run ${runId}`);
      return forward(`${owner.runs}/${run[1]}${run[2] ?? ''}${url.search}`);
    }
    if (/^\/v1\/approvals\/?$/.test(url.pathname)) {
      const lists = await Promise.all(agents.map(async (agent) => ((await (await fetch(agent.approvals)).json()) as { approvals?: unknown[] }).approvals ?? []));
      return answer(response, 200, undefined, { approvals: lists.flat() });
    }
    const approval = APPROVAL.exec(url.pathname);
    if (approval) {
      const approvalId = decodePathSegment(approval[1]!, 'approvalId');
      const owner = await holder(agents, (agent) => `${agent.approvals}/${approval[1]}`);
      if (!owner) return answer(response, 404, `no approval ${approvalId}`);
      return forward(`${owner.approvals}/${approval[1]}${url.search}`);
    }
    return answer(response, 404, `no route ${url.pathname}`);
  }

  /** The approval page and its decision, from the engine that holds the approval; an approval none holds, the first engine's page answers (its page for an unknown approval). */
  async function page(request: IncomingMessage, response: ServerResponse, target: string): Promise<void> {
    const url = new URL(target, 'http://front.invalid');
    // `/v1/decide/../approvals` is the credential's path, not the page's (as the engines refuse it).
    const asked = PAGE.exec(url.pathname);
    if (!asked) {
      request.resume();
      return url.pathname.startsWith('/v1/decide') ? answer(response, 404, `no route ${url.pathname}`) : answer(response, 403, MISSING_CREDENTIAL);
    }
    const body = await readBoundedBody(request, MAX_BODY);
    if (body === undefined) return answer(response, 413, `body: larger than the ${MAX_BODY} bytes a decision may have`);
    const owner = (await holder(agents, (agent) => `${agent.approvals}/${asked[1]}`)) ?? agents[0]!;
    return relay(request, response, `${pageOf(owner)}/${asked[1]}${url.search}`, body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    runsUrl: credentialedUrl(`http://127.0.0.1:${port}`, credential, '/v1/runs'),
    approvalsUrl: credentialedUrl(`http://127.0.0.1:${port}`, credential, '/v1/approvals'),
    /** Where every engine's approval page is reached: the engines' links name it (local-stack.ts `api.pageUrl`). */
    pageUrl: `http://127.0.0.1:${port}/v1/decide`,
    /** The engines it routes to, once they are started. */
    serve(started: readonly AgentApis[]): void {
      agents = started;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The `agent` a start's body names (none: undefined), or undefined for a body that is no JSON. */
function startRequest(body: Buffer): { agent?: string } | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { agent?: unknown } | null;
    return typeof parsed?.agent === 'string' ? { agent: parsed.agent } : {};
  } catch {
    return undefined;
  }
}

/**
 * `GET /v1/runs` without an agent: each engine's page from the same cursor, merged newest first
 * (lambdas/runs/run-pages.ts), so a cursor pages through every agent's runs with none twice and
 * none skipped. A query an engine refuses is refused as it answered (a bad cursor: 400).
 */
async function listEvery(agents: readonly AgentApis[], query: URLSearchParams, response: ServerResponse): Promise<void> {
  let limit: number;
  try {
    const parsed = parseOrThrow(ListQuery, Object.fromEntries(query), 'query');
    if (parsed.cursor !== undefined) decodeCursor(parsed.cursor);
    limit = parsed.limit;
  } catch (error) {
    return answer(response, 400, (error as Error).message);
  }
  const answers = await Promise.all(
    agents.map(async (agent) => {
      const asked = new URLSearchParams(query);
      asked.set('agent', agent.name);
      const listed = await fetch(`${agent.runs}?${asked}`);
      return { status: listed.status, page: (await listed.json()) as { runs: RunSummary[]; nextCursor?: string; message?: string } };
    }),
  );
  const refused = answers.find(({ status }) => status !== 200);
  if (refused) return answer(response, refused.status, refused.page.message);
  return answer(response, 200, undefined, mergeRunPages(answers.map(({ page }) => page), limit));
}

/** The agent whose engine has the resource (answers 200 to a GET of it), if any. */
async function holder(agents: readonly AgentApis[], resource: (agent: AgentApis) => string): Promise<AgentApis | undefined> {
  for (const agent of agents) {
    const response = await fetch(resource(agent));
    await response.arrayBuffer();
    if (response.ok) return agent;
  }
  return undefined;
}

/** The engine's answer to the request, passed on as it comes (an event stream too, until either side ends it). */
async function relay(request: IncomingMessage, response: ServerResponse, target: string, body: Buffer): Promise<void> {
  const ended = new AbortController();
  response.on('close', () => ended.abort());
  const headers: Record<string, string> = {};
  // The lifecycle a long-poll's caller read (lambdas/runs/runs-api.ts): the engine waits from there.
  for (const name of ['content-type', 'accept', 'last-event-id', SEEN_LIFECYCLE_HEADER]) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  const answered = await fetch(target, { method: request.method ?? 'GET', headers, ...(body.length > 0 && { body: new Uint8Array(body) }), signal: ended.signal });
  const passed: Record<string, string> = {};
  // The approval page's own rules for the browser (lambdas/adapters/approval-http.ts) with it.
  for (const name of ['content-type', 'location', 'retry-after', 'allow', 'cache-control', 'content-security-policy', 'referrer-policy']) {
    const value = answered.headers.get(name);
    if (value !== null) passed[name] = value;
  }
  response.writeHead(answered.status, passed);
  if (!answered.body) return void response.end();
  try {
    for await (const chunk of answered.body as unknown as AsyncIterable<Uint8Array>) response.write(chunk);
  } catch (error) {
    if (!ended.signal.aborted) throw error;
  }
  response.end();
}

function answer(response: ServerResponse, status: number, message: string | undefined, body?: unknown, headers: Record<string, string> = {}): void {
  if (response.headersSent) return void response.destroy();
  response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body ?? { message }));
}
