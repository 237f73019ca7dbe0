import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, withDev, type ModelPolicy } from '../../lambdas/index.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { replayRun } from '../../local/replay/index.js';
import { waitForChain } from '../../local/runtime/chain.js';
import type { DevWorld } from '../../lambdas/index.js';
import { postDecision, startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { createTestEnvironment, TestClock, type TestEnvironment } from '../../testing/index.js';

/**
 * A run that exhausts its step budget (4: two turns of one call each), asks a person to extend it,
 * is approved 10 s later (to 6) and finishes in a third turn. The run record ends with the
 * extended budget; the replay must start the run on the budget it started with (4: the agent's
 * own, the most a run of it may ask for), trip where it tripped, ask for the same extension and
 * apply the recorded decision at its recorded time.
 */
const clock = new TestClock();
const WAIT_MS = 10_000;

const policy: ModelPolicy = (request) => {
  const turns = request.messages.filter((message) => message.role === 'assistant').length;
  if (turns < 2) return { content: [{ type: 'tool_use', id: `c${turns}`, name: 'count', input: { n: turns } }], stop_reason: 'tool_use' };
  return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
};

/** `maxBudgets`: the most a run of the agent may ask for (none: its own budgets, so StartRun refused the extended one). */
const agentWith = (maxBudgets?: { maxSteps: number }) =>
  withDev(
    defineAgent({
      name: 'budget-extension-replay',
      model: 'sim:savepoint-sim-1',
      system: 'Count.',
      input: z.object({}).strict(),
      prompt: () => 'Count twice.',
      budgets: { maxSteps: 4, onBudgetExceeded: 'ask' },
      ...(maxBudgets && { maxBudgets }),
      tools: [
        defineTool({
          name: 'count',
          description: 'Counts.',
          input: z.object({ n: z.number() }).strict(),
          effect: 'read',
          execute: async (args) => ({ counted: args.n }),
        }),
      ],
    }),
    { policy },
  );

/** The source ledger as a record written before runs kept their budgets before an extension reads. */
const withoutKeptBudgets = (ledger: Ledger): Ledger =>
  new Proxy(ledger, {
    get(target, property, receiver) {
      if (property !== 'getRun') return Reflect.get(target, property, receiver) as unknown;
      return async (runId: string) => {
        const run = await target.getRun(runId);
        if (!run) return run;
        const { budgetsBeforeExtension: _kept, ...older } = run;
        return older;
      };
    },
  });

/** The source ledger with the extension recorded as refused: a recording whose run this code (the decision applied) does not reproduce. */
const refusedInstead = (ledger: Ledger): Ledger =>
  new Proxy(ledger, {
    get(target, property, receiver) {
      if (property !== 'listConversation') return Reflect.get(target, property, receiver) as unknown;
      return async (runId: string) => {
        const conversation = await target.listConversation(runId);
        return { ...conversation, approvals: conversation.approvals.map((approval) => (approval.budget ? { ...approval, status: 'rejected' as const } : approval)) };
      };
    },
  });

describe.each([
  ['the agent lets no run ask for more than its own budget (StartRun refused the extended one)', undefined],
  ['the agent lets a run ask for more (the extended budget never tripped)', { maxSteps: 10 }],
])('replay of a run whose budget extension was approved: %s', (_name, maxBudgets) => {
  const dev = agentWith(maxBudgets);
  let env: TestEnvironment;
  let runId: string;
  beforeAll(async () => {
    env = await createTestEnvironment({ agent: dev, clock });
    const run = env.start({});
    runId = run.runId;
    const approval = await env.nextApproval();
    expect(approval.budget).toEqual({ guard: 'steps', extension: 1, limit: 6 });
    clock.advance(WAIT_MS);
    await env.decide(approval.approvalId, 'approve');
    expect((await run.result()).status).toBe('succeeded');
  }, 60_000);
  afterAll(() => env?.close());

  it('was recorded so: the run ends on the extended budget, after a trip at the one it started with', async () => {
    const run = (await env.ledger.getRun(runId))!;
    expect(run.config.maxSteps).toBe(6);
    expect(run.budgetsBeforeExtension).toEqual({ maxSteps: 4 });
    expect(run.budgetExtensions).toEqual({ steps: 1 });
    expect(run.guardEvents?.map((event) => `${event.guard} ${event.action}`)).toEqual(['steps tripped']);
    expect(run.approvalWaitMs).toBe(WAIT_MS);
  });

  it('is identical on the same code: started on the budget it started with, extended by the recorded decision', async () => {
    const result = await replayRun({ agent: dev, source: env.ledger, runId });
    expect(result.divergence, JSON.stringify(result.divergence, null, 1)).toBeUndefined();
    expect(result.identical).toBe(true);
    expect(result.answered).toEqual({ turns: 3, toolCalls: 2, approvals: 1 });
  }, 60_000);

  it('is identical from a record written before runs kept the budgets they started with', async () => {
    const result = await replayRun({ agent: dev, source: withoutKeptBudgets(env.ledger), runId });
    expect(result.divergence, JSON.stringify(result.divergence, null, 1)).toBeUndefined();
    expect(result.answered).toEqual({ turns: 3, toolCalls: 2, approvals: 1 });
  }, 60_000);

  // Negative control: the extension is decided as recorded, not taken as approved.
  it('diverges where the recorded extension was refused: the run stops at the budget it started with', async () => {
    const result = await replayRun({ agent: dev, source: refusedInstead(env.ledger), runId });
    expect(result.identical).toBe(false);
    expect(result.divergence).toMatchObject({ turn: 3, what: 'model request', why: 'the run ended before the recorded run did' });
  }, 60_000);
});

/**
 * A fork of a run whose extension was refused, which asks for the same extension on its own turns
 * and is approved: the fork's replay starts from a stand-in parent (local/replay/index.ts), which
 * must carry the budgets the fork started with (its parent's), not those the fork's extension raised.
 */
describe('replay of a fork whose budget extension was approved', () => {
  const dev = agentWith();
  let harness: AgentHarness<DevWorld>;
  beforeAll(async () => {
    harness = await startAgentHarness({
      agent: dev,
      onAsked: (approval, stack) => void postDecision(stack, approval.approvalId, { decision: approval.runId === 'fork' ? 'approve' : 'reject', reason: 'test' }),
    });
    expect((await harness.run({ runId: 'parent', input: {} })).status).toBe('SUCCEEDED');
    expect((await harness.stack.ledger.getRun('parent'))!.status).toBe('stopped');
    const { executionArn } = harness.stack.engine.startExecution({ name: 'fork', input: { runId: 'fork', input: {}, fork: { from: 'parent', at: 2 } } });
    await waitForChain(harness.stack.engine, harness.stack.ledger, 'fork', executionArn);
  }, 240_000);
  afterAll(() => harness?.stack.close());

  it('was recorded so: the fork tripped at the budget it started with and ended on the extended one', async () => {
    const fork = (await harness.stack.ledger.getRun('fork'))!;
    expect(fork).toMatchObject({ status: 'succeeded', budgetExtensions: { steps: 1 }, budgetsBeforeExtension: { maxSteps: 4 }, forkedFrom: { runId: 'parent', turn: 2 } });
    expect(fork.config.maxSteps).toBe(6);
  });

  it('is identical on the same code', async () => {
    const result = await replayRun({ agent: dev, source: harness.stack.ledger, runId: 'fork' });
    expect(result.divergence, JSON.stringify(result.divergence, null, 1)).toBeUndefined();
    expect(result.identical).toBe(true);
    // Answered: its own two turns (not the copied one: its StartRun copies it) and its own turn 2's call.
    expect(result.answered).toEqual({ turns: 2, toolCalls: 1, approvals: 1 });
  }, 60_000);
});
