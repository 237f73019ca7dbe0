import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiGatewayEvent } from '../../local/services/approval-api.js';
import { lambdaContext } from '../../local/services/lambda-context.js';
import { LOCAL_MANIFEST_BUCKET, MAX_BATCH_ITEMS } from '../../lambdas/runs/batch.js';
import { counterAgent } from '../support/counter-agent.js';
import { pruningOf } from '../../lambdas/ledger/storage-ledger.js';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';

/**
 * `POST /v1/batches` on the local stack's runs API (the handler a deployment's RunsApi function
 * runs): what a caller gets wrong is refused with the field named, 400 (413 for a batch too
 * large), and nothing starts — no batch, no run. A good batch runs each item's run to its end.
 */
let h: AgentHarness<any>;
beforeAll(async () => {
  h = await startAgentHarness({ agent: counterAgent({ calls: 1, perTurn: 1 }), recovery: false, batchPollWaitMs: 5 });
  // The batch engine made here, not in the first test's POST: from a checkout CDK synthesizes its
  // template (local/template/batch-synth.ts), tens of seconds on a loaded machine, and that would
  // count against the first test's timeout and the runs function's 20 s.
  await h.stack.batches.engine();
}, 180_000);
afterAll(() => h?.stack.close());

const post = (body: unknown, raw = false) =>
  h.stack.runsApi(apiGatewayEvent({ method: 'POST', route: 'batches', body: raw ? (body as string) : JSON.stringify(body), principal: 'local:tester' }), lambdaContext('RunsApi', 20_000));
const get = (batchId: string) => h.stack.runsApi(apiGatewayEvent({ method: 'GET', route: 'batches', approvalId: batchId, body: null, principal: 'local:tester' }), lambdaContext('RunsApi', 20_000));
const items = (count: number) => Array.from({ length: count }, (_, index) => ({ id: `i${index}` }));

describe('POST /v1/batches refuses what is wrong, naming it, and starts nothing', () => {
  it.each([
    ['no items', { batchId: 'bad-1' }, 400, /items: a batch has either items or a manifest, one of the two/],
    ['an empty list', { batchId: 'bad-2', items: [] }, 400, /items: at least one item/],
    ['an item the agent refuses', { batchId: 'bad-3', items: [{ id: 'a' }, { id: 7 }] }, 400, /items\[1\] \(input of agent counter\): id: Invalid input: expected string/],
    ['a concurrency of 0', { batchId: 'bad-4', items: items(2), concurrency: 0 }, 400, /concurrency: Too small: expected number to be >=1/],
    ['a concurrency over a distributed Map’s 10,000', { batchId: 'bad-5', items: items(2), concurrency: 10_001 }, 400, /concurrency: Too big: expected number to be <=10000/],
    ['a batch id no run id can carry', { batchId: 'a/b', items: items(2) }, 400, /batchId: expected 1-40 letters/],
    ['a batch id too long for its runs’ ids', { batchId: 'x'.repeat(41), items: items(2) }, 400, /batchId: expected 1-40 letters/],
    ['another agent', { batchId: 'bad-6', agent: 'someone-else', items: items(2) }, 400, /agent: no agent someone-else here \(this API runs counter\)/],
    ['an unknown field', { batchId: 'bad-7', items: items(2), concurrent: 3 }, 400, /invalid batch request: Unrecognized key: "concurrent"/],
    ['a key some item lacks', { batchId: 'bad-8', items: [{ id: 'a' }, { id: 'b', extra: 1 }], key: 'nothing' }, 400, /items\[0\]\.nothing: the batch's key names each item's run/],
    ['two items of one key', { batchId: 'bad-9', items: [{ id: 'a' }, { id: 'a' }], key: 'id' }, 400, /items\[1\]\.id: the same run id \(bad-9-a\) as items\[0\]/],
    ['a key value no run id can carry', { batchId: 'bad-10', items: [{ id: 'a b' }], key: 'id' }, 400, /items\[0\]\.id \(its run id\): expected 1-80 letters/],
    ['too many items', { batchId: 'bad-11', items: items(MAX_BATCH_ITEMS + 1) }, 413, new RegExp(`items: ${MAX_BATCH_ITEMS + 1} items, at most ${MAX_BATCH_ITEMS} per batch`)],
    ['items over the execution input’s 256 KiB', { batchId: 'bad-12', items: Array.from({ length: 300 }, (_, index) => ({ id: `${index}-${'x'.repeat(1_000)}` })) }, 413, /items: the batch is \d+ bytes as its execution's input, over Step Functions' 262144/],
  ])('%s', async (_what, body, status, message) => {
    const answer = await post(body);
    expect(answer.statusCode, answer.body).toBe(status);
    expect((JSON.parse(answer.body) as { message: string }).message).toMatch(message);
    const batchId = (body as { batchId: string }).batchId;
    if (/^[A-Za-z0-9_-]{1,40}$/.test(batchId)) expect((await get(batchId)).statusCode).toBe(404);
    expect((await h.stack.ledger.listRuns(10)).filter((run) => run.runId.startsWith('bad-'))).toEqual([]);
  });

  it('refuses a body that is not JSON, and an unknown batch (404)', async () => {
    expect((await post('{', true)).statusCode).toBe(400);
    const missing = await get('nobody');
    expect(missing.statusCode).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({ message: 'batchId: no batch nobody' });
  });
});

