import { afterEach, describe, expect, it } from 'vitest';
import { refundReconciler, type RefundWorld } from '../../agents/refund-reconciler/agent.dev.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { defineAgent, type AgentDefinition, type ModelPolicy } from '../../lambdas/define.js';
import { expiringApprovals } from '../support/manual-clock.js';
import { duplicatePayments, sampleDay, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * Every effect once across runs (issue 27, item 1), on the synthesized state machine: the refund
 * reconciler names its refunds and reviews by the refund request id (`idempotencyKey`), so the
 * ledger claims each once across the agent's runs, whatever run id or call asks.
 */

const plainRefunds = 16;
// Approvals expire at their 1 s deadline, on the test's clock (expiringApprovals): nobody decides them.
const config = { approvalTimeoutSeconds: 1 };

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

/** Review request ids the provider holds more than one review for (must be empty). */
function reviewedTwice(h: Harness): string[] {
  const seen = new Map<string, number>();
  for (const review of h.stack.world.payments.reviews()) seen.set(review.refundRequestId, (seen.get(review.refundRequestId) ?? 0) + 1);
  return [...seen].filter(([, count]) => count > 1).map(([id]) => id);
}

/** The issue_refund calls of these runs the provider refused (e.g. a second refund of a payment refunded in full). */
async function refusedRefunds(h: Harness, runIds: string[]) {
  const calls = await Promise.all(runIds.map(async (runId) => (await h.stack.ledger.listConversation(runId)).calls));
  return calls.flat().filter((call) => call.name === 'issue_refund' && call.outcome === 'error');
}

/** The refund reconciler without business keys: what the ledger did before (the control). */
const perRun: AgentDefinition = { ...refundReconciler, tools: refundReconciler.tools.map(({ idempotencyKey: _key, ...tool }) => tool) };

describe('every effect once, across runs', () => {
  it('pays each refund once when the same day runs twice at once under two run ids', async () => {
    harness = await startHarness(expiringApprovals());
    const runs = ['day-a', 'day-b'].map((runId) => harness!.run({ runId, input: { date: sampleDay.date }, config }));
    const finished = await Promise.all(runs);

    for (const run of finished) expect(run.status).toBe('SUCCEEDED');
    const { payments } = harness.stack.world;
    expect(payments.refunds()).toHaveLength(plainRefunds);
    expect(duplicatePayments(harness.stack)).toEqual([]);
    expect(reviewedTwice(harness)).toEqual([]);
    // No second request reached the provider: none was refused as more than is left to refund.
    expect(await refusedRefunds(harness, ['day-a', 'day-b'])).toEqual([]);
    // Each run decides every request. A refund one run asked for is issued in its record — paid by
    // it, or the other run's recorded result; a run whose lookup already shows the other run's
    // refund skips it (the two runs' turns, their calls side by side, interleave as they will).
    const issued = new Set<string>();
    for (const runId of ['day-a', 'day-b']) {
      const report = (await loadReport(harness.stack.ledger, runId, new Date(), refundReconciler))!;
      expect(report.summary, runId).toMatchObject({ undecided: 0 });
      const { calls } = await harness.stack.ledger.listConversation(runId);
      for (const call of calls.filter((record) => record.name === 'issue_refund' && record.outcome === 'ok')) {
        issued.add(String(call.args['refundRequestId']));
        const refund = payments.refunds().find((paid) => paid.refundRequestId === call.args['refundRequestId'])!;
        expect(call.idempotencyKey).toBe(`refund-reconciler:issue_refund:${refund.refundRequestId}`);
        expect(JSON.parse(call.result!)).toMatchObject({ id: refund.id });
      }
    }
    expect(issued.size).toBe(plainRefunds);
    // The ledger's claims name one holder each, completed.
    const effect = await harness.stack.ledger.getEffect(`refund-reconciler:issue_refund:${payments.refunds()[0]!.refundRequestId}`);
    expect(effect).toMatchObject({ status: 'completed', outcome: 'ok', attempts: 1 });
    expect(['day-a', 'day-b']).toContain(effect!.runId);
  });

  it('without business keys the same two runs send refunds twice (the control)', async () => {
    harness = await startHarness({ agent: perRun as AgentDefinition<any, any, RefundWorld>, ...expiringApprovals() });
    await Promise.all(['day-a', 'day-b'].map((runId) => harness!.run({ runId, input: { date: sampleDay.date }, config })));
    // Each run sends the refunds under keys of its own: the provider keeps the total within the
    // payment (a full refund asked again is refused as more than is left), so what shows is the
    // second request — paid twice, where a partial refund leaves room.
    const refused = await refusedRefunds(harness, ['day-a', 'day-b']);
    expect(refused.length).toBeGreaterThan(0);
  });

  it('two identical refund calls in one turn are one effect', async () => {
    // The model asks for every refund twice in the same turn (the same arguments, two tool call ids).
    const policy = refundReconciler.dev!.policy!;
    const twice: ModelPolicy = (request) => {
      const response = policy(request);
      return { ...response, content: response.content.flatMap((block) => (block.type === 'tool_use' && block.name === 'issue_refund' ? [block, { ...block, id: `${block.id}_again` }] : [block])) };
    };
    harness = await startHarness({ agent: { ...refundReconciler, dev: { ...refundReconciler.dev, policy: twice } }, ...expiringApprovals() });
    const finished = await harness.run({ runId: 'doubled', input: { date: sampleDay.date }, config });
    expect(finished.status).toBe('SUCCEEDED');
    expect(harness.stack.world.payments.refunds()).toHaveLength(plainRefunds);
    const { calls } = await harness.stack.ledger.listConversation('doubled');
    // Both calls of a pair recorded the one refund. (Where the pair's running total crosses the
    // approval threshold, the agent's rule sends the second call to a person, and its approval
    // expires here: it pays nothing either.)
    const refunds = calls.filter((call) => call.name === 'issue_refund' && call.outcome === 'ok');
    expect(refunds.length).toBeGreaterThan(plainRefunds);
    expect(duplicatePayments(harness.stack)).toEqual([]);
    expect(new Set(refunds.map((call) => JSON.parse(call.result!).id)).size).toBe(plainRefunds);
  });
});

describe('the price of a model the built-in table lacks (issue 27, item 4)', () => {
  const unpriced = { ...refundReconciler, model: 'sim:savepoint-sim-unpriced' };
  const price = { inputPerMTok: 1, outputPerMTok: 2, cacheWritePerMTok: 1, cacheReadPerMTok: 0.1 };

  it('is refused at start, the error naming the setting', async () => {
    harness = await startHarness({ agent: unpriced });
    const refused = await harness.run({ runId: 'unpriced', input: { date: sampleDay.date }, config });
    expect(refused.status).toBe('FAILED');
    expect(JSON.stringify(refused.history)).toMatch(/has no price in price table .*defineAgent\(\{ prices: \{ 'sim:savepoint-sim-unpriced'/);
  });

  it('is the agent’s own where it declares one (defineAgent prices): the run’s table and dollars are that price’s', async () => {
    const tenfold = { inputPerMTok: 30, outputPerMTok: 150, cacheWritePerMTok: 37.5, cacheReadPerMTok: 3 };
    harness = await startHarness({ agent: { ...refundReconciler, prices: { [refundReconciler.model]: tenfold } }, ...expiringApprovals() });
    const priced = await harness.run({ runId: 'priced', input: { date: sampleDay.date }, config });
    expect(priced.status).toBe('SUCCEEDED');
    const run = (await harness.stack.ledger.getRun('priced'))!;
    expect(run.priceTableVersion).toMatch(/^2026-11-01\+[0-9a-f]{8}$/);
    const { turns } = await harness.stack.ledger.listConversation('priced');
    // At least the input and output tokens at this price (cache reads and writes come on top).
    const micros = turns.reduce((sum, turn) => sum + turn.usage.input_tokens * tenfold.inputPerMTok + turn.usage.output_tokens * tenfold.outputPerMTok, 0);
    expect(run.costMicros).toBeGreaterThanOrEqual(Math.floor(micros * 0.99));
  });

  it('fails defineAgent when a price is invalid, naming the field', () => {
    expect(() => defineAgent({ ...unpriced, prices: { 'sim:savepoint-sim-unpriced': { ...price, inputPerMTok: -1 } } })).toThrow(/^defineAgent refund-reconciler: prices: /);
  });
});
