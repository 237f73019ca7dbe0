import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SavepointClient } from '../../client/ledger-client.js';
import { stackClient } from '../support/agent-harness.js';
import { localUser } from '../../local/services/approval-api.js';
import { startLocalConsole } from '../../console/local.js';
import type { ConsoleServer } from '../../console/server.js';
import type { Timeline } from '../../console/views.js';
import { duplicatePayments, sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

/** The console's JSON API against the real local stack (synthesized definition, engine, ledger) running the refund agent. */
let harness: Harness;
let client: SavepointClient;
let console_: ConsoleServer;
const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));
const RUN = 'refunds-2026-11-28';

/** A raw request: fetch would set Origin and Host on its own terms; these tests set them exactly. */
function call(method: string, path: string, options: { headers?: Record<string, string>; body?: unknown } = {}): Promise<{ status: number; body: any; allow?: string }> {
  const url = new URL(path, console_.origin);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...(body && { 'content-type': 'application/json' }), ...options.headers } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text.startsWith('{') ? JSON.parse(text) : text, ...(res.headers.allow !== undefined && { allow: res.headers.allow }) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
const authed = (extra: Record<string, string> = {}) => ({ 'x-savepoint-token': console_.token, ...extra });
const get = (path: string) => call('GET', path, { headers: authed() });
const post = (path: string, body: unknown) => call('POST', path, { headers: authed({ origin: console_.origin }), body });

beforeAll(async () => {
  // Transient failures in the model and the provider: the timeline shows the retries and their error names.
  harness = await startHarness({ failRate: 0.08, seed: 7 });
  console_ = await startLocalConsole(harness.stack);
  client = stackClient(harness.stack);
  // One finished run: every approval approved through the console's API.
  await client.start({ input: sampleInput, config: { approvalTimeoutSeconds: 3600 } });
  for (;;) {
    const view = await client.wait(RUN, { untilInput: true });
    if (view.lifecycle !== 'input_required') break;
    const approvalId = view.approvals[0]!.approvalId;
    expect(await post(`/api/approvals/${approvalId}/decide`, { decision: 'approve', reason: 'api test' })).toMatchObject({ status: 200, body: { ok: true, status: 'approved', delivered: true } });
    while ((await client.status(RUN))!.approvals.some((pending) => pending.approvalId === approvalId)) await nextTick();
  }
  expect((await client.wait(RUN)).lifecycle).toBe('completed');
}, 240_000);
afterAll(async () => {
  await console_?.close();
  await harness?.stack.close();
});

