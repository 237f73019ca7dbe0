import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect, runsClient, type Approval, type RunsClient } from '../../client/index.js';
import { servedAt } from '../../client/connect.js';
import { duplicates, leftBehind, ledgerOf, smallDay, workspace } from '../support/cli-process.js';
import { startServe, watchedLookups } from '../support/serve-process.js';
import { startProxy } from '../support/cutting-proxy.js';
import { whenChanged } from '../support/when-changed.js';

/**
 * A decision (a start, a batch's start, a cancel) carried through a restart of `savepoint serve`, on real processes:
 * a client connected by its state directory asks again where the next serve publishes, as `wait`
 * does. Sent while no serve runs, it is delivered once the next one is up; one whose answer was
 * lost (a real loopback proxy forwards it, then cuts the connection before the answer) is answered
 * by what it recorded, taken once; another decision (another kill) recorded stays a 409, and
 * neither a refusal nor a first attempt's 409 is asked again, nor anything by a client connected by url.
 */
const { children, dirs } = leftBehind();
const day = smallDay;
const serve = (args: string[]) => startServe(args, children);

/** Decides every approval the run waits for until it has ended. */
async function approveUntilEnded(client: RunsClient, runId: string) {
  for (;;) {
    const run = await client.wait(runId, { untilInput: true });
    if (run.lifecycle !== 'input_required') return run;
    for (const approval of await client.approvals(runId)) await client.decide(approval.approvalId, 'approve', { reason: 'checked' });
  }
}

/**
 * The serve of `stateDir` behind a cutting proxy: `client` is connect({ stateDir })'s client with the
 * proxy in front of serve (and found there again), `direct` one that reaches serve itself, `asked`
 * the statuses the proxy saw answered to a method and path, `through` the proxy's endpoint.
 */
async function behindProxy(stateDir: string) {
  const proxy = await startProxy(new URL(servedAt(stateDir).base).origin);
  const direct = await connect({ stateDir });
  const through = { base: `${proxy.origin}${new URL(servedAt(stateDir).base).pathname}` };
  const client = runsClient({ ...through, locate: () => through });
  const asked = (method: string, path: string) => proxy.seen.filter((request) => request.method === method && request.path === path).map((request) => request.status);
  return { proxy, direct, client, asked, through };
}

