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
 * answers what the first attempt answered (202: waiting for a second approval); the same person
 * approving again, another person's decision, and a first attempt's refusal stay refusals.
 */
const bob = 'bob@example.com';
let harness: Harness;
afterEach(async () => harness?.stack.close());

describe('a first approval of two whose answer was lost', () => {
  it('is answered as its first attempt was: the approval pending, waiting for a second person; the same person again and a decision by another throw', async () => {
    harness = await startHarness({ approvals: { approvers: [bob], policy: { separationOfDuties: false, secondApproverAboveMinor: 70_000 } } });
    const runs = new URL(harness.stack.endpoints.runs);
    const base = `${runs.origin}${runs.pathname.replace(/\/runs$/, '')}`;
    const direct: RunsClient = runsClient({ base });
    const proxy = await startProxy(runs.origin);
    try {
      // connect({ stateDir })'s client (it finds the API again), with the proxy in front of the API.
      const through = { base: `${proxy.origin}${new URL(base).pathname}` };
      const client = runsClient({ ...through, locate: () => through });
      const asked = (path: string) => proxy.seen.filter((request) => request.method === 'POST' && request.path === path).map((request) => request.status);

      await direct.start({ input: { date: sampleDay.date }, runId: 'two-lost', config: { approvalTimeoutSeconds: 3600 } });
      expect((await direct.wait('two-lost', { untilInput: true })).lifecycle).toBe('input_required');
      const large = (await direct.approvals('two-lost')).find((approval) => (approval.amount?.minor ?? 0) > 70_000)!;
      expect(large).toBeDefined();
      const path = `/approvals/${large.approvalId}`;

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

      // Another person completes it; the caller's approval asked again after a lost answer finds
      // the decision someone else made (its first approval the caller's): the 409 it is, not the caller's.
      const link = harness.requested[harness.approvals.findIndex((approval) => approval.approvalId === large.approvalId)]!.links.find((one) => one.approver === bob)!.url;
      expect(await postLinkDecision(link, { decision: 'approve' })).toMatchObject({ status: 200, body: { status: 'approved', decidedBy: bob, firstApproval: { by: localUser() } } });
      proxy.cutAnswerOf('POST', path);
      await expect(client.decide(large.approvalId, 'approve')).rejects.toMatchObject({ name: 'RunsApiError', status: 409, message: expect.stringMatching(/is already approved \(by bob@example.com\)/) });
      expect(asked(path)).toEqual([202, 403, 403, 409, 409]);

      // Decided once, by two people.
      const stored = harness.approvals.find((approval) => approval.approvalId === large.approvalId)!;
      expect(await harness.stack.ledger.getApproval(stored.runId, stored.turn, stored.call)).toMatchObject({ status: 'approved', decidedBy: bob, firstApproval: { by: localUser(), reason: 'checked' } });
    } finally {
      await proxy.close();
    }
  }, 60_000);
});
