import { describe, expect, it } from 'vitest';
import { apiGatewayEvent } from '../../local/services/approval-api.js';
import { lambdaContext } from '../../local/services/lambda-context.js';
import { startLocalStack } from '../../local/runtime/local-stack.js';
import { runRecord } from '../support/records.js';
import * as z from 'zod';
import { childRunId, defineAgent, defineTool, withDev } from '../../lambdas/index.js';
import { turnCounts } from '../../lambdas/conversation/turns.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { LedgerKind } from '../../local/runtime/local-stack.js';
import { settleStatusChanges } from '../../local/services/status-events.js';
import { delegating, treeStack, treeTestCleanup } from '../support/tree-agents.js';

/**
 * A child run (defineAgentTool) that failed, was settled into its parent (what it spent replaced
 * its reservation), and is then resumed by hand: its parent counts the child's spend as final, so
 * the resume is refused, naming the budget, and the child spends nothing its parent does not carry
 * (the parent's hard budget holds for its whole tree). The synthesized definitions on the local
 * engine, on both ledgers.
 */

const { unwatch, track } = treeTestCleanup();
const failing = { now: true };

/** Looks once, then ends; its second model turn fails (an outage) while `failing.now`. */
const flaky = withDev(
  defineAgent({
    name: 'tree-flaky',
    model: 'sim:savepoint-sim-1',
    system: 'Look, then say done.',
    input: z.object({ invoice: z.string() }).strict(),
    prompt: (input) => `Look at ${input.invoice}`,
    tools: [defineTool({ name: 'look', description: 'Looks.', input: z.object({}).strict(), effect: 'read', execute: async () => ({ seen: true }) })],
  }),
  {
    policy: (request) => {
      if (!request.messages.some((message) => message.role === 'assistant')) return { content: [{ type: 'tool_use', id: 'call_1', name: 'look', input: {} }], stop_reason: 'tool_use' };
      if (failing.now) throw new Error('the model is down');
      return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
    },
  },
);

const budget = { maxDollars: 0.5, maxTokens: 20_000 };

/** A run's own spend: its turns' counts. */
async function ownSpend(ledger: Ledger, runId: string): Promise<number> {
  const { turns } = await ledger.listConversation(runId);
  return turns.map(turnCounts).reduce((total, count) => total + count.costMicros, 0);
}

describe.each<LedgerKind>(['embedded', 'dynalite'])('a failed child run settled into its parent, resumed by hand, %s ledger', (kind) => {
  it('is refused, naming its parent and the budget: it spends nothing its parent does not carry', { timeout: 120_000 }, async () => {
    failing.now = true;
    const stack = track(await treeStack(delegating(`resume-${kind}`, 'ask_flaky', flaky, budget), unwatch, { ledger: kind }));
    const runId = 'resume-settled';
    const childId = childRunId(runId, 1, 'call_1');
    const { executionArn } = stack.engine.startExecution({ name: `${runId}-1`, input: { runId, input: { invoice: 'inv_1' } } });
    expect(await stack.engine.waitForExecution(executionArn)).toMatchObject({ status: 'SUCCEEDED' });
    const child = stack.children.get('tree-flaky')!;
    await settleStatusChanges(child.engine);
    const failed = (await stack.ledger.getRun(childId))!;
    expect(failed.status).toBe('failed');
    expect(failed.costMicros).toBeGreaterThan(0);
    const parentAt = (await stack.ledger.getRun(runId))!;
    expect(parentAt.costMicros).toBe((await ownSpend(stack.ledger, runId)) + failed.costMicros);

    // A person resumes the child (the outage is over): its parent has counted it as final.
    failing.now = false;
    const resumed = child.engine.startExecution({ name: `${childId}-resumed`, input: { runId: childId, input: { invoice: 'inv_1' } } });
    const ended = await child.engine.waitForExecution(resumed.executionArn);
    await settleStatusChanges(child.engine);
    const after = (await stack.ledger.getRun(childId))!;
    const parent = (await stack.ledger.getRun(runId))!;
    // Whatever the child did, its parent carries it: the parent's own spend and all its child's.
    expect(parent.costMicros).toBe((await ownSpend(stack.ledger, runId)) + after.costMicros);
    expect({ status: ended.status, cause: ended.cause }).toMatchObject({ status: 'FAILED', cause: expect.stringMatching(new RegExp(`child run of ${runId}.*settled into it.*budget\\.maxDollars \\$0\\.5`)) });
    expect(after).toMatchObject({ status: 'failed', costMicros: failed.costMicros, executions: failed.executions });
  });
});

describe('the runs API and a failed child run settled into its parent', () => {
  it('answers 409 naming the parent and the budget, and starts nothing', { timeout: 60_000 }, async () => {
    const stack = track(await startLocalStack({ agent: flaky, retryDelayMs: 1, recovery: false }));
    const childId = childRunId('p1', 1, 'call_1');
    const settled = runRecord({ runId: childId, agent: 'tree-flaky', input: { invoice: 'inv_1' }, status: 'failed', error: { error: 'Agent.Transient', cause: 'outage' }, config: { ...runRecord().config, ...budget }, parent: { runId: 'p1', turn: 1, call: 1 }, settledIntoParentAt: '2026-12-07T10:00:00.000Z' });
    await stack.ledger.createRun(settled);
    const body = JSON.stringify({ runId: childId, input: { invoice: 'inv_1' } });
    const answer = await stack.runsApi(apiGatewayEvent({ method: 'POST', route: 'runs', body, principal: 'alice@example.com' }), lambdaContext('RunsApi', 20_000));
    expect(answer.statusCode).toBe(409);
    expect(JSON.parse(answer.body)).toMatchObject({ message: expect.stringMatching(/child run of p1 \(its tool call 1\/1\).*settled into it.*budget\.maxDollars \$0\.5, budget\.maxTokens 20000/), run: { runId: childId } });
    expect(stack.engine.listExecutions().executions).toEqual([]);
    expect(await stack.ledger.getRun(childId)).toEqual(settled);
  });
});