describe('POST /v1/runs', () => {
  it('refuses a run whose request is over the execution input’s 256 KiB with a 413 saying so, and starts nothing', async () => {
    // Inside the API's body limit (256 KiB and 4 more), over what StartExecution takes: InvalidExecutionInput, which was a 500.
    const input = { id: 'x'.repeat(262_100) };
    const answer = await h.stack.runsApi(apiGatewayEvent({ method: 'POST', route: 'runs', body: JSON.stringify({ runId: 'too-large', input }), principal: 'local:tester' }), lambdaContext('RunsApi', 20_000));
    expect(answer.statusCode, answer.body).toBe(413);
    expect((JSON.parse(answer.body) as { message: string }).message).toMatch(/^input: the run request is \d+ bytes as its execution's input, over Step Functions' 262144: pass what is large by reference/);
    expect(await h.stack.ledger.getRun('too-large')).toBeUndefined();
  });
});

describe('POST /v1/batches', () => {
  it('refuses an item whose run id another request holds (its start is a 409), and lists it refused, not as that run', async () => {
    const startRun = (body: unknown) => h.stack.runsApi(apiGatewayEvent({ method: 'POST', route: 'runs', body: JSON.stringify(body), principal: 'local:tester' }), lambdaContext('RunsApi', 20_000));
    expect((await startRun({ runId: 'clash-0', input: { id: 'mine' } })).statusCode).toBe(202);
    const answer = await post({ batchId: 'clash', items: [{ id: 'theirs' }] });
    expect(answer.statusCode, answer.body).toBe(202);
    const engine = await h.stack.batches.engine();
    const execution = engine.listExecutions().executions.find((each) => each.name === 'clash')!;
    await engine.waitForExecution(execution.executionArn);
    expect(JSON.parse((await get('clash')).body)).toMatchObject({ status: 'SUCCEEDED', runs: [{ runId: 'clash-0', status: 'refused' }], counts: { refused: 1 } });
    expect((await h.stack.ledger.getRun('clash-0'))?.input).toEqual({ id: 'mine' });
  });

  it('refuses an item under the id of a pruned run, and lists it refused with why once the batch has ended', async () => {
    const startRun = (body: unknown) => h.stack.runsApi(apiGatewayEvent({ method: 'POST', route: 'runs', body: JSON.stringify(body), principal: 'local:tester' }), lambdaContext('RunsApi', 20_000));
    const started = await startRun({ runId: 'gone-0', input: { id: 'first' } });
    expect(started.statusCode).toBe(202);
    await h.stack.engine.waitForExecution((JSON.parse(started.body) as { executionArn: string }).executionArn);
    expect((await pruningOf(h.stack.ledger)!.prune(new Date('2999-01-01'), new Date())).flatMap((record) => record.runIds)).toContain('gone-0');
    const answer = await post({ batchId: 'gone', items: [{ id: 'again' }] });
    expect(answer.statusCode, answer.body).toBe(202);
    const engine = await h.stack.batches.engine();
    await engine.waitForExecution(engine.listExecutions().executions.find((each) => each.name === 'gone')!.executionArn);
    expect(JSON.parse((await get('gone')).body)).toMatchObject({ status: 'SUCCEEDED', runs: [{ runId: 'gone-0', status: 'refused', reason: expect.stringMatching(/^runId: run gone-0 was pruned at \S+ \(savepoint prune\)/) }], counts: { refused: 1 } });
    expect(await h.stack.ledger.getRun('gone-0')).toBeUndefined();
  });

  it('runs one run per item, named by the batch and the item’s key, and answers a repeat with the same batch, another under its id with a 409', async () => {
    const answer = await post({ batchId: 'good', items: [{ id: 'x' }, { id: 'y' }, { id: 'z' }], key: 'id', concurrency: 2 });
    expect(answer.statusCode, answer.body).toBe(202);
    expect(answer.headers).toMatchObject({ location: '/v1/batches/good' });
    expect(JSON.parse(answer.body)).toMatchObject({ batchId: 'good', agent: 'counter', concurrency: 2, created: true, runs: [{ runId: 'good-x' }, { runId: 'good-y' }, { runId: 'good-z' }] });
    const engine = await h.stack.batches.engine();
    await engine.waitForExecution(engine.listExecutions().executions.find((each) => each.name === 'good')!.executionArn);
    const done = JSON.parse((await get('good')).body) as { status: string; counts: object };
    expect(done).toMatchObject({ status: 'SUCCEEDED', counts: { succeeded: 3 } });
    // A batch that succeeded has no failure to answer (a failed one's error and cause: batch-manifest.test.ts).
    expect(done).not.toHaveProperty('error');
    expect(done).not.toHaveProperty('cause');
    // Each run was started as the caller who started the batch, as the runs API proved them.
    expect((await h.stack.ledger.getRun('good-y'))?.startedBy).toBe('local:tester');
    const repeat = await post({ batchId: 'good', items: [{ id: 'x' }, { id: 'y' }, { id: 'z' }], key: 'id', concurrency: 2 });
    // Answered as it is, ended: not as a batch that runs (a caller would poll an ended batch).
    expect(JSON.parse(repeat.body)).toMatchObject({ created: false, status: 'SUCCEEDED', counts: { succeeded: 3 } });
    // The same list without its concurrency is the same batch; another list, key or concurrency under its id is refused.
    expect(JSON.parse((await post({ batchId: 'good', items: [{ id: 'x' }, { id: 'y' }, { id: 'z' }], key: 'id' })).body)).toMatchObject({ created: false });
    const refusals = [
      [{ batchId: 'good', items: [{ id: 'x' }, { id: 'y' }, { id: 'w' }], key: 'id' }, /^batchId: batch good exists with other items \(3 runs; they differ from items\[2\] on\): post these under another batchId$/],
      [{ batchId: 'good', items: [{ id: 'x' }, { id: 'y' }, { id: 'z' }] }, /^batchId: batch good exists with other items \(3 runs; they differ from items\[0\] on\)/],
      [{ batchId: 'good', items: [{ id: 'x' }, { id: 'y' }, { id: 'z' }], key: 'id', concurrency: 3 }, /^batchId: batch good exists with concurrency 2, not 3/],
      [{ batchId: 'good', manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: 'k.json' } }, new RegExp(`^batchId: batch good exists with a list of items, not the manifest s3://${LOCAL_MANIFEST_BUCKET}/k\\.json`)],
    ] as const;
    for (const [body, message] of refusals) {
      const refused = await post(body);
      expect(refused.statusCode, JSON.stringify(body)).toBe(409);
      expect((JSON.parse(refused.body) as { message: string }).message).toMatch(message);
    }
    // Started once, whatever else this file's batch engine runs.
    expect((await h.stack.batches.engine()).listExecutions().executions.filter((each) => each.name === 'good')).toHaveLength(1);
  });
});