describe('reading', () => {
  it('lists runs with steps, dollars, duration and status, filtered by agent, status and day', async () => {
    const { status, body } = await get('/api/runs');
    expect(status).toBe(200);
    const report = (await client.status(RUN))!.report;
    expect(body.damaged).toEqual([]);
    expect(body.runs).toEqual([
      expect.objectContaining({ runId: RUN, agent: 'refund-reconciler', status: 'succeeded', lifecycle: 'completed', steps: report.steps, dollars: report.dollars, pendingApprovals: 0, executions: 1 }),
    ]);
    expect(body.runs[0].durationSeconds).toBeGreaterThan(0);
    const today = body.runs[0].day;
    expect((await get(`/api/runs?status=succeeded&agent=refund-reconciler&day=${today}`)).body.runs).toHaveLength(1);
    expect((await get('/api/runs?status=running')).body.runs).toHaveLength(0);
    expect((await get('/api/runs?day=1999-01-01')).body.runs).toHaveLength(0);
    expect((await get('/api/runs?agent=someone-else')).body.runs).toHaveLength(0);
  });

  it('shows a run as a timeline of its steps: model text, tool arguments and results, idempotency keys, cumulative cost against the budgets', async () => {
    const report = (await client.status(RUN))!.report;
    const { status, body } = await get(`/api/runs/${RUN}/timeline?pageSize=1000`);
    expect(status).toBe(200);
    const line = body as Timeline;
    const steps = line.items.filter((item) => item.kind === 'turn' || item.kind === 'call');
    expect(line.totalSteps).toBe(report.steps);
    expect(steps.map((item) => (item as { step: number }).step)).toEqual(Array.from({ length: report.steps }, (_, i) => i + 1));
    const first = line.items.find((item) => item.kind === 'turn');
    expect(first).toMatchObject({ kind: 'turn', turn: 1, text: [expect.stringContaining('Listing the refund requests')], toolUses: [{ name: 'list_refund_requests', input: { date: '2026-11-28' } }] });
    const writes = line.items.filter((item) => item.kind === 'call' && item.effect === 'write') as Extract<Timeline['items'][number], { kind: 'call' }>[];
    expect(writes.length).toBeGreaterThan(0);
    for (const write of writes) {
      // The default key is the run, turn and call; a tool with a business key (the refund request id
      // of issue_refund and flag_for_review) sends `<agent>:<tool>:<key>` instead, the same in every run.
      const byBusinessKey = new RegExp(`^refund-reconciler:${write.name}:rr_\\d+$`);
      expect(write.idempotencyKey).toMatch(['issue_refund', 'flag_for_review'].includes(write.name) ? byBusinessKey : new RegExp(`^${RUN}:${write.turn}:`));
      expect(write.result).toBeDefined();
    }
    // Decided from the console as the person running it: the approval API records this machine's user.
    const decided = writes.filter((write) => write.approval).map((write) => write.approval!);
    expect(decided.length).toBeGreaterThan(0);
    for (const approval of decided) {
      expect(approval).toMatchObject({ status: 'approved', decidedBy: expect.stringMatching(/^local:/) });
    }
    const last = steps.at(-1) as { cumulative: { steps: number; dollars: number; tokens: number } };
    expect(last.cumulative).toMatchObject({ steps: report.steps, tokens: report.tokens.total });
    expect(last.cumulative.dollars).toBeCloseTo(report.dollars, 6);
    expect(line.budgets).toEqual({ steps: 400, tokens: 600000, dollars: 5 });
    // The retries the injected failures caused, with their error names, and the execution that drove the run.
    const retries = line.items.filter((item) => item.kind === 'retry');
    expect(retries.length).toBeGreaterThan(0);
    for (const retry of retries) expect(retry).toMatchObject({ state: expect.any(String), error: expect.stringMatching(/^Agent\./) });
    expect(line.items.filter((item) => item.kind === 'execution')).toEqual([expect.objectContaining({ index: 0, status: 'SUCCEEDED' })]);
  });

  it('pages a long timeline: every step on exactly one page', async () => {
    const { body: whole } = await get(`/api/runs/${RUN}/timeline?pageSize=1000`);
    const pageSize = 7;
    const pages = Math.ceil(whole.totalSteps / pageSize);
    const seen: number[] = [];
    let events = 0;
    for (let page = 1; page <= pages; page++) {
      const { body } = await get(`/api/runs/${RUN}/timeline?page=${page}&pageSize=${pageSize}`);
      expect(body).toMatchObject({ page, pages, pageSize });
      const steps = body.items.filter((item: { kind: string }) => item.kind === 'turn' || item.kind === 'call');
      expect(steps.length).toBe(Math.min(pageSize, whole.totalSteps - (page - 1) * pageSize));
      seen.push(...steps.map((item: { step: number }) => item.step));
      events += body.items.length - steps.length;
    }
    expect(seen).toEqual(Array.from({ length: whole.totalSteps }, (_, i) => i + 1));
    expect(events).toBe(whole.items.length - whole.totalSteps);
  });

  it('draws the state machine with per-state counts from the execution history', async () => {
    const report = (await client.status(RUN))!.report;
    const { status, body } = await get(`/api/runs/${RUN}/state-machine`);
    expect(status).toBe(200);
    expect(body.nodes.map((node: { name: string }) => node.name)).toEqual(expect.arrayContaining(['StartRun', 'CallModel', 'CallTool', 'RequestApproval', 'Finalize']));
    expect(body.edges).toEqual(expect.arrayContaining([{ from: 'StartRun', to: 'StartOrResume', kind: 'next' }]));
    expect(body.counts.StartRun).toMatchObject({ entered: 1 });
    // CallModel decides before each call, once a turn (the run's end with the final answer).
    expect(body.counts.CallModel.entered).toBe(report.modelTurns);
    const retried = Object.values(body.counts as Record<string, { retried: number; failed: number }>);
    expect(retried.reduce((sum, state) => sum + state.retried, 0)).toBeGreaterThan(0);
    expect(body.current).toBeNull();
  });

  it('refuses bad input with a 4xx naming the field', async () => {
    expect(await get('/api/runs?day=yesterday')).toMatchObject({ status: 400, body: { message: expect.stringContaining('day') } });
    expect(await get('/api/runs?status=sleeping')).toMatchObject({ status: 400, body: { message: expect.stringContaining('status') } });
    expect(await get('/api/runs?colour=blue')).toMatchObject({ status: 400, body: { message: expect.stringContaining('colour') } });
    expect(await get(`/api/runs/${RUN}/timeline?page=0`)).toMatchObject({ status: 400, body: { message: expect.stringContaining('page') } });
    // A page past the last is not answered with page 1 (nor the last).
    expect(await get(`/api/runs/${RUN}/timeline?page=99999`)).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^page: 99999 is past the last page/) } });
    expect(await post(`/api/runs/${RUN}/kill`, { reason: 'x'.repeat(501) })).toMatchObject({ status: 400, body: { message: expect.stringContaining('reason') } });
    expect(await get('/api/runs/no-such-run')).toMatchObject({ status: 404, body: { message: expect.stringContaining('runId') } });
    expect(await post('/api/approvals/apv_x/decide', { decision: 'maybe' })).toMatchObject({ status: 400, body: { message: expect.stringContaining('decision') } });
    expect(await post('/api/kill-all', { on: 'yes' })).toMatchObject({ status: 400, body: { message: expect.stringContaining('on') } });
    expect(await post('/api/approvals/apv_nothing_of_the_kind/decide', { decision: 'approve' })).toMatchObject({ status: 404, body: { message: expect.stringContaining('approvalId') } });
    expect(await post('/api/approvals/not-an-id/decide', { decision: 'approve' })).toMatchObject({ status: 400, body: { message: expect.stringContaining('approvalId') } });
    expect(await post(`/api/runs/${RUN}/kill`, {})).toMatchObject({ status: 409, body: { message: expect.stringContaining('succeeded, not running') } });
    expect(await post(`/api/runs/${RUN}/resume`, {})).toMatchObject({ status: 409, body: { message: expect.stringContaining('only a failed run') } });
  });
});

