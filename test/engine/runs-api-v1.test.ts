import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runsClient } from '../../client/connect.js';
import { apiGatewayEvent } from '../../local/services/approval-api.js';
import { createRunsRoutes, MAX_WAIT_SECONDS } from '../../lambdas/runs/runs-api.js';
import { SEEN_LIFECYCLE_HEADER } from '../../lambdas/runs/lifecycle.js';
import { PAYLOAD_LIMIT_BYTES } from '../../lambdas/shared/limits.js';
import { manualClock } from '../support/manual-clock.js';
import { waitFor } from '../support/agent-harness.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * The runs API (`/v1/runs`) over loopback HTTP, as `savepoint serve` serves it and API Gateway
 * passes it to the RunsApi function: start (idempotent on the run id), read with a long-poll, list
 * newest first by an opaque cursor, cancel with who asked — and every bad input answered with its
 * status while nothing is started or changed.
 */
let h: Harness;
let runs: string; // http://127.0.0.1:<port>/<credential>/v1/runs
const clock = manualClock();

beforeAll(async () => {
  // The stack's clock is moved by hand: an approval waits for a person until a test decides or cancels.
  h = await startHarness({ recovery: false, clock });
  runs = h.stack.endpoints.runs;
  // A run that waits for a person (the first to ask for these refunds: later runs of the same day share its approvals).
  const started = await send('POST', '', { runId: 'v1-live', input: sampleInput, config: { approvalTimeoutSeconds: 3600 } });
  expect(started.status).toBe(202);
  await waitFor(async () => (await h.stack.ledger.listPendingApprovals()).some((approval) => approval.runId === 'v1-live'));
  // A run that has ended, of another day (no refunds of v1-live's to share): what the refusals below name, whichever test ran before them.
  expect((await send('POST', '', { runId: 'v1-ended', input: { ...sampleInput, date: '2026-11-27' } })).status).toBe(202);
  await waitFor(async () => (await h.stack.ledger.getRun('v1-ended'))?.status === 'succeeded');
}, 60_000);
afterAll(() => h?.stack.close());

