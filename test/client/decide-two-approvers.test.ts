import { afterEach, describe, expect, it } from 'vitest';
import { runsClient, type RunsClient } from '../../client/index.js';
import { localUser } from '../../local/services/approval-api.js';
import { startProxy } from '../support/cutting-proxy.js';
import { postLinkDecision } from '../support/agent-harness.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * A first approval of two, carried through as `decide` carries a decision (client/connect.ts), on
 * a deployment whose policy asks a second approver above $700. `savepoint serve` takes no approval
 * policy (its approvals are one person's: the machine's user), so the API here is a local stack's,
 * the same runs and approval APIs over loopback as serve's, with that policy; a real loopback
 * proxy cuts the answer of the first approval after the API recorded it. The client asked again
 * answers what the first attempt answered (202: waiting for a second approval), or, when another
 * person approved in between, the approval they completed on it; the same person approving again,
 * another person's rejection, and a first attempt's refusal stay refusals.
 */
const bob = 'bob@example.com';
let harness: Harness;
let proxy: Awaited<ReturnType<typeof startProxy>> | undefined;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await harness?.stack.close();
});

/**
 * A run of the sample day waiting on its approval over $700 (two people's, by the policy), with a
 * client of its API as `connect({ stateDir })` makes one (it finds the API again), through the proxy.
 */
async function waitingOnTwo(runId: string) {
  harness = await startHarness({ approvals: { approvers: [bob], policy: { separationOfDuties: false, secondApproverAboveMinor: 70_000 } } });
  const runs = new URL(harness.stack.endpoints.runs);
  const base = `${runs.origin}${runs.pathname.replace(/\/runs$/, '')}`;
  const direct: RunsClient = runsClient({ base });
  proxy = await startProxy(runs.origin);
  const through = { base: `${proxy.origin}${new URL(base).pathname}` };
  const client = runsClient({ ...through, locate: () => through });
  const seen = proxy.seen;
  const asked = (path: string) => seen.filter((request) => request.method === 'POST' && request.path === path).map((request) => request.status);

  await direct.start({ input: { date: sampleDay.date }, runId, config: { approvalTimeoutSeconds: 3600 } });
  expect((await direct.wait(runId, { untilInput: true })).lifecycle).toBe('input_required');
  const large = (await direct.approvals(runId)).find((approval) => (approval.amount?.minor ?? 0) > 70_000)!;
  expect(large).toBeDefined();
  const path = `/approvals/${large.approvalId}`;
  const bobsLink = harness.requested[harness.approvals.findIndex((approval) => approval.approvalId === large.approvalId)]!.links.find((one) => one.approver === bob)!.url;
  const stored = async () => {
    const approval = harness.approvals.find((one) => one.approvalId === large.approvalId)!;
    return harness.stack.ledger.getApproval(approval.runId, approval.turn, approval.call);
  };
  return { proxy, direct, client, asked, large, path, bobsLink, stored };
}

describe('a first approval of two whose answer was lost', () => {
  it('is answered as its first attempt was: the approval pending, waiting for a second person; the same person again and a first attempt refused throw', async () => {
    const { proxy, direct, client, asked, large, path, bobsLink, stored } = await waitingOnTwo('two-lost');

    // The first approval is recorded (202), its answer cut; asked again, the API refuses the same
    // person's second approval (403), saying the first is the caller's: the call's success.
    proxy.cutAnswerOf('POST', path);
    const first = await client.decide(large.approvalId, 'approve', { reason: 'checked' });
    expect(asked(path)).toEqual([202, 403]);
    const recorded = (await direct.approvals('two-lost')).find((approval) => approval.approvalId === large.approvalId)!;
    expect(recorded).toMatchObject({ status: 'pending', firstApproval: { by: localUser(), reason: 'checked' } });
    // What the first attempt answered: the approval as recorded, nothing delivered, a second approval awaited.
    expect(first).toEqual({ ...recorded, delivered: false, waitingForSecond: true });

    // The same person approving again, answered at once: a first attempt's 403 throws, asked once.
    await expect(client.decide(large.approvalId, 'approve')).rejects.toMatchObject({ name: 'RunsApiError', status: 403, message: expect.stringMatching(/approved already; another person must approve/) });
    expect(asked(path)).toEqual([202, 403, 403]);

    // Another person completes it. The caller approving now, a first attempt (nothing lost): the
    // 409 throws, though the approval is approved on the caller's first approval; asked once.
    expect(await postLinkDecision(bobsLink, { decision: 'approve' })).toMatchObject({ status: 200, body: { status: 'approved', decidedBy: bob, firstApproval: { by: localUser() } } });
    await expect(client.decide(large.approvalId, 'approve')).rejects.toMatchObject({ name: 'RunsApiError', status: 409, message: expect.stringMatching(/is already approved \(by bob@example.com\)/) });
    expect(asked(path)).toEqual([202, 403, 403, 409]);

    // Decided once, by two people.
    expect(await stored()).toMatchObject({ status: 'approved', decidedBy: bob, firstApproval: { by: localUser(), reason: 'checked' } });
  }, 60_000);

  it('completed by another person before it is asked again: answered with the approval they completed on it, delivered once', async () => {
    const { proxy, client, asked, large, path, bobsLink, stored } = await waitingOnTwo('two-completed');

    // The first approval is recorded (202), its answer cut; the client's second attempt is held at
    // the proxy until bob, the second person, has approved through his link.
    proxy.cutAnswerOf('POST', path);
    const retry = proxy.hold('POST', path);
    const decided = client.decide(large.approvalId, 'approve', { reason: 'checked' });
    await retry.reached;
    expect(await postLinkDecision(bobsLink, { decision: 'approve' })).toMatchObject({ status: 200, body: { status: 'approved', decidedBy: bob, delivered: true } });
    retry.release();

    // The 409 names the approval approved by bob on the caller's first approval: this call's
    // approval landed and counted, and the call answers that approval (bob's delivery made it; the
    // retry had none to make).
    const answered = await decided;
    expect(asked(path)).toEqual([202, 409]);
    expect(answered).toMatchObject({ status: 'approved', decidedBy: bob, firstApproval: { by: localUser(), reason: 'checked' }, delivered: false });
    expect(answered.waitingForSecond).toBeUndefined();
    expect(await stored()).toMatchObject({ status: 'approved', decidedBy: bob, firstApproval: { by: localUser(), reason: 'checked' } });
  }, 60_000);

  it('rejected by another person before it is asked again: the 409 throws (not the decision it asked for)', async () => {
    const { proxy, client, asked, large, path, bobsLink, stored } = await waitingOnTwo('two-rejected');
    proxy.cutAnswerOf('POST', path);
    const retry = proxy.hold('POST', path);
    const decided = client.decide(large.approvalId, 'approve');
    await retry.reached;
    expect(await postLinkDecision(bobsLink, { decision: 'reject', reason: 'too much' })).toMatchObject({ status: 200, body: { status: 'rejected', decidedBy: bob } });
    retry.release();
    await expect(decided).rejects.toMatchObject({ name: 'RunsApiError', status: 409, message: expect.stringMatching(/is already rejected \(by bob@example.com\)/) });
    expect(asked(path)).toEqual([202, 409]);
    expect(await stored()).toMatchObject({ status: 'rejected', decidedBy: bob, firstApproval: { by: localUser() } });
  }, 60_000);
});