describe('security', () => {
  it('refuses every API request without the session token', async () => {
    expect(await call('GET', '/api/runs')).toMatchObject({ status: 403 });
    expect(await call('GET', '/api/runs', { headers: { 'x-savepoint-token': 'wrong' } })).toMatchObject({ status: 403 });
    expect(await call('POST', '/api/kill-all', { headers: { origin: console_.origin }, body: { on: true } })).toMatchObject({ status: 403, body: { message: expect.stringContaining('token') } });
    expect((await get('/api/info')).body.globalKill).toBeNull();
  });

  it('refuses a POST from another origin, even with the token', async () => {
    expect(await call('POST', '/api/kill-all', { headers: authed({ origin: 'https://evil.example' }), body: { on: true } })).toMatchObject({ status: 403, body: { message: expect.stringContaining('Origin') } });
    expect(await call('POST', '/api/kill-all', { headers: authed({ origin: 'http://localhost:1' }), body: { on: true } })).toMatchObject({ status: 403 });
    expect((await get('/api/info')).body.globalKill).toBeNull();
  });

  it('authorizes nothing a browser attaches on its own: a cookie holding the token (the old session cookie), basic auth', async () => {
    // What the console used to set, and a browser sends to every port of 127.0.0.1: another local
    // user's server collects it. With it, and everything else a browser of the console's own page sends, nothing is allowed.
    const port = new URL(console_.origin).port;
    const cookie = `savepoint_console_${port}=${console_.token}; savepoint_console=${console_.token}; token=${console_.token}`;
    const own = { cookie, origin: console_.origin, 'sec-fetch-site': 'same-origin' };
    const basic = { authorization: `Basic ${Buffer.from(`savepoint:${console_.token}`).toString('base64')}`, origin: console_.origin };
    const approvalId = harness.approvals[0]!.approvalId;
    for (const headers of [own, basic]) {
      expect(await call('GET', '/api/runs', { headers })).toMatchObject({ status: 403, body: { message: expect.stringContaining('x-savepoint-token') } });
      expect(await call('GET', '/api/events', { headers })).toMatchObject({ status: 403 });
      expect(await call('GET', '/api/stream-ticket', { headers })).toMatchObject({ status: 403 });
      expect(await call('POST', '/api/kill-all', { headers, body: { on: true } })).toMatchObject({ status: 403 });
      expect(await call('POST', `/api/approvals/${approvalId}/decide`, { headers, body: { decision: 'reject' } })).toMatchObject({ status: 403 });
    }
    expect((await get('/api/info')).body.globalKill).toBeNull();
  });

  it('answers a malformed percent-encoding in the path with 400 naming it, not a 500', async () => {
    for (const path of ['/api/runs/%E0%A4%A', '/api/runs/%']) {
      expect(await get(path)).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^path: malformed percent-encoding/) } });
    }
  });

  it("answers another method on a route 405 with the route's methods in Allow, a path no route serves 404, and changes nothing", async () => {
    const refused = (method: string, path: string, allow: string) => ({ status: 405, allow, body: { message: `${method} is not allowed on ${path}: it takes ${allow}` } });
    expect(await call('DELETE', `/api/runs/${RUN}`, { headers: authed() })).toMatchObject(refused('DELETE', `/api/runs/${RUN}`, 'GET'));
    expect(await call('GET', '/api/kill-all', { headers: authed() })).toMatchObject(refused('GET', '/api/kill-all', 'POST'));
    expect(await call('PUT', '/api/kill-all', { headers: authed({ origin: console_.origin }), body: { on: true } })).toMatchObject(refused('PUT', '/api/kill-all', 'POST'));
    expect(await call('POST', '/api/events', { headers: authed({ origin: console_.origin }), body: {} })).toMatchObject(refused('POST', '/api/events', 'GET'));
    expect(await call('GET', `/api/runs/${RUN}/kill`, { headers: authed() })).toMatchObject(refused('GET', `/api/runs/${RUN}/kill`, 'POST'));
    expect(await call('PATCH', '/api/nothing-here', { headers: authed() })).toMatchObject({ status: 404, body: { message: 'no route PATCH /api/nothing-here' } });
    // The pages: read (GET, and HEAD without a body), never posted to.
    expect(await call('POST', '/', { headers: authed({ origin: console_.origin }), body: {} })).toMatchObject(refused('POST', '/', 'GET, HEAD'));
    expect(await call('HEAD', '/')).toMatchObject({ status: 200, body: '' });
    expect(await call('HEAD', '/no-such-page')).toMatchObject({ status: 404 });
    expect((await get('/api/info')).body.globalKill).toBeNull();
    expect((await get(`/api/runs/${RUN}`)).body.report.status).toBe('succeeded');
  });

  it('answers a target that is no URL as a page it has not (404 naming it), not an empty 500', async () => {
    const answered = await fetch(`${console_.origin}//[`, { headers: authed() });
    expect(answered.status).toBe(404);
    expect(await answered.json()).toEqual({ message: 'no page //[' });
  });

  it.each([2, 20])('answers a %s MB body with 413, not a reset connection', async (megabytes) => {
    expect(await post('/api/kill-all', 'x'.repeat(megabytes * 1024 * 1024))).toMatchObject({ status: 413, body: { message: expect.stringMatching(/^body: larger than/) } });
    expect((await get('/api/info')).body.globalKill).toBeNull();
  });

  it('refuses a request whose Host is not the console (DNS rebinding)', async () => {
    expect(await call('GET', '/api/runs', { headers: authed({ host: 'evil.example' }) })).toMatchObject({ status: 403, body: { message: expect.stringContaining('Host') } });
  });

  it('opens the event stream with a ticket taken with the token, once, before it expires, on the console that issued it only', async () => {
    let now = Date.parse('2026-11-28T09:00:00Z');
    const clocked = await startLocalConsole(harness.stack, { clock: { now: () => new Date(now) } });
    try {
      const ticketOf = async (server: ConsoleServer) => ((await (await fetch(`${server.origin}/api/stream-ticket`, { headers: { 'x-savepoint-token': server.token } })).json()) as { ticket: string }).ticket;
      const open = async (server: ConsoleServer, ticket: string) => {
        const response = await fetch(`${server.origin}/api/events?ticket=${encodeURIComponent(ticket)}`);
        await response.body?.cancel();
        return response.status;
      };
      const ticket = await ticketOf(clocked);
      expect(await open(clocked, ticket)).toBe(200);
      expect(await open(clocked, ticket)).toBe(403); // used once
      expect(await open(console_, await ticketOf(clocked))).toBe(403); // another console's
      const late = await ticketOf(clocked);
      now += 30_000;
      expect(await open(clocked, late)).toBe(403); // expired
      const onTime = await ticketOf(clocked);
      now += 29_999;
      expect(await open(clocked, onTime)).toBe(200);
      // A ticket opens the stream and nothing else.
      expect(await call('GET', `/api/runs?ticket=${await ticketOf(console_)}`)).toMatchObject({ status: 403 });
    } finally {
      await clocked.close();
    }
  });

  it("serves a run's event stream (the runs API's) with a ticket: every event of the run, resumable after one, ending after the last; no ticket 403, no run 404, an unknown query key 400", async () => {
    const ticket = async () => ((await get('/api/stream-ticket')).body as { ticket: string }).ticket;
    const read = async (path: string) => {
      const response = await fetch(`${console_.origin}${path}`);
      return { status: response.status, text: await response.text() };
    };
    const whole = await read(`/api/runs/${RUN}/events?ticket=${await ticket()}`);
    expect(whole.status).toBe(200);
    const ids = [...whole.text.matchAll(/^id: (.+)$/gm)].map((match) => match[1]!);
    expect(ids[0]).toBe('a.run');
    expect(ids.at(-1)).toBe('z.run');
    expect(whole.text).toMatch(/event: approval\.decided\ndata: \{[^\n]*"decidedVia":"cli"/);
    const resumed = await read(`/api/runs/${RUN}/events?ticket=${await ticket()}&after=${ids[4]}`);
    expect([...resumed.text.matchAll(/^id: (.+)$/gm)].map((match) => match[1])).toEqual(ids.slice(5));
    expect(await read(`/api/runs/${RUN}/events`)).toMatchObject({ status: 403 });
    expect((await read(`/api/runs/nope/events?ticket=${await ticket()}`)).status).toBe(404);
    expect((await read(`/api/runs/${RUN}/events?ticket=${await ticket()}&after=t000999.1.model`)).status).toBe(400);
    // Its ticket is the console's; any other key but `after` is refused, named, as the runs API's route refuses it.
    expect(await read(`/api/runs/${RUN}/events?ticket=${await ticket()}&foo=1`)).toEqual({ status: 400, text: '{"message":"invalid query: Unrecognized key: \\"foo\\""}' });
  });

  it('prints the token in the fragment, which no browser sends, sets no cookie, and serves the page framed by nobody', async () => {
    expect(console_.url).toBe(`${console_.origin}/#token=${console_.token}`);
    for (const path of ['/', `/?token=${console_.token}`]) {
      const raw = await new Promise<{ status?: number; headers: Record<string, unknown> }>((resolve) => request(new URL(path, console_.origin), (res) => (res.resume(), resolve({ status: res.statusCode, headers: res.headers }))).end());
      expect(raw.status).toBe(200);
      expect(raw.headers['set-cookie']).toBeUndefined();
      expect(raw.headers['x-frame-options']).toBe('DENY');
    }
  });

  it("takes in the page's reason box no more than a decision or a kill records: a longer reason was refused after it was typed, and lost", async () => {
    const page = (await call('GET', '/')).body as string;
    expect(/<input id="confirm-reason"[^>]*maxlength="(\d+)"/.exec(page)?.[1]).toBe('500');
    expect(await post('/api/approvals/apv_nothing_of_the_kind/decide', { decision: 'reject', reason: 'x'.repeat(501) })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^invalid body: reason/) } });
  });

  it('is read-only when bound to anything but loopback', async () => {
    const readOnly = await startLocalConsole(harness.stack, { host: '127.0.0.2' });
    try {
      expect(readOnly.readOnly).toBe(true);
      const response = await fetch(`${readOnly.origin}/api/kill-all`, { method: 'POST', headers: { 'x-savepoint-token': readOnly.token, 'content-type': 'application/json' }, body: '{"on":true}' });
      expect(response.status).toBe(403);
      expect(((await response.json()) as { message: string }).message).toMatch(/read-only/);
      const info = await fetch(`${readOnly.origin}/api/info`, { headers: { 'x-savepoint-token': readOnly.token } });
      expect(await info.json()).toMatchObject({ readOnly: true, globalKill: null });
    } finally {
      await readOnly.close();
    }
  });
});

