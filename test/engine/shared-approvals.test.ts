import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refundReconciler, startRefundWorld } from '../../agents/refund-reconciler/agent.dev.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { replayRun } from '../../local/replay/index.js';
import { verifyRun } from '../../lambdas/ledger/seal.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import { postDecision, startAgentHarness, waitFor } from '../support/agent-harness.js';
import { duplicatePayments, sampleDay, sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * One approval per effect (issue 35 item 6): two runs of the same day at once make the same
 * refunds — the same business keys (`refundRequestId`), the same arguments. Each refund that needs
 * a person's approval is asked for once: the run that asks first leads, the other follows its
 * request (ledger/effect-approvals.ts) and is told nobody; once the one request is decided, both
 * runs go on, and each refund is paid once.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const runs = ['shared-a', 'shared-b'] as const;

describe('two concurrent runs of the same business keys', () => {
  it('send one approval request per effect; both runs proceed once it is decided, and each refund is paid once', async () => {
    let harness: Harness;
    const other = (runId: string) => runs.find((id) => id !== runId)!;
    // Each request a person is sent is decided only once the other run has asked for the same
    // effect too: the runs are concurrent at every approval (neither finds it decided already).
    const decideWhenShared = (approval: ApprovalRecord) =>
      void (async () => {
        await waitFor(async () => (await harness.stack.ledger.listConversation(other(approval.runId))).approvals.some((own) => own.effect?.key === approval.effect?.key));
        await postDecision(harness.stack, approval.approvalId, { decision: 'approve', reason: 'checked the order' });
      })();
    harness = await startHarness({ onAsked: (approval) => decideWhenShared(approval) });
    cleanups.push(() => harness.stack.close());

    const finished = await Promise.all(runs.map((runId) => harness.run({ runId, input: sampleInput }, runId)));
    expect(finished.map((run) => run.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);

    const logs = await Promise.all(runs.map((runId) => harness.stack.ledger.listConversation(runId)));
    const [first, second] = logs.map((log) => log.approvals);
    expect(first!.length).toBeGreaterThan(0);
    expect(second!.length).toBe(first!.length);
    // One request sent per effect: as many as one run's approvals, each asked of a person once.
    expect(harness.requested).toHaveLength(first!.length);
    const effects = (approvals: ApprovalRecord[]) => approvals.map((approval) => approval.effect?.key).sort();
    expect(effects(harness.approvals)).toEqual(effects(first!));
    expect(new Set(effects(harness.approvals)).size).toBe(harness.approvals.length);
    // Every approval is the one asked, or follows it; all approved, the followers with the leader's signed decision.
    for (const approval of [...first!, ...second!]) {
      const asked = harness.approvals.some((told) => told.approvalId === approval.approvalId);
      expect(asked || harness.approvals.some((told) => told.approvalId === approval.sharedWith?.approvalId), approval.approvalId).toBe(true);
      expect(approval.status).toBe('approved');
      if (!asked) expect(approval.sharedDecision?.decisionMac).toBeDefined();
    }
    for (const runId of runs) {
      const report = (await loadReport(harness.stack.ledger, runId, new Date(), refundReconciler))!;
      expect(report.approvals).toMatchObject({ approved: first!.length, unverified: 0, pending: 0, expired: 0 });
      expect((await verifyRun(harness.stack.ledger, runId)).problems).toEqual([]);
    }
    // The effect happened once: each refund paid once, as a single run pays them.
    expect(duplicatePayments(harness.stack)).toEqual([]);
    const paid = harness.stack.world.payments.refunds();
    const issued = logs[0]!.calls.filter((call) => call.name === 'issue_refund' && call.outcome === 'ok').length;
    expect(paid).toHaveLength(issued);
    // Each run replays identically from its own records, the follower's shared decisions included.
    for (const runId of runs) {
      const replayed = await replayRun({ agent: refundReconciler, source: harness.stack.ledger, runId });
      expect(replayed.divergence, `${runId}: ${JSON.stringify(replayed.divergence)}`).toBeUndefined();
    }
  });

  it("asks nobody again when the other run's request was decided before it asked: the decision is delivered at once", async () => {
    // The second run on the same ledger (the state directory, reopened) against a fresh world that
    // has paid nothing: its model makes the same refunds again, and each is asked for.
    const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-shared-'));
    cleanups.push(async () => rmSync(stateDir, { recursive: true, force: true }));
    const stackOn = async () =>
      startAgentHarness({
        agent: refundReconciler,
        stateDir,
        ownedWorld: await startRefundWorld({ day: sampleDay, failRate: 0, seed: 1, now: () => new Date() }),
        onAsked: (approval, stack) => void postDecision(stack, approval.approvalId, { decision: 'approve', reason: 'checked' }),
      });
    const before = await stackOn();
    expect((await before.run({ runId: 'first-day', input: sampleInput }, 'first-day')).status).toBe('SUCCEEDED');
    const asked = before.requested.length;
    expect(asked).toBeGreaterThan(0);
    await before.stack.close();
    const harness = await stackOn();
    cleanups.push(() => harness.stack.close());
    expect((await harness.run({ runId: 'again-day', input: sampleInput }, 'again-day')).status).toBe('SUCCEEDED');
    expect(harness.requested).toEqual([]);
    const { approvals } = await harness.stack.ledger.listConversation('again-day');
    expect(approvals).toHaveLength(asked);
    for (const approval of approvals) expect(approval).toMatchObject({ status: 'approved', sharedWith: { runId: 'first-day' } });
    expect((await loadReport(harness.stack.ledger, 'again-day', new Date(), refundReconciler))!.approvals).toMatchObject({ approved: asked, unverified: 0 });
    // Nothing paid in this world: each refund was the first run's (the effect's claim across runs).
    expect(harness.stack.world.payments.refunds()).toEqual([]);
  });
});