describe('a decision through a restart of serve', () => {
  it('is delivered by the next serve when sent while none runs: the run goes on, its approval decided once; a start sent then starts its run', async () => {
    const { stateDir, args } = await workspace('decide-restart', day);
    dirs.push(dirname(stateDir));
    const first = await serve(args('serve'));
    // connect({ stateDir })'s own client, whose lookups of the state directory the test sees.
    const { locate, failed: lookupsFailed, askedAgain: gap } = watchedLookups(stateDir);
    const client = runsClient({ ...servedAt(stateDir), locate });
    await client.start({ agent: 'refund-reconciler', input: { date: day.date }, runId: 'decided-late', config: { approvalTimeoutSeconds: 3600 } });
    expect((await client.wait('decided-late', { untilInput: true })).lifecycle).toBe('input_required');
    const [waiting] = await client.approvals('decided-late');

    first.child.kill('SIGKILL');
    await first.exited;
    // Sent with no serve: refused, looked up (engine.json names a dead serve: a 503), asked again.
    const decided = client.decide(waiting!.approvalId, 'approve', { reason: 'checked' }).then((approval) => ({ approval }), (error: unknown) => ({ error }));
    const started = client.start({ agent: 'refund-reconciler', input: { date: day.date }, runId: 'started-late', config: { maxSteps: 1 } }).then((run) => ({ run }), (error: unknown) => ({ error }));
    await Promise.race([gap, decided]);
    expect(lookupsFailed()).toBeGreaterThanOrEqual(2);

    const again = await serve(args('serve'));
    try {
      expect(await decided).toMatchObject({ approval: { approvalId: waiting!.approvalId, status: 'approved', decidedBy: expect.stringMatching(/^local:/), reason: 'checked' } });
      expect(await started).toMatchObject({ run: { runId: 'started-late', created: true } });
      expect(await approveUntilEnded(client, 'decided-late')).toMatchObject({ lifecycle: 'completed', report: { status: 'succeeded' } });
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
    const { approvals } = await ledgerOf(stateDir, 'decided-late');
    expect(approvals.filter((approval) => approval.approvalId === waiting!.approvalId)).toMatchObject([{ status: 'approved', reason: 'checked' }]);
    expect(duplicates(stateDir)).toEqual([]);
  }, 120_000);

  it('answers a decision, a start and a cancel that landed but whose answer was lost with what they recorded; another decision or kill recorded, a refusal and a first 409 throw, asked once', async () => {
    const { stateDir, args } = await workspace('decide-lost', day);
    dirs.push(dirname(stateDir));
    const serving = await serve(args('serve'));
    const proxied = await behindProxy(stateDir);
    const { proxy, direct, client, asked } = proxied;
    try {

      await direct.start({ agent: 'refund-reconciler', input: { date: day.date }, runId: 'lost-answer', config: { approvalTimeoutSeconds: 3600 } });
      expect((await direct.wait('lost-answer', { untilInput: true })).lifecycle).toBe('input_required');
      const [waiting] = await direct.approvals('lost-answer');
      const path = `/approvals/${waiting!.approvalId}`;

      // The first attempt decides (200), its answer is cut; asked again, the API answers 409 with the
      // decision recorded, the caller's own: the call's success, the decision taken once.
      proxy.cutAnswerOf('POST', path);
      const approval: Approval & { delivered?: boolean } = await client.decide(waiting!.approvalId, 'approve', { reason: 'checked' });
      expect(asked('POST', path)).toEqual([200, 409]);
      expect(approval).toMatchObject({ approvalId: waiting!.approvalId, status: 'approved', reason: 'checked', decidedBy: expect.stringMatching(/^local:/), delivered: expect.any(Boolean) });
      expect((await direct.approvals('lost-answer')).map((pending) => pending.approvalId)).not.toContain(waiting!.approvalId);

      // Another decision than the one recorded, asked again after a lost answer: the 409 it is.
      proxy.cutAnswerOf('POST', path);
      await expect(client.decide(waiting!.approvalId, 'reject')).rejects.toMatchObject({ name: 'RunsApiError', status: 409, message: expect.stringMatching(/is already approved \(by local:/) });
      expect(asked('POST', path)).toEqual([200, 409, 409, 409]);
      // The same decision asked for again, answered at once: a first attempt's 409 throws, asked once.
      await expect(client.decide(waiting!.approvalId, 'approve')).rejects.toMatchObject({ name: 'RunsApiError', status: 409 });
      expect(asked('POST', path)).toEqual([200, 409, 409, 409, 409]);
      // Refusals are not asked again: no such approval (404), a reason too long (400).
      await expect(client.decide('apv_AAAAAAAAAAAAAAAAAAAAAA', 'approve')).rejects.toMatchObject({ status: 404 });
      expect(asked('POST', '/approvals/apv_AAAAAAAAAAAAAAAAAAAAAA')).toEqual([404]);
      await expect(client.decide(waiting!.approvalId, 'approve', { reason: 'x'.repeat(501) })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/reason/) });
      expect(asked('POST', path)).toEqual([200, 409, 409, 409, 409, 400]);
      // A client connected by url is not carried through: the cut answer is its failure, asked once.
      const byUrl = runsClient(proxied.through);
      proxy.cutAnswerOf('POST', '/runs');
      await expect(byUrl.start({ agent: 'refund-reconciler', input: { date: day.date }, runId: 'by-url', config: { maxSteps: 1 } })).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(asked('POST', '/runs')).toEqual([202]);

      // A start whose answer was lost: asked again, answered with the run it started (`created: false`), started once.
      proxy.cutAnswerOf('POST', '/runs');
      expect(await client.start({ agent: 'refund-reconciler', input: { date: day.date }, runId: 'lost-start', config: { maxSteps: 1 } })).toMatchObject({ runId: 'lost-start', created: false });
      expect(asked('POST', '/runs')).toEqual([202, 202, 202]);
      expect((await direct.list({ limit: 100 })).runs.filter((run) => run.runId === 'lost-start')).toHaveLength(1);

      // A cancel whose answer was lost, asked again once the run has stopped (the retry held until
      // then): the 409 of a run the caller killed with this reason answers the run, killed once.
      await direct.start({ agent: 'refund-reconciler', input: { date: day.date }, runId: 'lost-cancel', config: { approvalTimeoutSeconds: 3600 } });
      expect((await direct.wait('lost-cancel', { untilInput: true })).lifecycle).toBe('input_required');
      proxy.cutAnswerOf('POST', '/runs/lost-cancel/cancel');
      const retry = proxy.hold('POST', '/runs/lost-cancel/cancel');
      const cancelling = client.cancel('lost-cancel', { reason: 'not needed' });
      // (A cancel that is not asked again fails here, with its cut connection.)
      await Promise.race([retry.reached, cancelling]);
      const stopped = await direct.wait('lost-cancel');
      expect(stopped).toMatchObject({ lifecycle: 'cancelled', report: { killed: { by: expect.stringMatching(/^local:/), reason: 'not needed' } } });
      retry.release();
      expect(await cancelling).toMatchObject({ runId: 'lost-cancel', lifecycle: 'cancelled', report: { killed: stopped.report.killed } });
      expect(asked('POST', '/runs/lost-cancel/cancel')).toEqual([202, 409]);
      // Another reason than the kill recorded, asked again after a lost answer: the 409 it is; a first attempt's too.
      proxy.cutAnswerOf('POST', '/runs/lost-cancel/cancel');
      await expect(client.cancel('lost-cancel', { reason: 'another' })).rejects.toMatchObject({ name: 'RunsApiError', status: 409, run: { runId: 'lost-cancel', lifecycle: 'cancelled' } });
      await expect(client.cancel('lost-cancel', { reason: 'not needed' })).rejects.toMatchObject({ name: 'RunsApiError', status: 409 });
      expect(asked('POST', '/runs/lost-cancel/cancel')).toEqual([202, 409, 409, 409, 409]);
    } finally {
      await proxy.close();
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
  }, 120_000);

  it("answers a batch's start that landed but whose answer was lost with that batch (created: false), under the default batch id: one batch, each item's run started once", async () => {
    const { stateDir, args } = await workspace('batch-lost', day);
    dirs.push(dirname(stateDir));
    const serving = await serve(args('serve'));
    const { proxy, direct, client, asked } = await behindProxy(stateDir);
    try {
      const items = [{ date: day.date }, { date: day.date }];

      // No batch id given: the default (a digest of the agent, the items and the key) is the same
      // for the retry, which finds the batch its first attempt started.
      proxy.cutAnswerOf('POST', '/batches');
      const batch = await client.startBatch({ agent: 'refund-reconciler', items });
      expect(batch).toMatchObject({ batchId: expect.stringMatching(/^batch-[0-9a-f]{16}$/), created: false, runs: [{ runId: `${batch.batchId}-0` }, { runId: `${batch.batchId}-1` }] });
      expect(asked('POST', '/batches')).toEqual([202, 202]);
      // Another batch under the taken id, its answer lost: asked again, the 409 it is.
      proxy.cutAnswerOf('POST', '/batches');
      await expect(client.startBatch({ agent: 'refund-reconciler', items: items.slice(1), batchId: batch.batchId })).rejects.toMatchObject({ name: 'RunsApiError', status: 409, message: expect.stringMatching(/^batchId: batch batch-\w+ exists/) });
      expect(asked('POST', '/batches')).toEqual([202, 202, 409, 409]);

      // Each item's run started by the one batch (its start recorded: no run pending).
      await whenChanged(stateDir, async () => (await direct.batch(batch.batchId))!.runs.every((run) => run.status !== 'pending'));
    } finally {
      await proxy.close();
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
    // One batch, and each item's run started once: one run per item, with one execution each.
    const batchFiles = readdirSync(join(stateDir, 'batches')).filter((file) => file.endsWith('.json') && !file.endsWith('.end.json'));
    expect(batchFiles).toHaveLength(1);
    for (const index of [0, 1]) {
      const { run } = await ledgerOf(stateDir, `${batchFiles[0]!.replace(/\.json$/, '')}-${index}`);
      expect(run?.executions).toHaveLength(1);
    }
  }, 120_000);
});
