import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, withDev, type ModelPolicy } from '../../lambdas/index.js';
import { budgetTrip, globalKillOf } from '../../lambdas/guards/budgets.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { createTestEnvironment, type TestEnvironment } from '../../testing/index.js';
import { leaf, paid } from '../support/tree-agents.js';

/**
 * The replay of a killed run. A kill is a person's, as a decision is: the replay kills the run
 * again where the recorded run was killed (after the last thing it recorded), and the run stops
 * there for the same reason — identical, not "this code calls the model where the recorded run had
 * stopped". Killed by the switch of all runs before its first step, and by its own flag while it
 * waited for an approval. Found by `savepoint replay --all` on a state directory whose runs
 * included one killed by `savepoint kill --all` (test/cli/serve-agents-run.test.ts).
 */
/** Looks the invoice up, then pays it (the tree's leaf's payment, which waits for a person), then ends. */
const policy: ModelPolicy = (request) => {
  const turns = request.messages.filter((message) => message.role === 'assistant').length;
  if (turns > 1) return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
  return { content: [{ type: 'tool_use', id: `c${turns}`, name: turns === 0 ? 'look' : 'pay', input: { invoice: 'inv_1' } }], stop_reason: 'tool_use' };
};
const look = defineTool({ name: 'look', description: 'Looks an invoice up.', input: z.object({ invoice: z.string() }).strict(), effect: 'read', execute: async (args) => ({ due: args.invoice }) });
const agent = withDev(defineAgent({ name: 'killed-replay', model: 'sim:savepoint-sim-1', system: 'Pay the invoice.', input: z.object({ invoice: z.string() }).strict(), prompt: (input) => `Look ${input.invoice} up, then pay it.`, tools: [look, leaf.tools[0]!] }), { policy });

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
});

describe('replay of a killed run', () => {
  it('is identical for a run the switch of all runs killed before its first step', async () => {
    env = await createTestEnvironment({ agent, approve: 'approve' });
    await env.ledger.setGlobalKill({ by: 'ops@example.com', at: env.clock.now().toISOString(), reason: 'provider incident: stop everything' });
    const run = await env.run({ invoice: 'inv_1' });
    expect(run.status).toBe('killed');
    const replayed = await env.replay(run.runId);
    expect(replayed, JSON.stringify(replayed.divergence)).toMatchObject({ identical: true, answered: { turns: 0, toolCalls: 0 } });
  });

  it('is identical for a run killed by its own flag after a call, while its payment waited for an approval: the approval asked and decided again, the payment refused', async () => {
    env = await createTestEnvironment({ agent });
    const started = env.start({ invoice: 'inv_1' });
    const approval = await env.nextApproval();
    await env.ledger.killRun(started.runId, { by: 'ops@example.com', at: env.clock.now().toISOString(), reason: 'wrong invoices' });
    await env.decide(approval.approvalId, 'approve');
    const run = await started.result();
    expect(run.status).toBe('killed');
    expect(paid).not.toContain('inv_1');
    const replayed = await env.replay(run.runId);
    expect(replayed, JSON.stringify(replayed.divergence)).toMatchObject({ identical: true, answered: { turns: 2, toolCalls: 1, approvals: 1 }, live: { model: 0, tools: 0 } });
    // Another version of the agent still diverges where it differs, before the kill.
    expect(await env.replay(run.runId, { agent: { ...agent, system: 'Pay them all.' } })).toMatchObject({ identical: false, divergence: { turn: 1, why: 'the system prompt changed' } });
  });

  it("reads the flag of all runs back from the reason a run recorded, and nothing else", () => {
    const flag = { by: 'arn:aws:iam::123456789012:user/ops', at: '2026-12-07T22:55:45.988Z', reason: 'stop: now' };
    const run = { killed: undefined, guardEvents: [] } as unknown as RunRecord;
    for (const each of [flag, { ...flag, reason: '' }]) expect(globalKillOf(budgetTrip(run, new Date(), each)!.reason)).toEqual(each);
    expect(globalKillOf(budgetTrip({ ...run, killed: flag }, new Date())!.reason)).toBeUndefined();
    expect(globalKillOf('budget exceeded: steps 3 / 3')).toBeUndefined();
  });
});

describe('replay of a run killed in the middle of a turn', () => {
  it('is identical when the kill lands while a read of the turn runs beside its write, which the kill refused', async () => {
    let killing: TestEnvironment | undefined;
    const twoAtOnce: ModelPolicy = (request) =>
      request.messages.some((message) => message.role === 'assistant')
        ? { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' }
        : { content: [{ type: 'tool_use', id: 'c1', name: 'look', input: { invoice: 'inv_1' } }, { type: 'tool_use', id: 'c2', name: 'settle', input: { invoice: 'inv_1' } }], stop_reason: 'tool_use' };
    const killingLook = defineTool({
      name: 'look',
      description: 'Looks an invoice up.',
      input: z.object({ invoice: z.string() }).strict(),
      effect: 'read',
      execute: async (args, { runId }) => {
        await killing!.ledger.killRun(runId, { by: 'ops@example.com', at: killing!.clock.now().toISOString(), reason: 'mid-turn' });
        return { due: args.invoice };
      },
    });
    const settle = defineTool({ name: 'settle', description: 'Settles an invoice.', input: z.object({ invoice: z.string() }).strict(), effect: 'write', idempotencyKeys: true, execute: async (args) => ({ settled: args.invoice }) });
    const midTurn = withDev(defineAgent({ name: 'killed-mid-turn', model: 'sim:savepoint-sim-1', system: 'Settle.', input: z.object({}).strict(), prompt: () => 'Settle inv_1.', tools: [killingLook, settle] }), { policy: twoAtOnce });
    env = killing = await createTestEnvironment({ agent: midTurn });
    const run = await env.run({});
    expect(run.status).toBe('killed');
    // The read ran and killed the run; the write beside it was refused (its claim after the kill): not recorded.
    expect(run.report.tools).toMatchObject({ look: { ok: 1 }, settle: { calls: 0 } });
    const replayed = await env.replay(run.runId);
    expect(replayed, JSON.stringify(replayed.divergence)).toMatchObject({ identical: true, answered: { turns: 1, toolCalls: 1 }, live: { model: 0, tools: 0 } });
  });
});
