import fc from 'fast-check';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';
import { waitFor } from '../support/agent-harness.js';
import { apiGatewayEvent } from '../../local/services/approval-api.js';
import { lambdaContext } from '../../local/services/lambda-context.js';

/**
 * The approval route is reachable by anyone who can reach the API: whatever a request holds, it
 * gets a 4xx naming the problem (never a 5xx, never a crash), and a refused request decides nothing.
 */

interface Answer {
  status: number;
  body: string;
}

/** One raw HTTP request (node:http, not fetch: the path goes out exactly as given, bad escapes too). */
function send(base: string, options: { method: string; path: string; contentType?: string; body?: string; headers?: Record<string, string> }): Promise<Answer> {
  const { hostname, port, pathname } = new URL(base);
  const path = `${pathname.replace(/\/$/, '')}${options.path}`;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.contentType !== undefined) headers['content-type'] = options.contentType;
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const outgoing = httpRequest({ hostname, port, method: options.method, path, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}

let harness: Harness;
let approval: ApprovalRecord;
let origin: string;
const approvalNow = () => harness.stack.ledger.getApproval(approval.runId, approval.turn, approval.call);

beforeAll(async () => {
  harness = await startHarness();
  // A real run waiting on a real approval: the refund it guards is what a bad request must not decide.
  void harness.run({ runId: 'approval-api', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
  approval = await waitFor(() => harness.approvals[0]);
  // The API's address with its credential, without the API's own path (the tests name it).
  origin = harness.stack.endpoints.approvals.replace(/\/v1\/approvals$/, '');
});
afterAll(async () => harness.stack.close());

const decision = JSON.stringify({ decision: 'approve', reason: 'looks fine' });

describe('the approval API refuses what it cannot take with a 4xx naming the problem', () => {
  it.each([
    ['a body over its limit', { method: 'POST', contentType: 'application/json', body: JSON.stringify({ decision: 'approve', reason: 'x'.repeat(70_000) }) }, 413, /body: larger than the 65536 bytes/],
    ['a 2 MB body (answered, not reset)', { method: 'POST', contentType: 'application/json', body: JSON.stringify({ decision: 'approve', reason: 'x'.repeat(2 * 1024 * 1024) }) }, 413, /body: larger than the 65536 bytes/],
    ['a 20 MB body (answered, not reset)', { method: 'POST', contentType: 'application/json', body: JSON.stringify({ decision: 'approve', reason: 'x'.repeat(20 * 1024 * 1024) }) }, 413, /body: larger than the 65536 bytes/],
    ['a malformed percent-encoding in the path', { method: 'POST', path: '/v1/approvals/apv_%E0%A4%A', contentType: 'application/json', body: decision }, 400, /approvalId: malformed percent-encoding/],
    ['a lone percent sign in the path', { method: 'GET', path: '/v1/approvals/%' }, 400, /approvalId: malformed percent-encoding/],
    ['a text/plain body', { method: 'POST', contentType: 'text/plain', body: decision }, 415, /content-type: expected application\/json, got "text\/plain"/],
    ['a form body', { method: 'POST', contentType: 'application/x-www-form-urlencoded', body: 'decision=approve' }, 415, /content-type: expected application\/json/],
    ['no content type', { method: 'POST', body: decision }, 415, /content-type: expected application\/json, got none/],
    ['a method the route does not take', { method: 'DELETE', contentType: 'application/json', body: decision }, 405, /^DELETE is not allowed on \/v1\/approvals\/apv_[\w-]+: it takes GET, POST$/],
    ['a decision posted to the list (no approval id), named as a method the list does not take', { method: 'POST', path: '/v1/approvals', contentType: 'application/json', body: decision }, 405, /^POST is not allowed on \/v1\/approvals: it takes GET$/],
  ])('%s', async (_case, request, status, message) => {
    const answer = await send(origin, { path: `/v1/approvals/${approval.approvalId}`, ...request });
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body)).toEqual({ message: expect.stringMatching(message) });
    expect(await approvalNow()).toMatchObject({ status: 'pending' });
  });

  it('answers 405 with Allow from the ApprovalCallback function too, which API Gateway would never call with such a method', async () => {
    const called = (method: string, approvalId?: string) =>
      harness.stack.approvalApi(apiGatewayEvent({ method, route: 'approvals', ...(approvalId && { approvalId }), body: null, principal: 'local:tester' }), lambdaContext('ApprovalCallback', 20_000));
    const one = await called('DELETE', approval.approvalId);
    expect(one).toMatchObject({ statusCode: 405, headers: { allow: 'GET, POST' } });
    expect(JSON.parse(one.body)).toEqual({ message: `DELETE is not allowed on /approvals/${approval.approvalId}: it takes GET, POST` });
    expect(await called('PUT')).toMatchObject({ statusCode: 405, headers: { allow: 'GET' } });
    expect(await approvalNow()).toMatchObject({ status: 'pending' });
  });

  it('takes application/json with parameters (charset) like any JSON', async () => {
    const answer = await send(origin, { method: 'POST', path: `/v1/approvals/${approval.approvalId}`, contentType: 'application/json; charset=utf-8', body: '{"decision":"maybe"}' });
    expect(answer).toMatchObject({ status: 400, body: expect.stringMatching(/decision: Invalid option/) });
  });
});

// Characters a request target may carry on the wire, percent signs and slashes included.
const pathChar = fc.constantFrom(...'abcAZ09_-.~%/?&=+!$()*,;:@'.split(''), '%2', '%E0', '%ZZ', '%25', '%2F', 'apv_');
const headerChar = fc.constantFrom(...'abcjsontexplainxml/;=+-. "'.split(''));
const jsonish = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.record({ decision: fc.oneof(fc.constantFrom('approve', 'reject'), fc.string()), reason: fc.option(fc.string({ maxLength: 600 })), extra: fc.option(fc.anything()) }, { requiredKeys: ['decision'] }).map((value) => JSON.stringify(value)),
);
const requests = fc.record({
  method: fc.oneof(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'), fc.stringMatching(/^[A-Z]{1,8}$/)),
  path: fc.oneof(
    fc.constant('/v1/approvals'),
    fc.string({ unit: pathChar, maxLength: 30 }).map((tail) => `/v1/approvals/${tail}`),
    fc.string({ unit: pathChar, maxLength: 30 }).map((tail) => `/${tail}`),
  ),
  /** Most requests aim at the approval that waits, so its decision is what the bad ones must not make. */
  target: fc.boolean(),
  contentType: fc.option(fc.oneof(fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/problem+json'), fc.string({ unit: headerChar, maxLength: 40 })), { nil: undefined }),
  body: fc.option(fc.oneof(jsonish, fc.string({ maxLength: 200 }), fc.integer({ min: 65_000, max: 70_000 }).map((size) => '"'.padEnd(size, 'y'))), { nil: undefined }),
});

describe('the approval API serves only whoever holds its credential', () => {
  const bare = () => new URL(harness.stack.endpoints.approvals).origin;

  it.each([
    ['no credential', () => bare(), {}],
    ['a wrong credential', () => `${bare()}/${'A'.repeat(43)}`, {}],
    ['no credential, with the engine’s own Host and Origin', () => bare(), 'same-host'],
    ['no credential, through the page’s path', () => bare(), {}, '/v1/decide/../approvals/'],
  ])('refuses a decision with %s (403), and decides nothing', async (_case, base, own, prefix = '/v1/approvals/') => {
    const headers: Record<string, string> = own === 'same-host' ? { host: new URL(bare()).host, origin: bare() } : {};
    const answer = await send(base(), { method: 'POST', path: `${prefix}${approval.approvalId}`, contentType: 'application/json', body: decision, headers });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toEqual({ message: expect.stringMatching(/^credential: missing or wrong/) });
    expect(await approvalNow()).toMatchObject({ status: 'pending' });
  });

  it('refuses to list the pending approvals without it', async () => {
    expect((await send(bare(), { method: 'GET', path: '/v1/approvals' })).status).toBe(403);
    expect((await send(origin, { method: 'GET', path: '/v1/approvals' })).status).toBe(200);
  });

  it('serves the approval page without it (a signed link is the page’s credential)', async () => {
    const answer = await send(bare(), { method: 'GET', path: `/v1/decide/${approval.approvalId}?link=not-a-link` });
    expect(answer.status).not.toBe(403);
    expect(answer.status).toBeLessThan(500);
  });
});

describe('fuzzing the approval route', () => {
  it('never answers 5xx or crashes, and a refused request changes no approval', async () => {
    let decided = false;
    await fc.assert(
      fc.asyncProperty(requests, async (request) => {
        const path = request.target ? `/v1/approvals/${approval.approvalId}` : request.path;
        const before = await approvalNow();
        const answer = await send(origin, { ...request, path });
        expect(answer.status, answer.body).toBeLessThan(500);
        if (answer.status >= 400) {
          if (request.method !== 'HEAD') expect(JSON.parse(answer.body)).toEqual(expect.objectContaining({ message: expect.any(String) }));
          expect(await approvalNow()).toEqual(before);
        } else if (request.method === 'POST') {
          decided = true; // a well-formed decision got through: the fuzzer found a valid request
        }
      }),
      { numRuns: 200 },
    );
    // Still serving, and (unless the fuzzer sent a valid decision) the approval still waits.
    expect((await send(origin, { method: 'GET', path: '/v1/approvals' })).status).toBe(200);
    if (!decided) expect(await approvalNow()).toMatchObject({ status: 'pending' });
  });
});
