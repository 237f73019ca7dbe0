import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import type { SavepointClient } from '../client/ledger-client.js';
import { killEveryRun } from '../client/kill-all.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import { RunStatus, type RunRecord } from '../lambdas/records/ledger-records.js';
import { ErrorNames } from '../lambdas/shared/errors.js';
import { createLoopbackServer } from '../lambdas/shared/loopback-server.js';
import { sameSecret } from '../lambdas/shared/same-secret.js';
import { parseOrThrow } from '../lambdas/shared/validation.js';
import { routeTable } from '../lambdas/adapters/api-methods.js';
import { KillReason } from '../lambdas/runs/run-request.js';
import { systemClock, type Clock } from '../lambdas/shared/ports.js';
import { localUser } from '../local/services/approval-api.js';
import { MAX_DECISION_REASON } from '../lambdas/approvals/decision.js';
import type { AslDefinition } from '../local/template/asl.js';
import { readBoundedBody } from '../local/services/http-body.js';
import { countStates, currentState, executionName, layoutDefinition, type HistorySource } from './history.js';
import { streamTickets } from './stream-tickets.js';
import { localRunEvents } from '../local/services/run-events.js';
import { nodeStreamResponse } from '../local/services/event-stream.js';
import { executionLinks, historyAsk, runRows, timeline } from './views.js';
import { loopbackHosts } from '../lambdas/shared/loopback-hosts.js';

/**
 * `savepoint console`: a small web app on loopback to watch runs and steer them. It reads through
 * the ledger and the execution history, and steers through the client (the same routes the CLI
 * takes: decisions through the approval API, kills in the ledger, resumes through StartExecution).
 *
 * Security: every request to /api needs the per-start session token in the `x-savepoint-token`
 * header. The printed URL carries it in its fragment (`/#token=…`, never sent to any server); the
 * page moves it to its sessionStorage (per origin: per port) and clears the address bar. Nothing a
 * browser attaches on its own authorizes anything: no cookie is set or read (a browser sends the
 * cookies of 127.0.0.1 to every port, so another local user's server would collect them), and basic
 * auth is ignored. The event stream, which a browser opens without headers, takes a single-use
 * ticket the page fetched with its header (stream-tickets.ts). Every POST also needs an `Origin` of
 * the console itself when it has one, and is refused when the console is bound to anything but
 * loopback (read-only). The Host header must name loopback (a DNS-rebinding page is refused).
 */

export interface ConsoleOptions {
  ledger: Ledger;
  client: SavepointClient;
  history: HistorySource;
  /** The definition the run's executions ran (the local engine's; on AWS the execution's own), for the graph. */
  definition?: (run: RunRecord) => Promise<AslDefinition | undefined> | AslDefinition | undefined;
  /** Where to watch an execution (the AWS console, on a deployed stack). */
  executionLink?: (executionArn: string) => string;
  /** What the console shows, for the header: e.g. `stack Savepoint (eu-west-1)`. @default the local engine */
  where?: string;
  /** Called on every change the console should show (e.g. the engine's history events). */
  subscribe?: (onChange: () => void) => () => void;
  /** How often a run followed through its event stream is read from the ledger, at the most. @default 25 ms (lambdas/runs/event-feed.ts POLL_MS) */
  runEventsPollMs?: number;
  /** Whether runs can be started (resumed): an engine is reachable. */
  canStart: boolean;
  /** The agent the engine runs, shown in the header. */
  agent?: string;
  /** Who decides, as recorded with a decision or a kill. @default console:$USER */
  actor?: string;
  /** @default 127.0.0.1 */
  host?: string;
  /** @default 0 (any free port) */
  port?: number;
  /** The session token. @default 32 random bytes */
  token?: string;
  /** Expires the event stream's tickets. @default the system clock */
  clock?: Clock;
  log?: (line: string) => void;
}

export interface ConsoleServer {
  /** The address to open: the session token in its fragment (`/#token=…`), which no browser sends to a server. */
  url: string;
  origin: string;
  token: string;
  readOnly: boolean;
  close(): Promise<void>;
}

const TOKEN_HEADER = 'x-savepoint-token';
const MAX_BODY_BYTES = 16 * 1024;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const STATIC: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};

