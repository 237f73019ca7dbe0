import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../../lambdas/define.js';
import type { MessageRequest } from '../../lambdas/records/messages.js';
import { postDecision, startAgentHarness, waitFor, type AgentHarness } from '../support/agent-harness.js';

/**
 * A write tool's declared aggregate (an amount, the key it adds up by, a threshold) across the
 * agent's runs: reserved in the ledger with a conditional write before each call is sent, so two
 * runs racing cannot each stay under the threshold; and the agent's `maxUnapprovedPerRun`.
 */

let harness: AgentHarness<any> | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

const paid: { account: string; cents: number }[] = [];
const pay = defineTool({
  name: 'pay',
  description: 'Pays an account.',
  input: z.object({ account: z.string(), cents: z.number().int().positive() }),
  effect: 'write',
  aggregate: { key: (args) => args.account, amount: (args) => args.cents, threshold: 50_000, currency: 'usd' },
  describe: (args) => `pay ${args.cents} to ${args.account}`,
  execute: async (args) => (paid.push(args), { paid: args.account, cents: args.cents }),
});

/** The same, named by its invoice: one effect across runs (a re-run pays once, and adds once). */
const payInvoice = defineTool({
  name: 'pay_invoice',
  description: 'Pays an invoice of an account.',
  input: z.object({ invoice: z.string(), account: z.string(), cents: z.number().int().positive() }),
  effect: 'write',
  idempotencyKeys: true,
  idempotencyKey: (args) => args.invoice,
  aggregate: { key: (args) => args.account, amount: (args) => args.cents, threshold: 50_000, currency: 'usd' },
  execute: async (args) => (paid.push({ account: args.account, cents: args.cents }), { paid: args.invoice }),
});

/** A model that asks, turn after turn, for the payments of its run input, then stops. */
const paying = (request: MessageRequest) => {
  const turn = request.messages.filter((message) => message.role === 'assistant').length;
  const first = request.messages[0]!.content;
  const text = typeof first === 'string' ? first : first.map((block) => (block.type === 'text' ? block.text : '')).join('');
  const plan = JSON.parse(text.split('Pay these: ')[1]!.split(' (end)')[0]!) as { account: string; cents: number; invoice?: string }[];
  const next = plan[turn];
  if (!next) return { content: [{ type: 'text' as const, text: 'Done.' }], stop_reason: 'end_turn' as const };
  return { content: [{ type: 'tool_use' as const, id: `toolu_${turn + 1}`, name: next.invoice ? 'pay_invoice' : 'pay', input: next }], stop_reason: 'tool_use' as const };
};

const agentWith = (approvals?: { maxUnapprovedPerRun: number }) =>
  defineAgent({
    name: 'aggregate-payments',
    model: 'sim:savepoint-sim-1',
    system: 'Pay the accounts.',
    input: z.object({ payments: z.array(z.object({ account: z.string(), cents: z.number(), invoice: z.string().optional() })) }),
    prompt: (input) => `Pay these: ${JSON.stringify(input.payments)} (end)`,
    tools: [pay, payInvoice],
    ...(approvals && { approvals }),
    dev: { policy: paying },
  });

