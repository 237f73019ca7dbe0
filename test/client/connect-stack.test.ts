import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type RunsClient } from '../../client/index.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';
import { serveStack, type ServedStack } from '../support/served-stack.js';

/**
 * `connect({ stack, region })`: the same client against a deployed stack's runs API — found by
 * the stack's CloudFormation outputs, every request signed with SigV4 from the caller's AWS
 * credentials (the SDK's default chain, here the environment). The stack is the local twin
 * (test/support/served-stack.ts): the SDK's endpoints point at loopback, and its API refuses a
 * request whose signature does not check out, as API Gateway's IAM authorization does.
 */
let harness: Harness;
let served: ServedStack;
let client: RunsClient;
const saved = { ...process.env };

beforeAll(async () => {
  harness = await startHarness({ recovery: false, day: sampleDay });
  served = await serveStack(harness);
  // The caller's AWS configuration: its region, credentials and the SDK's endpoint settings.
  Object.assign(process.env, served.env);
  client = await connect({ stack: 'Savepoint', region: 'us-east-1' });
}, 120_000);
afterAll(async () => {
  process.env = saved;
  await served?.close();
  await harness?.stack.close();
});

describe('the client of a deployed stack (the twin)', () => {
  it('starts a run, waits for a person, decides, waits for the end, lists and reads it — every request signed', async () => {
    // The API's record of requests is the file's: this test's are those from here on.
    const earlier = served.approvalRequests.length;
    const started = await client.start({ agent: 'refund-reconciler', input: { date: sampleDay.date }, runId: 'stack-r1', config: { approvalTimeoutSeconds: 3600 } });
    expect(started).toMatchObject({ runId: 'stack-r1', created: true });
    for (;;) {
      const run = await client.wait('stack-r1', { untilInput: true });
      if (run.lifecycle !== 'input_required') break;
      for (const approval of await client.approvals('stack-r1')) expect(await client.decide(approval.approvalId, 'approve')).toMatchObject({ approvalId: approval.approvalId, status: 'approved' });
    }
    const finished = await client.get('stack-r1');
    expect(finished).toMatchObject({ lifecycle: 'completed', report: { status: 'succeeded' } });
    expect((await client.list({ status: 'completed' })).runs.map((run) => run.runId)).toEqual(['stack-r1']);
    await expect(client.cancel('never-ran')).rejects.toMatchObject({ name: 'RunsApiError', status: 404 });

    // Its progress, through the stack's streamed GET /runs/{runId}/events (signed like the rest),
    // from the start and resumed after an event: the run's events, each once, to its finish.
    const events = [];
    for await (const event of client.events('stack-r1')) events.push(event);
    expect(events[0]).toMatchObject({ id: 'a.run', type: 'run.started' });
    expect(events.at(-1)).toMatchObject({ id: 'z.run', type: 'run.finished' });
    const resumed = [];
    for await (const event of client.events('stack-r1', { after: events[1]!.id })) resumed.push(event);
    expect(resumed.map((event) => event.id)).toEqual(events.slice(2).map((event) => event.id));

    const requests = served.approvalRequests.slice(earlier);
    const paths = requests.map((request) => `${request.method} ${request.path}`);
    // A wait reads the run first, then long-polls (`?wait=20`) while it works: how many long-polls depends on the engine's pace.
    expect(paths).toEqual(expect.arrayContaining(['POST /runs', 'GET /runs/stack-r1', 'GET /runs?status=completed', 'GET /approvals', 'POST /runs/never-ran/cancel', 'GET /runs/stack-r1/events']));
    expect(requests.filter((request) => !request.signed)).toEqual([]);
  }, 120_000);

  it('refuses an application\'s bad input once, naming the field, and changes nothing', async () => {
    const refused = (status: number, message: string) => ({ name: 'RunsApiError', status, message: expect.stringContaining(message) });
    const sent = served.approvalRequests.length;
    await expect(client.start({ agent: 'no-such-agent', input: { date: sampleDay.date } })).rejects.toMatchObject(refused(400, 'agent: no agent no-such-agent here'));
    await expect(client.start({ input: { date: '2026-02-30' }, runId: 'bad-date' })).rejects.toMatchObject(refused(400, 'input of agent refund-reconciler: date:'));
    await expect(client.start({ input: { date: sampleDay.date }, runId: 'day 1/2' })).rejects.toMatchObject(refused(400, 'runId: expected 1-80 letters'));
    await expect(client.decide('apv_AAAAAAAAAAAAAAAAAAAAAA', 'approve')).rejects.toMatchObject(refused(404, 'no approval apv_AAAAAAAAAAAAAAAAAAAAAA'));
    // The approval API lists every run's: a run id no run can have is refused, not answered with
    // an empty list that looks like a run with nothing waiting (and no request is sent for it).
    const before = served.approvalRequests.length;
    await expect(client.approvals('day 1/2')).rejects.toMatchObject(refused(400, 'invalid runId: expected 1-80 letters, digits, "-" or "_" (it names the execution), got "day 1/2"'));
    expect(served.approvalRequests.length).toBe(before);
    expect(served.approvalRequests.length - sent).toBe(4);
    for (const runId of ['bad-date', 'day 1/2']) expect(await harness.stack.ledger.getRun(runId)).toBeUndefined();
    expect(await harness.stack.ledger.listPendingApprovals()).toEqual([]);
  });

  it('is refused (403) without a signature, and nothing starts', async () => {
    const response = await fetch(`${served.apiUrl}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: { date: sampleDay.date }, runId: 'unsigned' }) });
    expect(response.status).toBe(403);
    expect(await harness.stack.ledger.getRun('unsigned')).toBeUndefined();
  });
});
