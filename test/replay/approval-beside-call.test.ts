import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, withDev, type ModelPolicy } from '../../lambdas/index.js';
import { replayRun } from '../../local/replay/index.js';
import { createTestEnvironment, TestClock, type TestEnvironment } from '../../testing/index.js';

/**
 * A run whose first turn reads an invoice (5 s, on the clock) beside a payment that waits for a
 * person: the approval is asked after the read started (as a loaded machine's engine asks it after
 * the turn's other calls have started: the fresh-clone CI run's refund day, whose replay said
 * "diverged"), and decided 10 s later. The second turn's budget note ("… min left") is right at
 * a boundary: the run has used 5 s of its wall clock less the 10 s it waited, so 239 min are left;
 * 15 s of waiting (the approval taken as asked when the read started) would leave 240. The replay
 * runs the read and the approval's request side by side too, in whatever order its branches reach
 * them: the approval must still read the time it was asked at, not the read's.
 */
const clock = new TestClock();
const READ_MS = 5_000;
const WAIT_MS = 10_000;

const policy: ModelPolicy = (request) => {
  const turns = request.messages.filter((message) => message.role === 'assistant').length;
  const use = (id: string, name: string) => ({ type: 'tool_use' as const, id, name, input: { invoice: 'inv_1' } });
  if (turns === 0) return { content: [use('c1', 'lookup'), use('c2', 'pay')], stop_reason: 'tool_use' };
  return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
};

const invoice = z.object({ invoice: z.string() }).strict();
const agent = defineAgent({
  name: 'approval-beside-call-replay',
  model: 'sim:savepoint-sim-1',
  system: 'Pay the invoice.',
  input: z.object({}).strict(),
  prompt: () => 'Look inv_1 up and pay it.',
  tools: [
    defineTool({
      name: 'lookup',
      description: 'Reads an invoice (slowly).',
      input: invoice,
      effect: 'read',
      execute: async (args) => {
        clock.advance(READ_MS);
        return { found: args.invoice };
      },
    }),
    defineTool({
      name: 'pay',
      description: 'Pays an invoice.',
      input: invoice,
      effect: 'write',
      idempotencyKeys: true,
      needsApproval: (args) => ({ summary: `pay ${args.invoice}` }),
      execute: async (args) => ({ paid: args.invoice }),
    }),
  ],
});

const dev = withDev(agent, { policy });

describe('replay of a run whose approval was asked after another call of its turn started', () => {
  let env: TestEnvironment;
  let runId: string;
  beforeAll(async () => {
    env = await createTestEnvironment({ agent: dev, clock });
    const run = env.start({});
    runId = run.runId;
    const approval = await env.nextApproval();
    clock.advance(WAIT_MS);
    await env.decide(approval.approvalId, 'approve');
    expect((await run.result()).status).toBe('succeeded');
  }, 60_000);
  afterAll(() => env?.close());

  it('was recorded so: the read started before the approval was asked, and the second turn is 239 min from the end', async () => {
    const { turns, calls, approvals } = await env.ledger.listConversation(runId);
    const read = calls.find((call) => call.name === 'lookup')!;
    const readStart = Date.parse(read.recordedAt!) - read.latencyMs!;
    const asked = Date.parse(approvals[0]!.createdAt);
    expect(asked - readStart).toBe(READ_MS);
    expect((await env.ledger.getRun(runId))!.approvalWaitMs).toBe(WAIT_MS);
    expect(turns[1]!.notes?.[0]).toMatch(/, 239 min\. /);
  });

  it('is identical on the same code: the approval reads the time it was asked at', async () => {
    const result = await replayRun({ agent: dev, source: env.ledger, runId });
    expect(result.divergence, JSON.stringify(result.divergence, null, 1)).toBeUndefined();
    expect(result.answered).toEqual({ turns: 2, toolCalls: 2, approvals: 1 });
  }, 60_000);
});