describe('an aggregate across runs', () => {
  it('lets only one of two runs racing stay under the threshold: the other is not sent, and a person is asked with the total across runs; rejected, it is never sent', async () => {
    paid.length = 0;
    harness = await startAgentHarness({ agent: agentWith() });
    const h = harness;
    // Each run alone stays under $500 for acme ($300); together they would not.
    const input = { payments: [{ account: 'acme', cents: 30_000 }] };
    const config = { approvalTimeoutSeconds: 3600 };
    const runs = Promise.all([h.run({ runId: 'race-a', input, config }), h.run({ runId: 'race-b', input, config })]);
    const asked = await waitFor(() => h.approvals[0]);
    expect(asked).toMatchObject({ turn: 1, call: 1, toolName: 'pay', amount: { minor: 60_000, currency: 'usd' }, details: { aggregateKey: 'acme', thisCall: 30_000, totalAcrossRuns: 60_000, threshold: 50_000 } });
    expect(asked.summary).toMatch(/^pay 30000 to acme: 600\.00 USD for acme across this agent's runs, above the threshold 500\.00 USD \(run race-[ab]\)$/);
    // Nothing is sent while the person decides: only the winner's payment.
    expect(paid).toEqual([{ account: 'acme', cents: 30_000 }]);
    expect((await postDecision(h.stack, asked.approvalId, { decision: 'reject', reason: 'not both' })).status).toBe(200);
    const [a, b] = await runs;
    expect([a.status, b.status], `${a.error}: ${a.cause} / ${b.error}: ${b.cause}`).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect(paid).toEqual([{ account: 'acme', cents: 30_000 }]);
    expect(h.approvals).toHaveLength(1);
    const refused = await h.stack.ledger.getCall(asked.runId, 1, 1);
    expect(refused).toMatchObject({ outcome: 'rejected' });
    expect(JSON.parse(refused!.result!)).toMatchObject({ error: 'approval_rejected', approvalId: asked.approvalId, reason: 'not both' });
    expect(await h.stack.ledger.getAggregate('aggregate-payments:pay:acme')).toMatchObject({ total: 30_000 });
  });

  it('sends the call past the threshold across runs once a person approves it, and counts it', async () => {
    paid.length = 0;
    harness = await startAgentHarness({ agent: agentWith() });
    const h = harness;
    const input = { payments: [{ account: 'acme', cents: 30_000 }] };
    expect((await h.run({ runId: 'first', input })).status).toBe('SUCCEEDED');
    const second = h.run({ runId: 'second', input, config: { approvalTimeoutSeconds: 3600 } });
    const asked = await waitFor(() => h.approvals[0]);
    expect(asked).toMatchObject({ runId: 'second', details: { totalAcrossRuns: 60_000 } });
    expect((await postDecision(h.stack, asked.approvalId, { decision: 'approve', reason: 'known customer' })).status).toBe(200);
    expect((await second).status).toBe('SUCCEEDED');
    expect(paid.map((payment) => payment.cents)).toEqual([30_000, 30_000]);
    expect(await h.stack.ledger.getCall('second', 1, 1)).toMatchObject({ outcome: 'ok' });
    expect(await h.stack.ledger.getAggregate('aggregate-payments:pay:acme')).toMatchObject({ total: 60_000 });
  });

  it('adds one effect once across runs: a re-run of the same invoice gets the first result, and asks nobody', async () => {
    paid.length = 0;
    harness = await startAgentHarness({ agent: agentWith() });
    const input = { payments: [{ invoice: 'inv-1', account: 'acme', cents: 30_000 }] };
    expect((await harness.run({ runId: 'first', input })).status).toBe('SUCCEEDED');
    expect((await harness.run({ runId: 'again', input })).status).toBe('SUCCEEDED');
    expect(paid).toEqual([{ account: 'acme', cents: 30_000 }]);
    expect(harness.approvals).toEqual([]);
    expect(await harness.stack.ledger.getCall('again', 1, 1)).toMatchObject({ outcome: 'ok', result: JSON.stringify({ paid: 'inv-1' }) });
    expect(await harness.stack.ledger.getAggregate('aggregate-payments:pay_invoice:acme')).toMatchObject({ total: 30_000 });
  });

  it('holds a split within one run for a person from the part that crosses the threshold; approved, it is paid and counted', async () => {
    paid.length = 0;
    harness = await startAgentHarness({ agent: agentWith() });
    const h = harness;
    const input = { payments: [{ account: 'acme', cents: 49_999 }, { account: 'acme', cents: 29_902 }] };
    const finished = h.run({ runId: 'split', input, config: { approvalTimeoutSeconds: 3600 } });
    const asked = await waitFor(() => h.approvals[0]);
    expect(asked).toMatchObject({ turn: 2, toolName: 'pay', amount: { minor: 79_901, currency: 'usd' }, details: { aggregateKey: 'acme', totalForKey: 79_901, threshold: 50_000 } });
    expect(paid).toEqual([{ account: 'acme', cents: 49_999 }]);
    expect((await postDecision(h.stack, asked.approvalId, { decision: 'approve', reason: 'known customer' })).status).toBe(200);
    expect((await finished).status).toBe('SUCCEEDED');
    expect(paid.map((payment) => payment.cents)).toEqual([49_999, 29_902]);
    expect(await h.stack.ledger.getAggregate('aggregate-payments:pay:acme')).toMatchObject({ total: 79_901 });
  });
});

describe('maxUnapprovedPerRun', () => {
  it('holds the call that takes the run’s total past the cap, whatever its key', async () => {
    paid.length = 0;
    harness = await startAgentHarness({ agent: agentWith({ maxUnapprovedPerRun: 100_000 }) });
    const h = harness;
    const input = { payments: [{ account: 'a', cents: 40_000 }, { account: 'b', cents: 40_000 }, { account: 'c', cents: 40_000 }] };
    const finished = h.run({ runId: 'capped', input, config: { approvalTimeoutSeconds: 3600 } });
    const asked = await waitFor(() => h.approvals[0]);
    expect(asked).toMatchObject({ turn: 3, amount: { minor: 40_000 }, details: { movedInRun: 120_000, maxUnapprovedPerRun: 100_000 } });
    expect((await postDecision(h.stack, asked.approvalId, { decision: 'reject', reason: 'enough for one night' })).status).toBe(200);
    expect((await finished).status).toBe('SUCCEEDED');
    expect(paid.map((payment) => payment.account)).toEqual(['a', 'b']);
  });
});
