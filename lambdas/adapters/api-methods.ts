/**
 * The routes the runs API's function serves (runs-http.ts dispatches through a table of exactly
 * these, each with what answers it: a route added here is one it must answer, or it does not compile).
 */
export const RUNS_API_ROUTES = ['GET /runs', 'POST /runs', 'GET /runs/{runId}', 'POST /runs/{runId}/cancel', 'POST /batches', 'GET /batches/{batchId}'] as const;

/** A route of the runs API's function (RUNS_API_ROUTES). */
export type RunsApiRoute = (typeof RUNS_API_ROUTES)[number];

/**
 * The methods each route of the API takes (`METHOD /path`, after the stage's `/v1`), as the template
 * defines them (infra/stack-api.ts `addMethod`; test/infra/stack.test.ts holds the two the same).
 *
 * On AWS, API Gateway answers another method on a route itself (403) and no function runs. Where
 * nothing stands in front of a router that chooses by method (an engine's loopback port:
 * local/services/approval-api.ts; `serve`'s front door: cli/serve-front.ts; the runs API's
 * function: runs-http.ts), another method is answered 405 Method Not Allowed with the route's
 * methods in `Allow` (RFC 9110 §15.5.6), before its body is read or a handler runs.
 */
export const API_METHODS = [
  'GET /approvals',
  'GET /approvals/{approvalId}',
  'POST /approvals/{approvalId}',
  'GET /decide/{approvalId}',
  'POST /decide/{approvalId}',
  ...RUNS_API_ROUTES,
  // Streamed by its own function (lambdas/adapters/run-events-lambda.ts).
  'GET /runs/{runId}/events',
] as const;

/**
 * A table of routes (`METHOD /path`, `{name}` a path parameter of one segment, as API Gateway
 * matches it; API Gateway's resource, `/runs/{runId}`, matches itself), each with what serves it:
 * the route of a request with its path parameters (as sent: still percent-encoded), the methods a
 * path takes, and the refusal of one it does not take. A router that dispatches through `match`
 * and refuses through `methodNotAllowed` cannot serve a route its 405 does not know, or the reverse.
 */
export function routeTable<Route extends { readonly route: string }>(routes: readonly Route[]) {
  const table = routes.map((entry) => {
    const [method, path] = entry.route.split(' ') as [string, string];
    const names = [...path.matchAll(/\{([^}]+)\}/g)].map((found) => found[1]!);
    return { entry, method, names, shape: path.replace(/\{[^}]+\}/g, '{}'), pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '([^/]+)')}$`) };
  });
  // A second route of the same method and path (its parameters named otherwise or not) would never answer.
  for (const [index, { method, shape, entry }] of table.entries()) {
    const first = table.findIndex((other) => other.method === method && other.shape === shape);
    if (first !== index) throw new Error(`routes: ${entry.route} is served by ${table[first]!.entry.route} already`);
  }
  /** The route serving `method` on `path`, with its path parameters; undefined when none does (a 405 or a 404). */
  const match = (method: string, path: string): { route: Route; params: Record<string, string> } | undefined => {
    for (const { entry, method: taken, names, pattern } of table) {
      const found = taken === method ? pattern.exec(path) : null;
      if (found) return { route: entry, params: Object.fromEntries(names.map((name, i) => [name, found[i + 1]!])) };
    }
    return undefined;
  };
  /** The methods the route of `path` takes: none for a path no route serves. */
  const allowedMethods = (path: string): string[] => table.filter(({ pattern }) => pattern.test(path)).map(({ method }) => method);
  /** The refusal of `method` on `path` when its route does not take it (its 405's message and `Allow`), or undefined: it does, or no route serves the path (its router's 404). */
  const methodNotAllowed = (method: string, path: string, shownPath = path): { message: string; allow: string } | undefined => {
    const allowed = allowedMethods(path);
    if (allowed.length === 0 || allowed.includes(method)) return undefined;
    return { message: `${method} is not allowed on ${shownPath}: it takes ${allowed.join(', ')}`, allow: allowed.join(', ') };
  };
  return { match, allowedMethods, methodNotAllowed };
}

/** The method checks of a table of routes with nothing to serve them here (a router that chooses by resource: approval-http.ts). */
export function routeMethods(routes: readonly string[]) {
  const { allowedMethods, methodNotAllowed } = routeTable(routes.map((route) => ({ route })));
  return { allowedMethods, methodNotAllowed };
}

/** The API's own (API_METHODS): `allowedMethods('/runs/r1')`, `methodNotAllowed('DELETE', '/runs/r1')`. */
export const { allowedMethods, methodNotAllowed } = routeMethods(API_METHODS);
