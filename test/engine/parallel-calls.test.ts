import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, withDev } from '../../lambdas/index.js';
import { oneTurnPolicy, type ReadResult } from '../support/one-turn-policy.js';
import { createTestEnvironment, type TestEnvironment } from '../../testing/index.js';

/**
 * The calls of one model turn run side by side on the synthesized definition: a call waiting for a
 * person's approval holds back none of the others — the reads of its turn are recorded meanwhile,
 * and two approvals wait at once, each decided on its own — and the model reads the results in the
 * order it asked for them.
 */
const CALLS = [
  { id: 'c1', name: 'pay', input: { invoice: 'inv_big' } },
  { id: 'c2', name: 'lookup', input: { invoice: 'inv_big' } },
  { id: 'c3', name: 'pay', input: { invoice: 'inv_huge' } },
  { id: 'c4', name: 'lookup', input: { invoice: 'inv_huge' } },
] as const;

const paid: string[] = [];
const looked: string[] = [];
let results: ReadResult[] = [];

const agent = defineAgent({
  name: 'parallel-approvals',
  model: 'sim:savepoint-sim-1',
  system: 'Pay the invoices.',
  input: z.object({}).strict(),
  prompt: () => 'Pay inv_big and inv_huge, and look both up.',
  tools: [
    defineTool({
      name: 'pay',
      description: 'Pays an invoice.',
      input: z.object({ invoice: z.string() }).strict(),
      effect: 'write',
      idempotencyKeys: true,
      needsApproval: (args) => ({ summary: `pay ${args.invoice}` }),
      execute: async (args) => {
        paid.push(args.invoice);
        return { paid: args.invoice };
      },
    }),
    defineTool({
      name: 'lookup',
      description: 'Reads an invoice.',
      input: z.object({ invoice: z.string() }).strict(),
      effect: 'read',
      execute: async (args) => {
        looked.push(args.invoice);
        return { found: args.invoice };
      },
    }),
  ],
});

const dev = withDev(agent, { policy: oneTurnPolicy(CALLS, (read) => (results = read)) });

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
  paid.length = 0;
  looked.length = 0;
  results = [];
});

/** Turns of the event loop (never a timer) until `ready` holds; fails if it never does. */
async function until(ready: () => Promise<boolean>, what: string): Promise<void> {
  for (let turn = 0; !(await ready()); turn++) {
    if (turn > 20_000) throw new Error(`never: ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe('the tool calls of one turn', () => {
  it('record the reads while two approvals of the same turn wait, each decided on its own; results in call order', async () => {
    env = await createTestEnvironment({ agent: dev });
    const run = env.start({});
    const ledger = env.ledger;
    const completed = async (call: number) => (await ledger.getCall(run.runId, 1, call))?.status === 'completed';
    // Both payments wait for a person at once…
    await until(async () => (await env!.pendingApprovals()).length === 2, 'two approvals pending');
    // …and the lookups of their turn are done meanwhile.
    await until(async () => (await completed(2)) && (await completed(4)), 'the reads recorded while the approvals wait');
    expect(looked.sort()).toEqual(['inv_big', 'inv_huge']);
    expect(paid).toEqual([]);

    const pending = await env.pendingApprovals();
    expect(pending.map((approval) => approval.call).sort()).toEqual([1, 3]);
    const byCall = new Map(pending.map((approval) => [approval.call, approval]));
    // The later call's approval first: it runs while the earlier one still waits.
    await env.decide(byCall.get(3)!.approvalId, 'approve');
    await until(() => completed(3), 'the approved call run');
    expect(paid).toEqual(['inv_huge']);
    expect(await completed(1)).toBe(false);
    await env.decide(byCall.get(1)!.approvalId, 'reject', 'too much');

    const done = await run.result();
    expect(done).toMatchObject({ execution: 'SUCCEEDED', status: 'succeeded' });
    expect(paid).toEqual(['inv_huge']);
    expect(results.map((result) => result.id)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(JSON.parse(results[0]!.content)).toMatchObject({ error: 'approval_rejected' });
    expect(JSON.parse(results[1]!.content)).toEqual({ found: 'inv_big' });
    expect(JSON.parse(results[2]!.content)).toEqual({ paid: 'inv_huge' });
    expect(JSON.parse(results[3]!.content)).toEqual({ found: 'inv_huge' });
  }, 120_000);
});
