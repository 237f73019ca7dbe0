import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundReconciler, startRefundWorld } from '../../agents/refund-reconciler/agent.dev.js';
import { verifyRun } from '../../lambdas/ledger/seal.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { replayRun } from '../../local/replay/index.js';
import { postDecision, startAgentHarness } from '../support/agent-harness.js';
import { sampleDay, sampleInput, type Harness } from '../support/refund-harness.js';

// Forks of the sample day on the whole local stack: the prefix copied from the parent's ledger,
// the lineage sealed on both runs, and the payments provider's journal as the judge of effects.
// The parent pays its refunds in one world; the forks run on the same ledger (the state
// directory, reopened) against a fresh world that has paid nothing, so a write the fork repeats
// would be paid there — unless it is answered from the parent's record.
describe('savepoint fork of a refund run', () => {
  let harness: Harness;
  let paid: number;
  let turns: number;
  const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-fork-'));
  const stackOn = async () =>
    startAgentHarness({
      agent: refundReconciler,
      stateDir,
      ownedWorld: await startRefundWorld({ day: sampleDay, failRate: 0, seed: 1, now: () => new Date() }),
      onAsked: (approval, stack) => void postDecision(stack, approval.approvalId, { decision: 'approve', reason: 'test' }),
    });
  beforeAll(async () => {
    const first = await stackOn();
    expect((await first.run({ runId: 'parent', input: sampleInput })).status).toBe('SUCCEEDED');
    paid = first.stack.world.payments.refunds().length;
    turns = (await first.stack.ledger.listConversation('parent')).turns.length;
    await first.stack.close();
    expect(paid).toBeGreaterThan(0);
    harness = await stackOn();
    expect(harness.stack.world.payments.refunds().length).toBe(0);
  });
  afterAll(async () => {
    await harness?.stack.close();
    rmSync(stateDir, { recursive: true, force: true });
  });

  const fork = async (runId: string, fork: Record<string, unknown>) => {
    const { executionArn } = harness.stack.engine.startExecution({ name: runId, input: { runId, input: sampleInput, fork: { from: 'parent', ...fork } } });
    await waitForChain(harness.stack.engine, harness.stack.ledger, runId, executionArn);
    return (await harness.stack.ledger.getRun(runId))!;
  };

  it('reuses every refund the parent paid: none is paid again, and the lineage verifies on both runs', async () => {
    const model = harness.stack.model.requestCount();
    const run = await fork('fork-reuse', { at: 3 });
    expect(run.status).toBe('succeeded');
    expect(harness.stack.world.payments.refunds().length).toBe(0);
    expect(run.forkedFrom).toEqual({ runId: 'parent', turn: 3, effects: 'reuse' });
    expect((await harness.stack.ledger.getRun('parent'))!.forks).toContainEqual({ runId: 'fork-reuse', turn: 3 });
    // Turns 1 and 2 were copied, not asked for: the model answered only the fork's own turns.
    const [parentLog, forkLog] = [await harness.stack.ledger.listConversation('parent'), await harness.stack.ledger.listConversation('fork-reuse')];
    expect(forkLog.turns.slice(0, 2).map((t) => t.content)).toEqual(parentLog.turns.slice(0, 2).map((t) => t.content));
    expect(harness.stack.model.requestCount() - model).toBe(forkLog.turns.length - 2);
    // Its refunds carry the parent's results: the same refund ids.
    const refunds = (log: typeof parentLog) => log.calls.filter((c) => c.name === 'issue_refund' && c.outcome === 'ok').map((c) => c.result);
    expect(refunds(forkLog)).toEqual(refunds(parentLog));
    // Nobody was asked to approve a write the fork answered from the parent's record (issue 35 item 6),
    // though the parent asked for some of those from turn 3 on.
    expect(harness.approvals.filter((approval) => approval.runId === 'fork-reuse')).toEqual([]);
    expect(parentLog.approvals.filter((approval) => approval.turn >= 3).length).toBeGreaterThan(0);
    // The fork inherits what the parent spent before turn 3 and adds its own.
    expect(run.steps).toBe((await harness.stack.ledger.getRun('parent'))!.steps);
    for (const id of ['parent', 'fork-reuse']) expect((await verifyRun(harness.stack.ledger, id)).problems).toEqual([]);
  });

  it('leaves the payments journal unchanged on a dry fork at every kind of turn, recording what each write would have done', async () => {
    // A fork at turn `at` copies the turns before it and runs the rest dry: what it does at the
    // boundary depends on what the last copied turn and its first own turn call (which tools, an
    // approval asked), not on how many turns came before. One fork for each kind of boundary the
    // parent has (the first turn of each: 13 of the sample day's 29 turns), not one per turn.
    const { turns: parentTurns, calls: parentCalls, approvals: parentApprovals } = await harness.stack.ledger.listConversation('parent');
    const kindOf = (turn: number) =>
      `${[...new Set(parentCalls.filter((c) => c.turn === turn).map((c) => c.name))].sort().join('+')}${parentApprovals.some((a) => a.turn === turn) ? ' asked' : ''}`;
    const boundaries = new Map<string, number>();
    for (const { turn } of parentTurns) {
      const boundary = `${turn === 1 ? '(start)' : kindOf(turn - 1)} | ${kindOf(turn)}`;
      if (!boundaries.has(boundary)) boundaries.set(boundary, turn);
    }
    const forkTurns = [...boundaries.values()];
    // Every kind of turn begins some fork: the first, one asking for an approval, the last.
    expect(forkTurns).toEqual(expect.arrayContaining([1, 3, turns]));
    expect(forkTurns.some((turn) => parentApprovals.some((a) => a.turn === turn))).toBe(true);
    expect(new Set(parentTurns.map(({ turn }) => kindOf(turn)))).toEqual(new Set(forkTurns.map(kindOf)));
    for (const at of forkTurns) {
      const run = await fork(`fork-dry-${at}`, { at, effects: 'dry' });
      expect(run.status, `fork at ${at}`).toBe('succeeded');
      expect(harness.stack.world.payments.refunds().length, `fork at ${at}`).toBe(0);
    }
    // Nobody was asked to approve a write a dry fork never sends (issue 35 item 6).
    expect(harness.approvals.filter((approval) => approval.runId.startsWith('fork-dry-'))).toEqual([]);
    const { calls } = await harness.stack.ledger.listConversation('fork-dry-1');
    const refunds = calls.filter((c) => c.name === 'issue_refund' && c.outcome === 'ok');
    expect(refunds.length).toBe(paid);
    for (const refund of refunds) expect(JSON.parse(refund.result!)).toMatchObject({ wouldHave: { tool: 'issue_refund', args: refund.args }, sent: false });
    // Its report counts none of them as issued, and sets what it would have done beside it.
    const report = (await loadReport(harness.stack.ledger, 'fork-dry-1', new Date(), refundReconciler))!;
    expect(report.summary).toMatchObject({ issued: 0, issuedCents: 0 });
    expect(report.wouldHave).toMatchObject({ issued: paid });
  });

  it('pays nothing on this world either when the same day runs as a new run: its refunds are claimed by business key across runs (issue 27)', async () => {
    expect((await harness.run({ runId: 'control', input: sampleInput })).status).toBe('SUCCEEDED');
    expect(harness.stack.world.payments.refunds().length).toBe(0);
    const { calls } = await harness.stack.ledger.listConversation('control');
    // Each refund is answered with the parent's recorded one (a refund id of the parent's world), not skipped.
    const answered = calls.filter((c) => c.name === 'issue_refund' && c.outcome === 'ok');
    expect(answered.length).toBe(paid);
  });

  it('replays a fork identically (its copied turns copied again, its own answered), and names a changed prompt at its first own turn', async () => {
    // Forks of its own (a reusing one and a dry one), not the other tests'.
    expect((await fork('replayed-reuse', { at: 3 })).status).toBe('succeeded');
    expect((await fork('replayed-dry', { at: 3, effects: 'dry' })).status).toBe('succeeded');
    for (const runId of ['replayed-reuse', 'replayed-dry']) {
      const result = await replayRun({ agent: refundReconciler, source: harness.stack.ledger, runId });
      expect(result.divergence, `${runId}: ${JSON.stringify(result.divergence)}`).toBeUndefined();
      expect(result.live).toEqual({ model: 0, tools: 0 });
      // Answered from the ledger: the fork's own turns (3 on), not the 2 its StartRun copied.
      const own = (await harness.stack.ledger.listConversation(runId)).turns.filter((turn) => turn.turn >= 3).length;
      expect(result.answered.turns, runId).toBe(own);
    }
    const changed = { ...refundReconciler, system: `${refundReconciler.system}\nNever refund more than $100.` };
    const result = await replayRun({ agent: changed, source: harness.stack.ledger, runId: 'replayed-reuse' });
    expect(result.divergence).toMatchObject({ turn: 3, what: 'model request', why: 'the system prompt changed' });
    // Diverged at its first own turn: nothing was answered before it.
    expect(result.answered.turns).toBe(0);
  });

  it('refuses a fork of a run that does not exist, naming the field', async () => {
    const { executionArn } = harness.stack.engine.startExecution({ name: 'fork-none', input: { runId: 'fork-none', input: sampleInput, fork: { from: 'nobody', at: 1 } } });
    const ended = await harness.stack.engine.waitForExecution(executionArn);
    expect(ended.status).toBe('FAILED');
    expect(ended.cause).toMatch(/fork\.from: no run nobody/);
  });
});
