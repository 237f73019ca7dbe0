import { afterEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { duplicatePayments, sampleDay, startHarness, type Harness } from '../support/refund-harness.js';
import { postDecision, postLinkDecision, waitFor, wake } from '../support/agent-harness.js';
import { expiringApprovals, manualClock } from '../support/manual-clock.js';

/**
 * The clock only the test moves: the run's own work (real seconds on a busy machine) takes no
 * time on it, so the wall-clock budget sees only the waits.
 */
const testClock = () => manualClock(Date.parse('2026-11-29T02:00:00Z'));

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

describe('waiting for a person is not work', () => {
  it('pays a refund approved at 29 s of a 20 s wall-clock budget, and shows the wait apart', async () => {
    const clock = testClock();
    harness = await startHarness({ clock });
    const { stack } = harness;
    const decisions = (async () => {
      // The first through its signed link (a person), the second through the API (the local user).
      await waitFor(() => harness!.requested[0]);
      clock.advance(29_000);
      // While it waits, its report shows the wait so far as waiting for people, not as the run's own time.
      const waiting = (await loadReport(stack.ledger, 'wall-wait', clock.now(), refundReconciler))!;
      expect(waiting.approvals.pending).toBe(1);
      expect(waiting.guards.approvalWaitSeconds).toBeGreaterThanOrEqual(29);
      expect(waiting.guards.wallSeconds.used).toBeLessThan(20);
      const first = await postLinkDecision(harness!.requested[0]!.links[0]!.url, { decision: 'approve', reason: 'checked the payment' });
      expect(first).toMatchObject({ status: 200, body: { status: 'approved', decidedVia: 'link', delivered: true } });
      const second = await waitFor(() => harness!.approvals[1]);
      clock.advance(29_000);
      expect(await postDecision(stack, second.approvalId, { decision: 'approve' })).toMatchObject({ status: 200, body: { status: 'approved', decidedVia: 'cli' } });
    })();
    const finished = await harness.run({ runId: 'wall-wait', input: { date: sampleDay.date }, config: { maxWallSeconds: 20, approvalTimeoutSeconds: 3600 } });
    await decisions;

    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'succeeded', reason: 'done' });
    const approved = harness.approvals.map((approval) => approval.details!['refundRequest']);
    const paid = stack.world.payments.refunds().filter((refund) => approved.includes(refund.refundRequestId));
    expect(paid).toHaveLength(2);
    expect(duplicatePayments(stack)).toEqual([]);

    const report = (await loadReport(stack.ledger, 'wall-wait', clock.now(), refundReconciler))!;
    expect(report.approvals).toMatchObject({ approved: 2, pending: 0 });
    expect(report.guards.approvalWaitSeconds).toBeGreaterThanOrEqual(58);
    expect(report.guards.wallSeconds.used).toBeLessThan(20);
    expect(report.guardEvents).toEqual([]);
    const recorded = await stack.ledger.getApproval('wall-wait', harness.approvals[0]!.turn, harness.approvals[0]!.call);
    expect(recorded).toMatchObject({ decidedBy: harness.requested[0]!.links[0]!.approver, decidedVia: 'link', reason: 'checked the payment' });
    expect(recorded!.waitedMs).toBe(29_000);
  }, 180_000);

  it('refuses at start an approval timeout the state machine cannot wait for, naming the setting', async () => {
    harness = await startHarness();
    const finished = await harness.run({ runId: 'too-long', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 7 * 24 * 3600, maxWallSeconds: 4 * 24 * 3600 } });
    expect(finished.status).toBe('FAILED');
    expect(finished.error).toBe('Agent.InvalidInput');
    expect(finished.cause).toMatch(/config\.approvalTimeoutSeconds: a decideBy 604800 s after a request made within maxWallSeconds \(345600 s\) falls after the execution's own timeout \(864000 s\)/);
    expect(await stack().ledger.getRun('too-long')).toBeUndefined();
  });
});

