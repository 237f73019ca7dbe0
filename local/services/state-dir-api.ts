import type { DecisionMac } from '../../lambdas/approvals/decision-mac.js';
import type { ApprovalPolicy } from '../../lambdas/approvals/policy.js';
import type { AgentDefinition } from '../../lambdas/define.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { systemClock, type Clock } from '../../lambdas/shared/ports.js';
import { apiGatewayEvent, apiRoute, assertMethod, localUser, RefusedRequest } from './approval-api.js';
import { lambdaContext } from './lambda-context.js';

/**
 * The API of `savepoint serve` (the runs API and the approval API: local/services/approval-api.ts)
 * answered in this process, over a state directory that no engine drives: the same routes, the
 * same handlers, the same status codes and bodies as the socket, as a `fetch` the public client
 * (client/connect.ts `runsClient`) sends its requests to. Each request opens the directory's
 * ledger (to write only for a POST), and closes it once answered: nothing is held between two.
 * Reads and decisions work; a decision is recorded in the ledger and delivered when the run
 * resumes (no execution waits here); a start is refused 503 (nothing could run it), and so is a
 * run's event stream (it follows an engine's writes).
 *
 * The caller is the directory's owner (it can open the ledger), recorded as this machine's user,
 * as the loopback API records its credential's holder.
 */
export interface StateDirApiDeps {
  /** Opens the state directory's ledger for one request: to read, or to write (a POST). */
  open(access: 'read' | 'write'): Promise<{ ledger: Ledger; close(): Promise<void> }>;
  /** The agent a run's report is summarized by, from its name. */
  agentOf(name: string): Promise<AgentDefinition | undefined>;
  /** Signs decisions, as the engine's approval API would (the directory's decision key). */
  decisionMac: DecisionMac;
  /** The local deployment's approval policy (local/runtime/approvals.ts localApprovalPolicy). */
  policy: ApprovalPolicy;
  /** How to start an engine here, for what needs one. */
  engineHint: string;
  /** @default this machine's user (local/services/approval-api.ts localUser) */
  user?: string;
  /** @default the system clock */
  clock?: Clock;
}

/** The origin the in-process API's requests name: no socket is behind it. */
export const IN_PROCESS_ORIGIN = 'http://state-dir.savepoint.invalid';

/** A `fetch` that answers the runs API's requests in process (see StateDirApiDeps). */
export function stateDirApi(deps: StateDirApiDeps): typeof fetch {
  const clock = deps.clock ?? systemClock;
  const user = deps.user ?? localUser();
  // No execution waits on this directory: a decision is recorded, and delivered when its run resumes.
  const callbacks = { succeed: async () => false, fail: async () => false };
  // The answer as the client reads it (its status and text: client/loopback-request.ts Answer), not
  // a whole Response: fetch's implementation (undici) is what a short command must not load.
  const answer = (status: number, body: unknown) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return { ok: status >= 200 && status < 300, status, text: async () => text, json: async () => JSON.parse(text) as unknown, body: null } as unknown as Response;
  };
  return async (input, init = {}) => {
    const method = (init.method ?? 'GET').toUpperCase();
    const url = new URL(String(input)); // the client sends a URL string (never a Request: its global loads fetch's implementation)
    const body = typeof init.body === 'string' ? init.body : null;
    try {
      assertMethod(method, url.pathname); // as the socket refuses it (405)
      if (/^\/v1\/runs\/[^/]+\/events\/?$/.test(url.pathname)) return answer(503, { message: `events: a run's events are followed from an engine: ${deps.engineHint}` });
      const route = apiRoute(url.pathname, false, true);
      if (body !== null && Buffer.byteLength(body) > route.body.limit) throw new RefusedRequest(413, `body: larger than the ${route.body.limit} bytes ${route.body.what} may have`);
      const headers = { ...(init.headers as Record<string, string> | undefined) };
      const event = apiGatewayEvent({ method, route: route.route, approvalId: route.approvalId, cancel: route.cancel, path: url.pathname, headers, query: url.searchParams.size > 0 ? Object.fromEntries(url.searchParams) : null, body, principal: route.route === 'decide' ? undefined : user });
      const { ledger, close } = await deps.open(method === 'GET' ? 'read' : 'write');
      try {
        // Each API's handler loads when a request reaches it: `runs` needs no approval API, `approvals` no runs API.
        const result = await (route.runsRoute
          ? (await import('../../lambdas/adapters/runs-http.js')).runsApiHandler({ ledger, clock, agentOf: deps.agentOf, engineHint: deps.engineHint })(event, lambdaContext('RunsApi', 20_000))
          : (await import('../../lambdas/adapters/approval-http.js')).approvalApiHandler({ ledger, callbacks, clock, decisionMac: deps.decisionMac, policy: deps.policy })(event, lambdaContext('ApprovalCallback', 30_000)));
        return answer(result.statusCode, result.body);
      } finally {
        await close();
      }
    } catch (error) {
      if (error instanceof RefusedRequest) return answer(error.status, { message: error.message });
      throw error;
    }
  };
}