async function send(method: string, path: string, body?: unknown, options: { url?: string; type?: string } = {}) {
  const response = await fetch(`${options.url ?? runs}${path}`, {
    method,
    headers: { 'content-type': options.type ?? 'application/json' },
    ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, any> };
}

/** Decides the run's approvals as they come, until it has ended. */
async function approveAll(runId: string) {
  for (;;) {
    const pending = await waitFor(async () => {
      const run = await h.stack.ledger.getRun(runId);
      const approvals = (await h.stack.ledger.listPendingApprovals()).filter((approval) => approval.runId === runId);
      return run && (run.status !== 'running' ? 'ended' : approvals.length > 0 ? approvals : undefined);
    });
    if (pending === 'ended') return;
    for (const approval of pending) {
      const response = await fetch(`${h.stack.endpoints.approvals}/${approval.approvalId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }) });
      expect(response.status).toBe(200);
    }
  }
}

/** What a refused request must leave as it was: the runs, their records' versions, the executions. */
async function snapshot() {
  return {
    runs: await h.stack.ledger.listRuns(1_000),
    pending: await h.stack.ledger.listPendingApprovals(),
    executions: h.stack.engine.listExecutions().executions.length,
  };
}

// In order: the first three read v1-live waiting for a person, the fourth cancels it; the last two read the run the fifth starts.
describe('the runs API', { shuffle: false }, () => {
  /** A long-poll of `v1-live` through the handler, as API Gateway invokes it with `remainingMs` left of the function's time. */
  const longPoll = (asked: number, remainingMs: number) => {
    let answered: { status: number; body: Record<string, any> } | undefined;
    const event = apiGatewayEvent({ method: 'GET', route: 'runs', approvalId: 'v1-live', query: { wait: String(asked) }, body: null, principal: 'local:tester' });
    const polling = h.stack.runsApi(event, { getRemainingTimeInMillis: () => remainingMs } as never).then((result) => (answered = { status: result.statusCode, body: JSON.parse(result.body) }));
    return { polling, answered: () => answered };
  };

  /** Moves the clock on, a quarter of a second at a time, until the long-poll answers; the clock time it took. */
  const advanceUntil = async (poll: ReturnType<typeof longPoll>) => {
    const from = clock.now().getTime();
    while (!poll.answered()) {
      await new Promise((resolve) => setImmediate(resolve));
      clock.advance(250);
    }
    await poll.polling;
    return clock.now().getTime() - from;
  };

  it('long-polls: a wait that sees no change answers after 20 s on the clock however long it asked, and before the function runs out of time', async () => {
    const now = await send('GET', '/v1-live');
    expect(now.body).toMatchObject({ lifecycle: 'input_required', pollAfterSeconds: 2 });
    expect(now.headers.get('retry-after')).toBe('2');
    // [asked, the function's time left, the longest the answer may take: 20 s, or that time less 2 s]
    for (const [asked, remainingMs, cap] of [[20, 28_000, MAX_WAIT_SECONDS * 1_000], [600, 28_000, MAX_WAIT_SECONDS * 1_000], [20, 10_000, 8_000]] as const) {
      const poll = longPoll(asked, remainingMs);
      const waited = await advanceUntil(poll);
      expect(poll.answered()).toMatchObject({ status: 200, body: { lifecycle: 'input_required' } });
      expect(waited).toBeGreaterThanOrEqual(cap);
      expect(waited).toBeLessThan(cap + 2_000);
    }
  });

  it("answers the client's wait for input on a run that already waits for a person at once, the clock unmoved", async () => {
    // A long-poll would answer only when the clock has passed 20 s (above), which nothing moves here.
    const client = runsClient({ base: runs.replace(/\/runs$/, '') });
    const from = clock.now().getTime();
    expect(await client.wait('v1-live', { untilInput: true })).toMatchObject({ runId: 'v1-live', lifecycle: 'input_required' });
    expect(clock.now().getTime()).toBe(from);
  });

  /**
   * The runs routes as the stack serves them (its deps: its ledger, and the writes it makes to it),
   * on a clock whose timers nothing fires but `release`: a long-poll that arms its tick has not
   * answered on what it read, and one that answers while no timer has fired answered on a read or
   * a write, not on a tick.
   */
  const heldRoutes = () => {
    const armed: (() => void)[] = [];
    let offset = 0;
    let tickArmed!: () => void;
    const ticked = new Promise<'tick armed'>((resolve) => (tickArmed = () => resolve('tick armed')));
    const counts = { fired: 0, cancelled: 0 };
    const held = { now: () => new Date(clock.now().getTime() + offset), after: (_ms: number, fire: () => void) => (armed.push(fire), tickArmed(), () => void counts.cancelled++) };
    return {
      routes: createRunsRoutes({ ...h.stack.served.runs, clock: held }),
      ticked,
      counts,
      /** Moves the held clock past any long-poll's cap and fires its timers. */
      release: () => {
        offset += 60_000;
        for (const fire of armed.splice(0)) (counts.fired++, fire());
      },
    };
  };

  it('long-polls from the lifecycle its caller read: a run that moved on before the poll read it is answered at once, before any tick', async () => {
    // v1-live waits for a person. A caller that read it working (before it asked) is answered at once.
    const moved = heldRoutes();
    expect(await Promise.race([moved.routes.get('v1-live', { wait: '20' }, 28_000, 'working'), moved.ticked])).toMatchObject({ runId: 'v1-live', lifecycle: 'input_required' });
    expect(moved.counts.fired).toBe(0);
    // One that read it as it is waits (its tick armed), and answers at its cap.
    const same = heldRoutes();
    const waiting = same.routes.get('v1-live', { wait: '20' }, 28_000, 'input_required');
    expect(await Promise.race([waiting, same.ticked])).toBe('tick armed');
    same.release();
    expect(await waiting).toMatchObject({ lifecycle: 'input_required' });
    // The client names the lifecycle it read in its long-poll's header; the API refuses one that is none.
    const headers: (string | null)[] = [];
    const stop = new AbortController();
    const client = runsClient({
      base: runs.replace(/\/runs$/, ''),
      fetch: (url, init) => {
        if (String(url).includes('?wait=')) (headers.push(new Headers(init?.headers).get(SEEN_LIFECYCLE_HEADER)), stop.abort());
        return fetch(url, init);
      },
    });
    await expect(client.wait('v1-live', { signal: stop.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(headers).toEqual(['input_required']);
    const refused = await fetch(`${runs}/v1-live?wait=20`, { headers: { [SEEN_LIFECYCLE_HEADER]: 'asleep' } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toMatch(new RegExp(`^invalid ${SEEN_LIFECYCLE_HEADER}: `));
  });

  it('cancels a run that waits for a person: 202, the kill recorded with who asked, the run stopped now — and a long-poll answers as it moves on', async () => {
    const poll = longPoll(20, 28_000);
    // A long-poll of the stack's routes is woken by the engine's write of the kill, not by its next tick.
    const held = heldRoutes();
    const woken = held.routes.get('v1-live', { wait: '20' }, 28_000);
    expect(await Promise.race([woken, held.ticked])).toBe('tick armed');
    await new Promise((resolve) => setImmediate(resolve));
    const answer = await send('POST', '/v1-live/cancel', { reason: 'not today' });
    expect(answer.status).toBe(202);
    // The write of the kill ended its wait before the cancel answered (its tick cancelled, none fired), and it read the run again.
    expect(held.counts.cancelled).toBeGreaterThan(0);
    expect(held.counts.fired).toBe(0);
    expect(await woken).toMatchObject({ lifecycle: 'cancelled' });
    const run = await waitFor(async () => {
      const record = await h.stack.ledger.getRun('v1-live');
      return record?.status === 'killed' && record;
    });
    expect(run.killed).toMatchObject({ by: expect.stringMatching(/^local:/), reason: 'not today' });
    // Asked again, the 409 says whether the kill recorded is the caller's (a client whose answer was
    // lost tells its own cancel by it: client/connect.ts); another person's cancel is told it is not.
    expect(await send('POST', '/v1-live/cancel', { reason: 'not today' })).toMatchObject({ status: 409, body: { run: { lifecycle: 'cancelled' }, killedByCaller: true } });
    const another = await h.stack.runsApi(apiGatewayEvent({ method: 'POST', route: 'runs', approvalId: 'v1-live', cancel: true, body: '{}', principal: 'local:someone-else' }), { getRemainingTimeInMillis: () => 20_000 } as never);
    expect([another.statusCode, JSON.parse(another.body)]).toMatchObject([409, { killedByCaller: false }]);
    // The long-poll reads the run again at its next tick: it answers with the change, not at its cap.
    expect(await advanceUntil(poll)).toBeLessThan(5_000);
    expect(poll.answered()).toMatchObject({ status: 200, body: { lifecycle: 'cancelled' } });
    const read = await send('GET', '/v1-live');
    expect(read.body).toMatchObject({ lifecycle: 'cancelled', approvals: [] });
  });

  it('starts a run: 202, its Location, the run; the same request again starts nothing and answers the same run, another under its id is a 409', async () => {
    const first = await send('POST', '', { runId: 'v1-twice', input: sampleInput, config: { approvalTimeoutSeconds: 3600 } });
    expect(first.status).toBe(202);
    expect(first.headers.get('location')).toBe('/v1/runs/v1-twice');
    expect(first.body).toMatchObject({ runId: 'v1-twice', agent: 'refund-reconciler', lifecycle: 'working', created: true, startedBy: expect.stringMatching(/^local:/) });
    await waitFor(() => h.stack.ledger.getRun('v1-twice'));
    const executions = h.stack.engine.listExecutions().executions.length;
    const again = await send('POST', '', { runId: 'v1-twice', input: sampleInput });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ runId: 'v1-twice', executionArn: first.body['executionArn'], created: false });
    expect(h.stack.engine.listExecutions().executions.length).toBe(executions);
    // Another request under its id is refused with the run, not answered as if it were that run's.
    const otherInput = await send('POST', '', { runId: 'v1-twice', input: { ...sampleInput, date: '2026-11-27' } });
    expect(otherInput.status).toBe(409);
    expect(otherInput.body).toMatchObject({ message: expect.stringMatching(/^runId: run v1-twice was started with the input .*2026-11-28.*, not .*2026-11-27/), run: { runId: 'v1-twice' } });
    // The client's refusal carries that run, as the API answered it: who holds the id, read without asking again.
    const client = runsClient({ base: runs.replace(/\/runs$/, '') });
    await expect(client.start({ runId: 'v1-twice', input: { ...sampleInput, date: '2026-11-27' } })).rejects.toMatchObject({ name: 'RunsApiError', status: 409, run: { runId: 'v1-twice', agent: 'refund-reconciler', report: { input: sampleInput } } });
    const otherModel = await send('POST', '', { runId: 'v1-twice', input: sampleInput, model: 'anthropic:claude-haiku-4-5' });
    expect(otherModel.status).toBe(409);
    expect(otherModel.body['message']).toMatch(/^model: run v1-twice runs on sim:savepoint-sim-1, not anthropic:claude-haiku-4-5: start a new run id/);
    expect((await send('POST', '', { runId: 'v1-twice', input: sampleInput, model: 'sim:savepoint-sim-1' })).body).toMatchObject({ created: false });
    expect(h.stack.engine.listExecutions().executions.length).toBe(executions);
    await approveAll('v1-twice');
    expect((await h.stack.ledger.listRuns(1_000)).filter((run) => run.runId === 'v1-twice')).toHaveLength(1);
    // A cancel of the run that has ended: refused with the run, its lifecycle the end it reached.
    await expect(client.cancel('v1-twice')).rejects.toMatchObject({ name: 'RunsApiError', status: 409, message: 'runId: run v1-twice is succeeded, not running', run: { runId: 'v1-twice', lifecycle: 'completed' } });
    // A run nobody killed: its 409 names no killer.
    expect((await send('POST', '/v1-twice/cancel', {})).body).not.toHaveProperty('killedByCaller');
  });

  it('reads a run: its report, lifecycle and no poll hint once it has ended', async () => {
    const answer = await send('GET', '/v1-twice');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ runId: 'v1-twice', agent: 'refund-reconciler', lifecycle: 'completed', report: { status: 'succeeded' }, approvals: [] });
    expect(answer.body['pollAfterSeconds']).toBeUndefined();
    expect(answer.headers.get('retry-after')).toBeNull();
  });

  it('lists runs newest first, a page at a time, by the cursor it gave', async () => {
    const all = (await h.stack.ledger.listRuns(1_000)).sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.runId.localeCompare(a.runId)).map((run) => run.runId);
    expect(all.length).toBeGreaterThanOrEqual(2);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await send('GET', `?limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body['runs']).toHaveLength(1);
      seen.push(...page.body['runs'].map((run: { runId: string }) => run.runId));
      cursor = page.body['nextCursor'];
    } while (cursor);
    expect(seen).toEqual(all);
    const completed = await send('GET', '?status=completed&agent=refund-reconciler');
    expect(completed.body['runs'].map((run: { runId: string }) => run.runId)).toEqual(all.filter((runId) => runId !== 'v1-live'));
  });
});

