import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  ErrorNames,
  HttpInvalidInputError,
  HttpTerminalError,
  HttpTransientError,
  InvalidInputError,
  JsonHttpClient,
  listOf,
  MalformedResponseError,
  TerminalError,
  TransientError,
  type HttpMethod,
} from '../../lambdas/index.js';
import { jsonReply, serveHttp, type HttpServed, type ServiceRequest } from '../../sim/in-process.js';

/**
 * JsonHttpClient speaks every method a REST backend needs (issue 39, item 6) over a real loopback
 * socket, and its errors carry the answer typed: `status` and `body` on an `Http…Error` that is
 * still the `Agent.*` error the state machine retries (or not) by name.
 */

const seen: { method: string; url: string; body: string; key: string | undefined }[] = [];
let server: HttpServed;

beforeAll(async () => {
  server = await serveHttp(
    async (request: ServiceRequest) => {
      seen.push({ method: request.method, url: request.url, body: request.body, key: request.headers['idempotency-key'] });
      const status = Number(/^\/status\/(\d+)$/.exec(request.url)?.[1] ?? 200);
      if (request.url === '/gone') return { status: 204, headers: {}, body: '' };
      if (status !== 200) return jsonReply(status, { error: { type: 'nope', message: `status ${status}` } });
      return jsonReply(200, { method: request.method, body: request.body === '' ? null : JSON.parse(request.body) });
    },
    { tooLarge: () => jsonReply(413, {}), failed: () => jsonReply(500, {}) },
  );
});
afterAll(() => server.close());

const Echo = z.object({ method: z.string(), body: z.unknown() });

describe('JsonHttpClient', () => {
  it('sends GET, POST, PUT, PATCH and DELETE, each with its body and idempotency key, through a method of its own', async () => {
    const http = new JsonHttpClient({ baseUrl: server.url });
    const options = { body: { amount: 5 }, idempotencyKey: 'k-1' };
    expect(await http.get('/things/1', Echo)).toEqual({ method: 'GET', body: null });
    expect(await http.post('/things', Echo, options)).toEqual({ method: 'POST', body: { amount: 5 } });
    expect(await http.put('/things/1', Echo, options)).toEqual({ method: 'PUT', body: { amount: 5 } });
    expect(await http.patch('/things/1', Echo, options)).toEqual({ method: 'PATCH', body: { amount: 5 } });
    expect(await http.delete('/things/1', Echo, { idempotencyKey: 'k-2' })).toEqual({ method: 'DELETE', body: null });
    const methods: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    expect(seen.slice(-5).map((request) => [request.method, request.key])).toEqual(methods.map((method) => [method, method === 'GET' ? undefined : method === 'DELETE' ? 'k-2' : 'k-1']));
  });

  it('parses an empty 2xx answer (a 204) as undefined, which z.undefined() accepts and an object schema refuses as a broken contract', async () => {
    const http = new JsonHttpClient({ baseUrl: server.url });
    expect(await http.delete('/gone', z.undefined())).toBeUndefined();
    await expect(http.delete('/gone', Echo)).rejects.toBeInstanceOf(MalformedResponseError);
  });

  it('builds one list schema per item schema (zod compiles a schema on its first parse), which checks every item', () => {
    const Item = z.object({ id: z.string() });
    expect(listOf(Item)).toBe(listOf(Item));
    expect(listOf(z.object({ id: z.string() }))).not.toBe(listOf(Item));
    expect(listOf(Item).parse({ data: [{ id: 'a' }] })).toEqual({ data: [{ id: 'a' }] });
    expect(listOf(Item).safeParse({ data: [{ id: 1 }] }).success).toBe(false);
  });

  it.each([
    [503, HttpTransientError, TransientError, ErrorNames.Transient],
    [429, HttpTransientError, TransientError, ErrorNames.Transient],
    [404, HttpInvalidInputError, InvalidInputError, ErrorNames.InvalidInput],
    [400, HttpInvalidInputError, InvalidInputError, ErrorNames.InvalidInput],
    [409, HttpTerminalError, TerminalError, ErrorNames.Terminal],
    [401, HttpTerminalError, TerminalError, ErrorNames.Terminal],
  ] as const)('answers %i with a typed error that carries the status and body and keeps its Agent.* name', async (status, Typed, Base, name) => {
    const error = await new JsonHttpClient({ baseUrl: server.url }).delete(`/status/${status}`, Echo).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Typed);
    expect(error).toBeInstanceOf(Base);
    const typed = error as InstanceType<typeof Typed>;
    expect(typed.name).toBe(name);
    expect(typed.status).toBe(status);
    expect(JSON.parse(typed.body)).toEqual({ error: { type: 'nope', message: `status ${status}` } });
    expect(typed.message).toBe(`DELETE /status/${status} → ${status}: nope: status ${status}`);
  });
});
