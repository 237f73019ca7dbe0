import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, withDev, type ModelPolicy } from '../../lambdas/index.js';
import { guardFigures } from '../../lambdas/guards/budgets.js';
import { replayRun } from '../../local/replay/index.js';
import { createTestEnvironment, TestClock, type TestEnvironment } from '../../testing/index.js';

/**
 * A run whose first turn asks for two payments side by side, each waiting for a person, decided
 * at different times (the later call's first, 40 s and 100 s after they were asked), with a read of
 * the same turn done meanwhile; its second turn's read takes 200 s, so the third turn's budget note
 * ("… min left") depends on how long the run waited for people. Replayed on the same code it is
 * identical: the recorded clock gives each approval, decision and call the time it had, whatever
 * order the parallel branches reach them in.
 */
const clock = new TestClock();

const policy: ModelPolicy = (request) => {
  const turns = request.messages.filter((message) => message.role === 'assistant').length;
  const use = (id: string, name: string, invoice: string) => ({ type: 'tool_use' as const, id, name, input: { invoice } });
  if (turns === 0) return { content: [use('c1', 'pay', 'inv_big'), use('c2', 'lookup', 'inv_big'), use('c3', 'pay', 'inv_huge')], stop_reason: 'tool_use' };
  if (turns === 1) return { content: [use('c4', 'audit', 'inv_big')], stop_reason: 'tool_use' };
  return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
};

const invoice = z.object({ invoice: z.string() }).strict();
const agent = defineAgent({
  name: 'parallel-approvals-replay',
  model: 'sim:savepoint-sim-1',
  system: 'Pay the invoices.',
  input: z.object({}).strict(),
  prompt: () => 'Pay inv_big and inv_huge, look the first up, then audit it.',
  tools: [
    defineTool({
      name: 'pay',
      description: 'Pays an invoice.',
      input: invoice,
      effect: 'write',
      idempotencyKeys: true,
      needsApproval: (args) => ({ summary: `pay ${args.invoice}` }),
      execute: async (args) => ({ paid: args.invoice }),
    }),
    defineTool({ name: 'lookup', description: 'Reads an invoice.', input: invoice, effect: 'read', execute: async (args) => ({ found: args.invoice }) }),
    defineTool({
      name: 'audit',
      description: 'Audits an invoice (slowly).',
      input: invoice,
      effect: 'read',
      execute: async (args) => {
        clock.advance(200_000);
        return { audited: args.invoice };
      },
    }),
  ],
  report: (calls) => ({ paid: calls.filter((call) => call.name === 'pay' && call.outcome === 'ok').length }),
});

const dev = withDev(agent, { policy });

/** Turns of the event loop (never a timer) until `ready` holds; fails if it never does. */
async function until(ready: () => Promise<boolean>, what: string): Promise<void> {
  for (let turn = 0; !(await ready()); turn++) {
    if (turn > 20_000) throw new Error(`never: ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe('replay of a run with parallel approvals decided at different times', () => {
  let env: TestEnvironment;
  let runId: string;
  beforeAll(async () => {
    env = await createTestEnvironment({ agent: dev, clock });
    const run = env.start({});
    runId = run.runId;
    await until(async () => (await env.pendingApprovals()).length === 2, 'two approvals pending');
    const byCall = new Map((await env.pendingApprovals()).map((approval) => [approval.call, approval]));
    clock.advance(40_000);
    await env.decide(byCall.get(3)!.approvalId, 'approve');
    await until(async () => (await env.ledger.getCall(runId, 1, 3))?.status === 'completed', 'the approved call run');
    clock.advance(60_000);
    await env.decide(byCall.get(1)!.approvalId, 'approve');
    expect((await run.result()).status).toBe('succeeded');
  }, 60_000);
  afterAll(() => env?.close());

  it('counts the time it waited for people as the union of the two waits (100 s), not their sum (140 s)', async () => {
    const run = await env.ledger.getRun(runId);
    expect(run!.approvalWaitMs).toBe(100_000);
    // The wall clock it used: 305 s in all (the audit's 200 s outlast its Task's timeout, whose Retry
    // waits 5 s: the kit's clock skips it), less the 100 s it waited.
    expect(guardFigures(run!, new Date(run!.finishedAt!))).toMatchObject({ approvalWaitSeconds: 100, wallSeconds: { used: 205 } });
  });

  it('is identical on the same code', async () => {
    const { turns } = await env.ledger.listConversation(runId);
    expect(turns).toHaveLength(3);
    const result = await replayRun({ agent: dev, source: env.ledger, runId });
    expect(result.divergence, JSON.stringify(result.divergence, null, 1)).toBeUndefined();
    expect(result.answered).toEqual({ turns: 3, toolCalls: 4, approvals: 2 });
  }, 60_000);
});
