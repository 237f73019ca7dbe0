import type { Identity } from '../approvals/policy.js';
import type { RunLedger } from '../ledger/ledger.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { decodeCursor, mergeRunPages } from './run-pages.js';
import { createRunsRoutes, ListQuery, type RunsApiDeps } from './runs-api.js';
import { RunId } from './run-request.js';

/** The routes of the runs API, as one agent's (createRunsRoutes) or a stack's (createStackRunsRoutes) answer them. */
export type RunsRoutes = ReturnType<typeof createRunsRoutes>;

/**
 * The runs API of a stack: one API for every agent of the stack (issue 34, "a shared control
 * plane per stack"), each request answered by the routes of the agent it is for — a start (or a
 * batch) by the `agent` its body names (none needed when the API serves one agent), a run by the
 * agent its record names, a listing by its `agent` (without one, every agent's pages from the same
 * cursor merged newest first: lambdas/runs/run-pages.ts). Each agent's routes answer as they would
 * alone, its input schema, run id rule, budgets and people included: nothing is started for a
 * request one of them refuses. `savepoint serve`'s front door routes the same way between engines
 * (cli/serve-front.ts); this is the one function's routing on AWS and in the twin.
 */
export function createStackRunsRoutes(agents: ReadonlyMap<string, RunsApiDeps>, runs: Pick<RunLedger, 'getRun'>): RunsRoutes {
  if (agents.size === 0) throw new Error('the stack runs API serves at least one agent');
  const routes = new Map([...agents].map(([name, deps]) => [name, createRunsRoutes(deps)]));
  const names = [...routes.keys()].join(', ');
  const first = routes.values().next().value!;
  /** The routes of the agent a request names; with none named, the API's only agent. */
  const named = (name: unknown): RunsRoutes => {
    if (name === undefined) {
      if (routes.size === 1) return first;
      throw new InvalidInputError(`agent: this API runs ${names}: name one`);
    }
    const found = typeof name === 'string' ? routes.get(name) : undefined;
    if (!found) throw new InvalidInputError(`agent: no agent ${typeof name === 'string' ? name : JSON.stringify(name)} here (this API runs ${names})`);
    return found;
  };
  const agentOf = (body: unknown) => (typeof body === 'object' && body !== null ? (body as { agent?: unknown }).agent : undefined);
  /** The routes of the agent whose run `rawRunId` is; a run of no agent served here is not found. */
  const holder = async (rawRunId: string): Promise<RunsRoutes> => {
    const runId = parseOrThrow(RunId(), rawRunId, 'runId');
    const run = await runs.getRun(runId);
    const found = run && routes.get(run.agent);
    if (!found) throw new NotFoundError(`runId: no run ${runId}`);
    return found;
  };

  return {
    start: (caller: Identity, body: unknown) => named(agentOf(body)).start(caller, body),
    get: async (runId, query, remainingMs, seenLifecycle) => (await holder(runId)).get(runId, query, remainingMs, seenLifecycle),
    cancel: async (caller, runId, body) => (await holder(runId)).cancel(caller, runId, body),
    list: async (rawQuery) => {
      const query = parseOrThrow(ListQuery, rawQuery ?? {}, 'query');
      if (query.agent !== undefined || routes.size === 1) return (query.agent === undefined ? first : (routes.get(query.agent) ?? first)).list(rawQuery);
      if (query.cursor !== undefined) decodeCursor(query.cursor);
      const pages = await Promise.all([...routes].map(([agent, each]) => each.list({ ...(rawQuery as object), agent })));
      return mergeRunPages(pages, query.limit);
    },
    startBatch: (caller: Identity, body: unknown) => named(agentOf(body)).startBatch(caller, body),
    // A batch's record names its agent; every agent's routes read the same store.
    getBatch: (batchId: string) => first.getBatch(batchId),
  };
}