describe('steering', () => {
  it('says that an approval of two is recorded and waits for a second approver, not that it is still pending', async () => {
    const twoPeople = await startHarness({ approvals: { policy: { separationOfDuties: false, secondApproverAboveMinor: 70_000 } } });
    const twoConsole = await startLocalConsole(twoPeople.stack);
    try {
      const twoClient = stackClient(twoPeople.stack);
      await twoClient.start({ input: sampleInput, config: { approvalTimeoutSeconds: 3600 } });
      const [approval] = (await twoClient.wait(RUN, { untilInput: true })).approvals;
      const response = await fetch(`${twoConsole.origin}/api/approvals/${approval!.approvalId}/decide`, {
        method: 'POST',
        headers: { 'x-savepoint-token': twoConsole.token, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve' }),
      });
      expect({ status: response.status, body: await response.json() }).toEqual({ status: 200, body: { ok: true, status: 'pending', delivered: false, waitingForSecond: true } });
    } finally {
      await twoConsole.close();
      await twoPeople.stack.close();
    }
  });


  it('records a rejection without a reason as "rejected in the console by" its user, and the model is told so', async () => {
    const rejecting = await startHarness();
    const rejectingConsole = await startLocalConsole(rejecting.stack);
    try {
      const rejectingClient = stackClient(rejecting.stack);
      await rejectingClient.start({ input: sampleInput, config: { approvalTimeoutSeconds: 3600 } });
      const [approval] = (await rejectingClient.wait(RUN, { untilInput: true })).approvals;
      const response = await fetch(`${rejectingConsole.origin}/api/approvals/${approval!.approvalId}/decide`, {
        method: 'POST',
        headers: { 'x-savepoint-token': rejectingConsole.token, 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'reject' }),
      });
      expect({ status: response.status, body: await response.json() }).toMatchObject({ status: 200, body: { ok: true, status: 'rejected' } });
      const said = `rejected in the console by ${localUser()}`;
      expect(await rejecting.stack.ledger.getApproval(approval!.runId, approval!.turn, approval!.call)).toMatchObject({ status: 'rejected', reason: said });
      // The tool's result the model reads next (recorded before the run asks anything else, or ends).
      await rejectingClient.wait(RUN, { untilInput: true });
      const { calls } = await rejecting.stack.ledger.listConversation(RUN);
      const refused = calls.find((one) => one.turn === approval!.turn && one.call === approval!.call)!;
      expect(JSON.parse(refused.result!)).toEqual({ error: 'approval_rejected', approvalId: approval!.approvalId, reason: said });
    } finally {
      await rejectingConsole.close();
      await rejecting.stack.close();
    }
  });

  it('sets and lifts the global kill switch; every change is pushed to the event stream', async () => {
    const { ticket } = (await get('/api/stream-ticket')).body as { ticket: string };
    const stream = await fetch(`${console_.origin}/api/events?ticket=${ticket}`);
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    const versions: number[] = [];
    const nextVersion = async () => {
      let text = '';
      for (;;) {
        const { value } = await reader.read();
        text += new TextDecoder().decode(value);
        const match = text.match(/event: version\ndata: (\d+)\n\n/);
        if (match) return Number(match[1]);
      }
    };
    versions.push(await nextVersion());
    expect(await post('/api/kill-all', { on: true, reason: 'api test' })).toMatchObject({ status: 200, body: { ok: true, globalKill: true } });
    versions.push(await nextVersion());
    expect((await get('/api/info')).body.globalKill).toMatchObject({ reason: 'api test', by: expect.stringMatching(/^local:/) });
    expect(await post('/api/kill-all', { on: false })).toMatchObject({ status: 200 });
    expect((await get('/api/info')).body.globalKill).toBeNull();
    expect(versions[1]).toBeGreaterThan(versions[0]!);
    await reader.cancel();
    expect(duplicatePayments(harness.stack)).toEqual([]);
  });
});