const RunsQuery = z
  .object({
    agent: z.string().min(1).max(200).optional(),
    status: z.union([RunStatus(), z.enum(['working', 'input_required', 'completed', 'cancelled'])]).optional(),
    day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a day is YYYY-MM-DD').optional(),
  })
  .strict();
const TimelineQuery = z
  .object({
    page: z.coerce.number().int().positive().default(1),
    pageSize: z.coerce.number().int().min(1).max(1000).default(200),
  })
  .strict();
const StateMachineQuery = z.object({ execution: z.string().min(1).max(200).optional() }).strict();
const RunId = z.string().min(1).max(200);
/** What a decision records (and a kill: KillReason): the page's reason box takes no more (static/index.html). */
const Reason = z.string().max(MAX_DECISION_REASON).optional();
const DecisionBody = z.object({ decision: z.enum(['approve', 'reject']), reason: Reason }).strict();
const KillBody = z.object({ reason: KillReason().optional() }).strict();
const GlobalKillBody = z.object({ on: z.boolean(), reason: KillReason().optional() }).strict();
const ResumeBody = z.object({ force: z.boolean().optional() }).strict();
/** "Fork from here" on a run's timeline: the turn, and what the fork's writes do (lambdas/runs/fork.ts). */
const ForkQuery = z.object({ at: z.coerce.number().int().positive(), effects: z.enum(['reuse', 'dry']).default('reuse') }).strict();
const ForkBody = ForkQuery.extend({ at: z.number().int().positive(), runId: RunId.optional() }).strict();

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** A request to a route of the console's API: its path parameters (decoded), its query, and a POST's JSON body. */
interface ApiCall {
  params: Record<string, string>;
  query: Record<string, string>;
  body: unknown;
}

/**
 * A route of the console's API (`METHOD /path` under `/api`, api-methods.ts routeTable) and what
 * answers it: JSON, or an event stream it writes itself (opened with a ticket, as a browser's
 * EventSource sends no header). Another method on a route is refused 405 with the route's methods in
 * `Allow` (RFC 9110 §15.5.6), before a body is read: the same table dispatches and refuses.
 */
type ConsoleRoute = { route: `${'GET' | 'POST'} /${string}` } & (
  | { answer(call: ApiCall): Promise<unknown> | unknown }
  | { stream(call: ApiCall, request: IncomingMessage, response: ServerResponse): Promise<void> | void }
);