describe('the runs API refuses bad input with its status, and changes nothing', () => {
  const origin = () => new URL(runs).origin;
  const cases: { name: string; status: number; message: RegExp; request: () => Promise<{ status: number; body: Record<string, any> }> }[] = [
    { name: 'an unknown run', status: 404, message: /^runId: no run never-ran$/, request: () => send('GET', '/never-ran') },
    { name: 'a cancel of an unknown run', status: 404, message: /^runId: no run never-ran$/, request: () => send('POST', '/never-ran/cancel', {}) },
    { name: 'a run id with a malformed escape, named as the run id', status: 400, message: /^runId: malformed percent-encoding in the path: "%ZZ"$/, request: () => send('GET', '/%ZZ') },
    { name: 'a cancel of a run id with a malformed escape', status: 400, message: /^runId: malformed percent-encoding/, request: () => send('POST', '/%E0%A4%A/cancel', {}) },
    { name: 'a batch id with a malformed escape, named as the batch id', status: 400, message: /^batchId: malformed percent-encoding/, request: () => send('GET', '/%ZZ', undefined, { url: runs.replace(/\/runs$/, '/batches') }) },
    { name: 'a malformed body', status: 400, message: /^body: not valid JSON$/, request: () => send('POST', '', '{"input":') },
    { name: 'a key given twice, which parsers read differently', status: 400, message: /^body: the key "runId" is given twice \(which one counts depends on the parser\): give each key once$/, request: () => send('POST', '', `{"input":${JSON.stringify(sampleInput)},"runId":"v1-bad-8","runId":"v1-bad-9"}`) },
    { name: 'a key given twice in the input, named by its path', status: 400, message: /^body: the key "input\.date" is given twice/, request: () => send('POST', '', `{"input":{"date":"2026-11-28","date":"2026-11-27"},"runId":"v1-bad-10"}`) },
    { name: 'no body', status: 400, message: /^body: required/, request: () => send('POST', '') },
    { name: 'an unknown field', status: 400, message: /bogus/, request: () => send('POST', '', { input: sampleInput, runId: 'v1-bad-1', bogus: 1 }) },
    { name: 'an input the agent refuses', status: 400, message: /^invalid input of agent refund-reconciler/, request: () => send('POST', '', { input: { day: 1 }, runId: 'v1-bad-2' }) },
    { name: 'another agent', status: 400, message: /^agent: no agent other here \(this API runs refund-reconciler\)$/, request: () => send('POST', '', { agent: 'other', input: sampleInput, runId: 'v1-bad-3' }) },
    { name: 'a bad run id', status: 400, message: /^invalid run request: runId: /, request: () => send('POST', '', { input: sampleInput, runId: 'no spaces here' }) },
    { name: 'a form instead of JSON', status: 415, message: /^content-type: expected application\/json/, request: () => send('POST', '', 'input=1', { type: 'application/x-www-form-urlencoded' }) },
    { name: 'a body over the limit', status: 413, message: /^body: larger than/, request: () => send('POST', '', { input: sampleInput, runId: 'v1-bad-4', model: 'x'.repeat(PAYLOAD_LIMIT_BYTES + 8 * 1024) }) },
    { name: 'a cursor it never gave', status: 400, message: /^cursor: not a cursor this API gave/, request: () => send('GET', '?cursor=bm90LWEtY3Vyc29y') },
    { name: 'an unknown query parameter', status: 400, message: /^invalid query: .*page/, request: () => send('GET', '?page=2') },
    { name: 'an unknown status, answered with the ones it takes', status: 400, message: /^invalid query: status: .*"succeeded".*"input_required"/, request: () => send('GET', '?status=done') },
    { name: 'a long-poll that is not a number', status: 400, message: /^invalid query: wait: /, request: () => send('GET', '/v1-ended?wait=soon') },
    { name: 'an unknown field in a cancel', status: 400, message: /by/, request: () => send('POST', '/v1-ended/cancel', { by: 'mallory' }) },
    { name: 'a cancel of a run that has ended', status: 409, message: /^runId: run v1-ended is succeeded, not running$/, request: () => send('POST', '/v1-ended/cancel', {}) },
    { name: 'a method the route has not', status: 405, message: /^DELETE is not allowed on \/v1\/runs\/v1-ended: it takes GET$/, request: () => send('DELETE', '/v1-ended') },
    { name: 'a method the runs route has not, named as such (not as a start that names no agent)', status: 405, message: /^PUT is not allowed on \/v1\/runs: it takes GET, POST$/, request: () => send('PUT', '', { input: sampleInput, runId: 'v1-bad-7' }) },
    { name: 'no credential', status: 403, message: /^credential: missing or wrong/, request: () => send('POST', '', { input: sampleInput, runId: 'v1-bad-5' }, { url: `${origin()}/v1/runs` }) },
    { name: 'a wrong credential', status: 403, message: /^credential: missing or wrong/, request: () => send('POST', '', { input: sampleInput, runId: 'v1-bad-6' }, { url: `${origin()}/not-the-credential/v1/runs` }) },
    { name: 'no credential on a read', status: 403, message: /^credential: missing or wrong/, request: () => send('GET', '/v1-ended', undefined, { url: `${origin()}/v1/runs` }) },
  ];

  it.each(cases)('$name: $status', async ({ status, message, request }) => {
    const before = await snapshot();
    const answer = await request();
    expect(answer.status).toBe(status);
    expect(answer.body['message']).toMatch(message);
    expect(await snapshot()).toEqual(before);
  });

  it('answers a method a route does not take 405 with the methods it takes in Allow (RFC 9110), on the port and from the RunsApi function API Gateway would never call with one', async () => {
    for (const [method, path, allow] of [['PUT', '', 'GET, POST'], ['DELETE', '/v1-ended', 'GET'], ['GET', '/v1-ended/cancel', 'POST'], ['GET', '', 'POST']] as const) {
      const answer = await send(method, path, undefined, path === '' && method === 'GET' ? { url: runs.replace(/\/runs$/, '/batches') } : {});
      expect([answer.status, answer.headers.get('allow')], `${method} ${path}`).toEqual([405, allow]);
    }
    const called = await h.stack.runsApi(apiGatewayEvent({ method: 'PUT', route: 'runs', body: null, principal: 'local:tester' }), { getRemainingTimeInMillis: () => 20_000 } as never);
    expect(called).toMatchObject({ statusCode: 405, headers: { allow: 'GET, POST' } });
    expect(JSON.parse(called.body)).toEqual({ message: 'PUT is not allowed on /runs: it takes GET, POST' });
  });
});
