import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inProcessFetch, type ServiceRequest } from '../../sim/in-process.js';

const ORIGIN = 'http://127.0.0.1:4010';

/** A fetch on ORIGIN whose service tells what it was asked (the fallback answers anything else). */
function served() {
  const asked: ServiceRequest[] = [];
  const fetch = inProcessFetch(
    ORIGIN,
    async (request) => {
      asked.push(request);
      return { status: 201, headers: { 'content-type': 'application/json', 'x-served': 'yes' }, body: '{"ok":true}' };
    },
    async () => new Response('elsewhere', { status: 299 }),
  );
  return { fetch, asked };
}

describe('inProcessFetch', () => {
  it('hands the service the path and query `new URL` reads from any text, read without it or not', async () => {
    const { fetch, asked } = served();
    // Characters the parser keeps, escapes, or resolves (dot segments, a fragment, a quote in a query).
    const text = fc.string({ unit: fc.constantFrom(...'ab09-._~!$&\'()*+,;=:@/?%#. "<>{}^`|\\é'.split('')), maxLength: 24 });
    await fc.assert(
      fc.asyncProperty(text, async (rest) => {
        const url = `${ORIGIN}/${rest}`;
        const response = await fetch(url);
        const parsed = new URL(url);
        expect(response.status).toBe(201);
        expect(asked.pop()?.url).toBe(`${parsed.pathname}${parsed.search}`);
      }),
      { numRuns: 300 },
    );
    for (const url of [`${ORIGIN}/a/./b/../c?x=1`, `${ORIGIN}?q`, `${ORIGIN}/a?b#c`, `${ORIGIN}/a?x'y`, `${ORIGIN}/v1/orders/o_1?expand=items`]) {
      await fetch(url);
      expect(asked.pop()?.url).toBe(`${new URL(url).pathname}${new URL(url).search}`);
    }
  });

  it('sends another origin to the fallback (a port that only starts like the served one too)', async () => {
    const { fetch, asked } = served();
    expect((await fetch('http://127.0.0.1:40100/x')).status).toBe(299);
    expect((await fetch('http://localhost:4010/x')).status).toBe(299);
    expect(asked).toEqual([]);
  });

  it('answers a Response: status, the service headers when read, the text once, and a clone with both', async () => {
    const { fetch } = served();
    const response = await fetch(`${ORIGIN}/x`);
    expect(response).toBeInstanceOf(Response);
    expect([response.status, response.ok, response.statusText]).toEqual([201, true, '']);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(Object.fromEntries(response.headers)).toEqual({ 'content-type': 'application/json', 'x-served': 'yes' });
    const copy = response.clone();
    expect(await response.json()).toEqual({ ok: true });
    await expect(response.text()).rejects.toThrow(TypeError);
    expect(copy.headers.get('x-served')).toBe('yes');
    expect(await copy.text()).toBe('{"ok":true}');
    // Its body taken as a stream, a clone gets a branch of it, with the status and headers.
    const streamed = await fetch(`${ORIGIN}/y`);
    expect(streamed.body).not.toBeNull();
    const branch = streamed.clone();
    expect([branch.status, branch.headers.get('x-served')]).toEqual([201, 'yes']);
    expect(await branch.text()).toBe('{"ok":true}');
    expect(await streamed.text()).toBe('{"ok":true}');
  });
});