export async function startConsole(options: ConsoleOptions): Promise<ConsoleServer> {
  const host = options.host ?? '127.0.0.1';
  const readOnly = !LOOPBACK.has(host);
  const token = options.token ?? randomBytes(32).toString('base64url');
  // The local user in the one form every local command records (the channel, `console`, is recorded beside it).
  const actor = options.actor ?? localUser();
  const log = options.log ?? (() => undefined);
  const staticDir = new URL('./static/', import.meta.url);
  const assets = Object.fromEntries(Object.entries(STATIC).map(([path, asset]) => [path, { ...asset, body: readFileSync(new URL(asset.file, staticDir)) }]));

  // Live updates: a version counter bumped on every change, pushed (debounced) to event streams.
  let version = 0;
  const streams = new Set<ServerResponse>();
  let pushTimer: NodeJS.Timeout | undefined;
  const changed = () => {
    version++;
    pushTimer ??= setTimeout(() => {
      pushTimer = undefined;
      for (const stream of streams) stream.write(`event: version\ndata: ${version}\n\n`);
    }, 100);
  };
  const unsubscribe = options.subscribe?.(changed);
  const keepAlive = setInterval(() => {
    for (const stream of streams) stream.write(': keep-alive\n\n');
  }, 15_000);
  keepAlive.unref();

  let origins: Set<string> = new Set();
  let hosts: Set<string> = new Set();
  const tickets = streamTickets(options.clock ?? systemClock);
  // The same route as the engine's `GET /v1/runs/{id}/events`, over the ledger the console reads.
  const runEvents = localRunEvents(options.ledger, options.clock ?? systemClock, { log, ...(options.runEventsPollMs !== undefined && { pollMs: options.runEventsPollMs }) });

  const validToken = (candidate: string | undefined) => candidate !== undefined && candidate !== '' && sameSecret(candidate, token);
  const headerToken = (request: IncomingMessage) => {
    const value = request.headers[TOKEN_HEADER];
    return Array.isArray(value) ? value[0] : value;
  };

  /** The run a route under `/runs/{runId}` names: 404 when there is none. */
  const runOf = async (runId: string) => {
    const run = await options.ledger.getRun(runId);
    if (!run) throw new HttpError(404, `runId: no run ${runId}`);
    return run;
  };
  const runIdOf = (params: Record<string, string>) => parseOrThrow(RunId, params['runId'], 'runId');
  const routes = routeTable<ConsoleRoute>([
    { route: 'GET /version', answer: () => ({ version }) },
    { route: 'GET /stream-ticket', answer: () => tickets.issue() },
    {
      route: 'GET /info',
      answer: async () => {
        const globalKill = await options.ledger.getGlobalKill();
        return { agent: options.agent ?? null, where: options.where ?? null, readOnly, canStart: options.canStart, version, globalKill: globalKill ?? null };
      },
    },
    {
      // The console's own changes, as a version counter the page reloads on.
      route: 'GET /events',
      stream: (_call, request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
        response.write(`event: version\ndata: ${version}\n\n`);
        streams.add(response);
        request.on('close', () => streams.delete(response));
      },
    },
    { route: 'GET /runs', answer: async ({ query }) => ({ ...(await runRows(options.ledger, parseOrThrow(RunsQuery, query, 'query'), new Date())), version }) },
    {
      route: 'GET /runs/{runId}',
      answer: async ({ params }) => {
        const runId = runIdOf(params);
        const run = await runOf(runId);
        const [view, executions] = await Promise.all([options.client.status(runId), executionLinks(run, options.history, options.executionLink)]);
        // Its lineage: the run it was forked from, and the runs forked from it.
        const lineage = { forkedFrom: run.forkedFrom ?? null, forks: run.forks ?? [] };
        return { ...view, executions, config: run.config, lineage, version };
      },
    },
    {
      // The hazard report of a fork at a turn, shown before it starts.
      route: 'GET /runs/{runId}/fork-report',
      answer: async ({ params, query }) => {
        const runId = runIdOf(params);
        await runOf(runId);
        return { lines: await options.client.forkReport(runId, parseOrThrow(ForkQuery, query, 'query')), version };
      },
    },
    {
      route: 'GET /runs/{runId}/timeline',
      answer: async ({ params, query }) => {
        const run = await runOf(runIdOf(params));
        return { ...(await timeline(options.ledger, options.history, run, parseOrThrow(TimelineQuery, query, 'query'), options.executionLink)), version };
      },
    },
    {
      route: 'GET /runs/{runId}/state-machine',
      answer: async ({ params, query }) => {
        const runId = runIdOf(params);
        const run = await runOf(runId);
        // Counts over the whole chain of executions, or over the one named by `?execution=`.
        const { execution } = parseOrThrow(StateMachineQuery, query, 'query');
        const selected = execution === undefined ? run.executions : run.executions.filter((arn) => executionName(arn) === execution);
        if (selected.length === 0) throw new HttpError(404, `execution: run ${runId} has no execution ${execution}`);
        const definition = await options.definition?.(run);
        if (!definition) throw new HttpError(404, 'the state machine definition is not available here (no engine runs and no agent to synthesize it)');
        const ask = historyAsk(run);
        const lines = await Promise.all(selected.map((arn) => options.history.linesOf(arn, ask)));
        const current = run.status === 'running' ? currentState(await options.history.linesOf(run.executionArn)) : undefined;
        return {
          ...layoutDefinition(definition),
          counts: countStates(lines),
          current: current ?? null,
          executions: run.executions.map(executionName),
          selected: execution ?? null,
          version,
        };
      },
    },
    {
      // A run's event stream (lambdas/runs/events.ts): the run view follows its run through it, as any client of the runs API does.
      route: 'GET /runs/{runId}/events',
      stream: ({ params, query }, request, response) => {
        const runId = runIdOf(params);
        const lastEventId = request.headers['last-event-id'];
        // The ticket is the console's own (it authorized the stream); the rest is the route's query.
        const { ticket: _ticket, ...rest } = query;
        return runEvents({ runId, query: rest, lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined }, nodeStreamResponse(request, response));
      },
    },
    {
      route: 'POST /approvals/{approvalId}/decide',
      answer: async ({ params, body }) => {
        const approvalId = parseOrThrow(z.string().min(1).max(200), params['approvalId'], 'approvalId');
        const { decision, reason } = parseOrThrow(DecisionBody, body, 'body');
        // Decided as the person running the console: the approval API records this machine's user.
        // A rejection's reason is what the model is told (approval_rejected): said in words.
        const result = await options.client.decide(approvalId, decision, { reason: reason ?? `${decision === 'approve' ? 'approved' : 'rejected'} in the console by ${actor}` });
        changed();
        if (!result.ok) throw new HttpError(result.status, `approvalId: ${result.message}`);
        return { ok: true, status: result.approval.status, delivered: result.delivered, ...(result.waitingForSecond && { waitingForSecond: true }) };
      },
    },
    {
      route: 'POST /runs/{runId}/kill',
      answer: async ({ params, body }) => {
        const runId = runIdOf(params);
        const { reason } = parseOrThrow(KillBody, body, 'body');
        const run = await runOf(runId);
        if (run.status !== 'running') throw new HttpError(409, `runId: run ${runId} is ${run.status}, not running`);
        const view = await options.client.cancel(runId, { by: actor, reason: reason ?? 'killed in the console' });
        changed();
        return { ok: true, status: view.report.status, lifecycle: view.lifecycle };
      },
    },
    {
      route: 'POST /runs/{runId}/resume',
      answer: async ({ params, body }) => {
        const runId = runIdOf(params);
        const { force } = parseOrThrow(ResumeBody, body, 'body');
        const run = await runOf(runId);
        if (run.status !== 'failed') throw new HttpError(409, `runId: run ${runId} is ${run.status}; only a failed run is resumed here`);
        if (!options.canStart) throw new HttpError(409, 'no engine runs: resume with `savepoint resume <runId>`');
        const started = await options.client.start({ runId, input: run.input, ...(force && { force }) });
        changed();
        return { ok: true, executionArn: started.executionArn };
      },
    },
    {
      route: 'POST /runs/{runId}/fork',
      answer: async ({ params, body }) => {
        const runId = runIdOf(params);
        const fork = parseOrThrow(ForkBody, body, 'body');
        await runOf(runId);
        if (!options.canStart) throw new HttpError(409, 'no engine runs: fork with `savepoint fork <runId> --at <turn>`');
        const started = await options.client.fork(runId, { ...fork, runId: fork.runId ?? `${runId}-fork-${fork.at}${fork.effects === 'dry' ? '-dry' : ''}`.slice(0, 80) });
        changed();
        return { ok: true, runId: started.runId, executionArn: started.executionArn };
      },
    },
    {
      route: 'POST /kill-all',
      answer: async ({ body }) => {
        const { on, reason } = parseOrThrow(GlobalKillBody, body, 'body');
        const flag = { by: actor, at: new Date().toISOString(), reason: reason ?? 'global kill from the console' };
        const stopped = on ? await killEveryRun(options.ledger, options.client, flag) : await options.ledger.setGlobalKill(undefined).then(() => []);
        changed();
        return { ok: true, globalKill: on, ...(stopped.length > 0 && { stopped }) };
      },
    },
  ]);

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    // A target that is no URL (`//[`) is none of the console's pages: refused 404 as any other (proxy.ts refuses it too), never a 500.
    const url = URL.parse(request.url ?? '/', 'http://console.invalid');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
      response.end(JSON.stringify(body));
    };
    // A page on another site that resolves its own name to 127.0.0.1 (DNS rebinding) sends its own Host.
    if (!readOnly && !hosts.has(request.headers.host ?? '')) return send(403, { message: `Host ${request.headers.host ?? '(none)'} is not this console's` });
    if (!url) return send(404, { message: `no page ${request.url}` });
    if (!url.pathname.startsWith('/api/')) {
      const asset = STATIC[url.pathname] && assets[url.pathname];
      if (!asset) return send(404, { message: `no page ${url.pathname}` });
      // A page is read (HEAD answered as GET, without its body: node:http sends none), never posted to.
      if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, { message: `${request.method} is not allowed on ${url.pathname}: it takes GET, HEAD` }, { allow: 'GET, HEAD' });
      const headers: Record<string, string> = {
        'content-type': asset.type,
        'cache-control': 'no-store',
        'content-security-policy': "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
        'x-frame-options': 'DENY',
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      };
      response.writeHead(200, headers);
      return response.end(asset.body);
    }
    const method = request.method ?? 'GET';
    const path = url.pathname.slice('/api'.length);
    const found = routes.match(method, path);
    // Only the header (or, for an event stream, a ticket taken with it): never a cookie or basic auth.
    const stream = found !== undefined && 'stream' in found.route;
    const ticket = stream ? url.searchParams.get('ticket') : null;
    const authorized = ticket !== null ? tickets.redeem(ticket) : validToken(headerToken(request));
    if (!authorized) {
      return send(403, { message: ticket !== null ? 'stream ticket unknown, used or expired: take a new one from /api/stream-ticket' : `session token missing or wrong (send it in the ${TOKEN_HEADER} header): open the address \`savepoint console\` printed` });
    }
    if (request.method === 'POST') {
      const origin = request.headers.origin;
      if (origin !== undefined && !origins.has(origin)) return send(403, { message: `Origin ${origin} may not post to this console` });
      if (request.headers['sec-fetch-site'] === 'cross-site') return send(403, { message: 'a cross-site request may not post to this console' });
    }
    if (!found) {
      const refused = routes.methodNotAllowed(method, path, url.pathname);
      if (refused) return send(405, { message: refused.message }, { allow: refused.allow });
      return send(404, { message: `no route ${method} ${url.pathname}` });
    }
    try {
      const params = Object.fromEntries(Object.entries(found.params).map(([name, value]) => [name, decodeSegment(value)]));
      if (method === 'POST' && readOnly) throw new HttpError(403, `read-only: the console is bound to ${host}, not loopback`);
      const call = { params, query: Object.fromEntries(url.searchParams), body: method === 'POST' ? await readJson(request) : undefined };
      if ('stream' in found.route) return await found.route.stream(call, request, response);
      send(200, await found.route.answer(call));
    } catch (error) {
      // A stream that fails once open cannot be answered anew: the server logs it (createLoopbackServer below).
      if (response.headersSent) throw error;
      if (error instanceof HttpError) return send(error.status, { message: error.message });
      if (error instanceof Error && error.name === ErrorNames.InvalidInput) return send(400, { message: error.message });
      // Damaged state is named (which run, which record, what is wrong: what `savepoint verify` says), as the approval API names it.
      if (error instanceof Error && error.name === ErrorNames.LedgerIntegrity) return send(500, { message: error.message });
      log(`console: ${request.method} ${url.pathname}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      send(500, { message: 'internal error (see the log)' });
    }
  };

  const server = createLoopbackServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      log(`console: ${String(error)}`);
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const origin = `http://${shownHost}:${port}`;
  hosts = loopbackHosts(port, [shownHost]);
  origins = new Set([...hosts].map((h) => `http://${h}`));

  let closed: Promise<void> | undefined;
  return {
    url: `${origin}/#token=${token}`,
    origin,
    token,
    readOnly,
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        unsubscribe?.();
        clearInterval(keepAlive);
        if (pushTimer) clearTimeout(pushTimer);
        for (const stream of streams) stream.end();
        streams.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/** A path segment, decoded; a malformed percent-encoding is the caller's mistake (400), not ours. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `path: malformed percent-encoding in ${JSON.stringify(segment)}`);
  }
}

/** The JSON body of a POST: at most 16 KiB of application/json; an empty body is `{}`. */
async function readJson(request: IncomingMessage): Promise<unknown> {
  const type = request.headers['content-type'] ?? '';
  // Read to its end even when too large: the 413 then reaches the client instead of a reset.
  const body = await readBoundedBody(request, MAX_BODY_BYTES);
  if (body === undefined) throw new HttpError(413, `body: larger than ${MAX_BODY_BYTES} bytes`);
  const text = body.toString('utf8');
  if (text.trim() === '') return {};
  if (!type.startsWith('application/json')) throw new HttpError(415, 'body: send application/json');
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'body: not valid JSON');
  }
}
