import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { childRunId, defineAgent, defineAgentTool, defineTool, withDev, type AgentDefinition } from '../../lambdas/index.js';
import type { ModelPolicy } from '../../lambdas/define.js';
import { turnCounts } from '../../lambdas/conversation/turns.js';
import type { LedgerKind } from '../../local/runtime/local-stack.js';
import { settleStatusChanges } from '../../local/services/status-events.js';
import { waitFor } from '../support/agent-harness.js';
import { treeStack, treeTestCleanup } from '../support/tree-agents.js';

/**
 * A turn of many agent-tool calls (defineAgentTool): one child runs long while the turn's 40 other
 * calls start and end theirs, so its parent counts 80 reservations and settles meanwhile — more
 * than the window of counted keys (64). The long child's reservation is settled once all the same:
 * the parent ends carrying its own spend and each child's, none open (`childRunsOpen` 0). The
 * synthesized definitions on the local engine.
 */

const { unwatch, track } = treeTestCleanup();
const QUICK = 40;
let openGate: () => void = () => undefined;

const ends: ModelPolicy = () => ({ content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' });
const once = (uses: { id: string; name: string; input: Record<string, unknown> }[]): ModelPolicy => (request) =>
  request.messages.some((message) => message.role === 'assistant') ? ends(request) : { content: uses.map((use) => ({ type: 'tool_use' as const, ...use })), stop_reason: 'tool_use' };

const input = z.object({ invoice: z.string() }).strict();
const base = { model: 'sim:savepoint-sim-1', system: 'Work.', input, prompt: (given: { invoice: string }) => `Work on ${given.invoice}` };

/** Ends at once (its tool never called). */
const quick = withDev(defineAgent({ ...base, name: 'tree-quick', tools: [defineTool({ name: 'look', description: 'Looks.', input: z.object({}).strict(), effect: 'read', execute: async () => ({}) })] }), { policy: ends });
/** Waits (its one read) until the test opens the gate. */
const slow = withDev(
  defineAgent({ ...base, name: 'tree-slow', tools: [defineTool({ name: 'wait', description: 'Waits.', input: z.object({}).strict(), effect: 'read', execute: () => new Promise((resolve) => (openGate = () => resolve({ waited: true }))) })] }),
  { policy: once([{ id: 'call_1', name: 'wait', input: {} }]) },
);

const many: AgentDefinition = withDev(
  defineAgent({
    name: 'tree-many',
    model: 'sim:savepoint-sim-1',
    system: 'Delegate.',
    input,
    prompt: (given) => `Have ${given.invoice} looked at`,
    budgets: { maxDollars: 5, maxTokens: 400_000 },
    tools: [
      defineAgentTool({ name: 'ask_slow', description: 'Delegates.', input, agent: slow, budget: { maxDollars: 0.5, maxTokens: 20_000 } }),
      defineAgentTool({ name: 'ask_quick', description: 'Delegates.', input, agent: quick, budget: { maxDollars: 0.05, maxTokens: 5_000 } }),
    ],
  }),
  { policy: once([{ id: 'call_1', name: 'ask_slow', input: { invoice: 'inv_1' } }, ...Array.from({ length: QUICK }, (_, index) => ({ id: `q_${index + 1}`, name: 'ask_quick', input: { invoice: `inv_q${index + 1}` } }))]) },
);

describe.each<LedgerKind>(['embedded', 'dynalite'])('a turn of 41 agent-tool calls, %s ledger', (kind) => {
  it('settles the long child\'s reservation once, 80 counts after it: the parent carries every child\'s spend, none open', { timeout: 240_000 }, async () => {
    const stack = track(await treeStack(many, unwatch, { ledger: kind }));
    const runId = `many-${kind}`;
    const { executionArn } = stack.engine.startExecution({ name: `${runId}-1`, input: { runId, input: { invoice: 'inv_1' } } });
    // Every quick child ended and its call recorded, while the slow one still runs.
    await waitFor(async () => (await stack.ledger.listConversation(runId)).calls.filter((call) => call.name === 'ask_quick' && call.status === 'completed').length === QUICK);
    const slowId = childRunId(runId, 1, 'call_1');
    expect((await stack.ledger.getRun(slowId))?.status).toBe('running');
    openGate();
    expect(await stack.engine.waitForExecution(executionArn)).toMatchObject({ status: 'SUCCEEDED' });
    for (const one of stack.children.values()) await settleStatusChanges(one.engine);

    const { turns, calls } = await stack.ledger.listConversation(runId);
    const children = await Promise.all(calls.map((call) => stack.ledger.getRun(childRunId(runId, call.turn, call.toolCallId))));
    expect(children.map((run) => (run?.status === "succeeded" ? run.status : `${run?.status}: ${run?.stopReason}`))).toEqual(Array.from({ length: QUICK + 1 }, () => 'succeeded'));
    const own = turns.map(turnCounts).reduce((total, count) => total + count.costMicros, 0);
    const spent = children.reduce((total, run) => total + run!.costMicros, 0);
    expect(await stack.ledger.getRun(runId)).toMatchObject({ status: 'succeeded', childRunsOpen: 0, costMicros: own + spent });
  });
});