describe("an approval's deadline", () => {
  it('refuses a decision after it by any route, 410 and nothing recorded, before its expiry has run; the expiry then escalates the refund, unpaid', async () => {
    // The deadline passes on the clock the steps read while the expiry's timer has not fired yet:
    // on AWS the sweep runs once a minute, and no engine runs it while a local run is down.
    const timers = testClock();
    let late = 0;
    const clock = { now: () => new Date(timers.now().getTime() + late), after: timers.after };
    // The approvals after the first expire at their deadlines on the clock: nobody decides them.
    harness = await startHarness({ ...expiringApprovals({ clock: timers, expires: () => harness!.approvals.length > 1 }), clock });
    const { stack } = harness;
    const finished = harness.run({ runId: 'past-deadline', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
    const approval = await waitFor(() => harness!.approvals[0]);
    const [link] = harness.requested[0]!.links;
    late = Date.parse(approval.decideBy) - timers.now().getTime();

    const expired = { status: 410, body: { message: `approval ${approval.approvalId} expired at ${approval.decideBy} (its deadline passed): nobody decides it now` } };
    expect(await postDecision(stack, approval.approvalId, { decision: 'approve' })).toMatchObject(expired);
    expect(await postDecision(stack, approval.approvalId, { decision: 'reject' })).toMatchObject(expired);
    expect(await postLinkDecision(link!.url, { decision: 'approve' })).toMatchObject({ status: 410, body: { message: expect.stringMatching(/^link: expired at/) } });
    const unchanged = await stack.ledger.getApproval(approval.runId, approval.turn, approval.call);
    expect(unchanged).toMatchObject({ status: 'pending' });
    expect([unchanged!.decidedBy, unchanged!.firstApproval, unchanged!.usedLinks]).toEqual([undefined, undefined, undefined]);

    timers.advance(late); // the expiry's timer: the run goes on as for an approval nobody decided
    expect(JSON.parse((await finished).output!)).toMatchObject({ status: 'succeeded' });
    expect(await stack.ledger.getApproval(approval.runId, approval.turn, approval.call)).toMatchObject({ status: 'expired', decidedVia: 'timeout' });
    const request = approval.details!['refundRequest'];
    expect(stack.world.payments.refunds().filter((refund) => refund.refundRequestId === request)).toEqual([]);
    expect(stack.world.payments.reviews().filter((review) => review.refundRequestId === request)).toHaveLength(1);
  }, 180_000);
});

describe('a decision recorded but not delivered', () => {
  /**
   * A run waiting on its first approval, decided once through the API, whose callback records the
   * decision and then fails before the execution hears it (here its read of the task token; on AWS
   * as well a throttled SendTaskSuccess, a timeout after the write): answered 500.
   */
  async function decidedNotDelivered(runId: string) {
    const tokenRead: TokenReadFailure = { armed: false, failed: false };
    const clock = testClock();
    // The approvals after the first expire at their deadlines on the clock: nobody decides them.
    harness = await startHarness({ ...expiringApprovals({ clock, expires: () => harness!.approvals.length > 1 }), decorateLedger: failingTokenRead(tokenRead) });
    const { stack } = harness;
    const finished = harness.run({ runId, input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
    const approval = await waitFor(() => harness!.approvals[0]);
    tokenRead.armed = true;
    expect(await postDecision(stack, approval.approvalId, { decision: 'approve' })).toMatchObject({ status: 500 });
    expect(tokenRead.failed).toBe(true);
    return { stack, clock, finished, approval, key: [approval.runId, approval.turn, approval.call] as const };
  }

  /** The run went on with the decision: the approved refund paid once. */
  async function paidOnce({ stack, finished, approval }: Awaited<ReturnType<typeof decidedNotDelivered>>) {
    expect(JSON.parse((await finished).output!)).toMatchObject({ status: 'succeeded' });
    const request = approval.details!['refundRequest'];
    expect(stack.world.payments.refunds().filter((refund) => refund.refundRequestId === request)).toHaveLength(1);
    expect(duplicatePayments(stack)).toEqual([]);
  }

  it('is delivered when the decider tries again: the run goes on, not waits for the backstop', async () => {
    const decided = await decidedNotDelivered('undelivered');
    expect(await decided.stack.ledger.getApproval(...decided.key)).toMatchObject({ status: 'approved' });
    expect(await postDecision(decided.stack, decided.approval.approvalId, { decision: 'approve' })).toMatchObject({ status: 409, body: { message: expect.stringMatching(/is already approved/) } });
    await paidOnce(decided);
  }, 30_000);

  it('is delivered by the next sweep when nobody decides again: the run goes on a minute later, not at the backstop', async () => {
    const decided = await decidedNotDelivered('decision-undelivered');
    const { stack, clock, approval, key } = decided;
    // Recorded, and owed to the run: listed for the sweep until it is delivered.
    expect(await stack.ledger.getApproval(...key)).toMatchObject({ status: 'approved', undelivered: true });
    expect((await stack.ledger.listPendingApprovals({ undelivered: true })).map((listed) => listed.approvalId)).toEqual([approval.approvalId]);
    clock.advance(60_000); // the next sweep

    await paidOnce(decided);
    const recorded = await stack.ledger.getApproval(...key);
    expect(recorded).toMatchObject({ status: 'approved' });
    expect(recorded!.undelivered).toBeUndefined();
    expect(await stack.ledger.listPendingApprovals({ undelivered: true })).toEqual([]);
  }, 60_000);
});

describe('an expiry recorded but not delivered', () => {
  it('is delivered by the next sweep: the run escalates a minute later, not at the backstop', async () => {
    // The sweep records the expiry, then fails before the execution hears it (here its read of the
    // task token; on AWS as well a throttled SendTaskFailure, a timeout after the write).
    const tokenRead: TokenReadFailure = { armed: true, failed: false };
    const clock = testClock();
    const logged: string[] = [];
    harness = await startHarness({ ...expiringApprovals({ clock }), decorateLedger: failingTokenRead(tokenRead), log: (line: string) => (logged.push(line), wake()) });
    const { stack } = harness;
    const finished = harness.run({ runId: 'expiry-undelivered', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
    const approval = await waitFor(() => harness!.approvals[0]);
    const key = [approval.runId, approval.turn, approval.call] as const;

    await waitFor(async () => tokenRead.failed && (await stack.ledger.getApproval(...key))?.status === 'expired');
    await waitFor(() => logged.some((line) => /approval expiry failed: .*ProvisionedThroughputExceededException/.test(line)));
    clock.advance(60_000); // the next sweep

    expect(JSON.parse((await finished).output!)).toMatchObject({ status: 'succeeded' });
    const recorded = await stack.ledger.getApproval(...key);
    expect(recorded).toMatchObject({ status: 'expired', decidedVia: 'timeout' });
    expect(recorded!.undelivered).toBeUndefined();
    expect(await stack.ledger.listPendingApprovals({ undelivered: true })).toEqual([]);
    const request = approval.details!['refundRequest'];
    expect(stack.world.payments.refunds().filter((refund) => refund.refundRequestId === request)).toEqual([]);
    expect(stack.world.payments.reviews().filter((review) => review.refundRequestId === request)).toHaveLength(1);
  }, 60_000);
});

/** Whether the next read of a task token fails (`armed`: once), and whether one did. */
interface TokenReadFailure {
  armed: boolean;
  failed: boolean;
}

/** The ledger with its next task-token read failing once while `failure.armed`, as a throttled read would. */
function failingTokenRead(failure: TokenReadFailure) {
  return (ledger: Ledger): Ledger =>
    new Proxy(ledger, {
      get: (target, method: keyof Ledger) =>
        method === 'getTaskToken' && failure.armed
          ? () => {
              failure.armed = false;
              failure.failed = true;
              return Promise.reject(new Error('ProvisionedThroughputExceededException'));
            }
          : (target[method] as (...args: unknown[]) => unknown).bind(target),
    });
}

const stack = () => harness!.stack;
