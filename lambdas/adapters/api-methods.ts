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
  'GET /runs',
  'POST /runs',
  'GET /runs/{runId}',
  'POST /runs/{runId}/cancel',
  'GET /runs/{runId}/events',
  'POST /batches',
  'GET /batches/{batchId}',
] as const;

/**
 * The method checks of a table of routes (`METHOD /path`, `{name}` a path parameter of one
 * segment, as API Gateway matches it; API Gateway's resource, `/runs/{runId}`, matches itself):
 * the methods a path takes, and the refusal of one it does not take.
 */
export function routeMethods(routes: readonly string[]) {
  const table = routes.map((route) => {
    const [method, path] = route.split(' ') as [string, string];
    return { method, pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`) };
  });
  /** The methods the route of `path` takes: none for a path no route serves. */
  const allowedMethods = (path: string): string[] => table.filter(({ pattern }) => pattern.test(path)).map(({ method }) => method);
  /** The refusal of `method` on `path` when its route does not take it (its 405's message and `Allow`), or undefined: it does, or no route serves the path (its router's 404). */
  const methodNotAllowed = (method: string, path: string, shownPath = path): { message: string; allow: string } | undefined => {
    const allowed = allowedMethods(path);
    if (allowed.length === 0 || allowed.includes(method)) return undefined;
    return { message: `${method} is not allowed on ${shownPath}: it takes ${allowed.join(', ')}`, allow: allowed.join(', ') };
  };
  return { allowedMethods, methodNotAllowed };
}

/** The API's own (API_METHODS): `allowedMethods('/runs/r1')`, `methodNotAllowed('DELETE', '/runs/r1')`. */
export const { allowedMethods, methodNotAllowed } = routeMethods(API_METHODS);
