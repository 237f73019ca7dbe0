import { describe, expect, it } from 'vitest';
import { routeTable } from '../../lambdas/adapters/api-methods.js';

/**
 * A table of routes that both dispatches and refuses (api-methods.ts routeTable: the console's API
 * routes through one): the route a request reaches is the one its 405 names, and the reverse.
 */
describe('a route table', () => {
  const routes = routeTable([
    { route: 'GET /runs', name: 'list' },
    { route: 'GET /runs/{runId}', name: 'get' },
    { route: 'POST /runs/{runId}/kill', name: 'kill' },
    { route: 'GET /runs/{runId}/events', name: 'events' },
    { route: 'POST /approvals/{approvalId}/decide', name: 'decide' },
  ]);

  it('serves a request by the route of its method and path, with its path parameters as sent', () => {
    expect(routes.match('GET', '/runs')).toEqual({ route: { route: 'GET /runs', name: 'list' }, params: {} });
    expect(routes.match('GET', '/runs/r%2F1')).toMatchObject({ route: { name: 'get' }, params: { runId: 'r%2F1' } });
    expect(routes.match('GET', '/runs/r1/events')).toMatchObject({ route: { name: 'events' }, params: { runId: 'r1' } });
    expect(routes.match('POST', '/approvals/a1/decide')).toMatchObject({ route: { name: 'decide' }, params: { approvalId: 'a1' } });
  });

  it("refuses another method on a route 405 naming the route's methods, and leaves a path no route serves to the router's 404", () => {
    expect(routes.match('POST', '/runs/r1')).toBeUndefined();
    expect(routes.methodNotAllowed('POST', '/runs/r1', '/api/runs/r1')).toEqual({ message: 'POST is not allowed on /api/runs/r1: it takes GET', allow: 'GET' });
    expect(routes.match('GET', '/runs/r1/kill')).toBeUndefined();
    expect(routes.methodNotAllowed('GET', '/runs/r1/kill')).toEqual({ message: 'GET is not allowed on /runs/r1/kill: it takes POST', allow: 'POST' });
    // A parameter is one whole segment: no route serves an empty one, or two.
    for (const path of ['/runs/', '/runs/r1/x/events', '/runs/r1/kill/', '/nothing']) {
      expect(routes.match('GET', path)).toBeUndefined();
      expect(routes.methodNotAllowed('GET', path)).toBeUndefined();
    }
  });

  it('fails when two routes serve the same method and path (the second could never answer), naming both', () => {
    expect(() => routeTable([{ route: 'GET /runs/{runId}' }, { route: 'POST /runs/{runId}' }, { route: 'GET /runs/{id}' }])).toThrow('routes: GET /runs/{id} is served by GET /runs/{runId} already');
  });
});
