import { DescribeExecutionCommand, ListExecutionsCommand, type SFNClient } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { childRunId, defineAgent, defineTool, withDev } from '../../lambdas/index.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { createClient } from '../../client/ledger-client.js';
import { formatReport } from '../../cli/format.js';
import type { LocalStack } from '../../local/runtime/local-stack.js';
import { waitFor } from '../support/agent-harness.js';
import { turnCounts } from '../../lambdas/conversation/turns.js';
import { settleStatusChanges } from '../../local/services/status-events.js';
import { delegating, paid, root, treeStack, treeTestCleanup } from '../support/tree-agents.js';

/**
 * A tree of runs (issue 34 item 2): a parent whose tool is another agent, whose tool is a third.
 * Killing the parent kills the tree — each child recorded killed by its parent with who asked, its
 * execution stopped through the Step Functions API of its engine (the twin authorizing each stop
 * against the stopping role), nothing run after — and a fork of a parent reuses the children its
 * copied turns started, while a child called after the fork point is the fork's own.
 */

const { unwatch, track } = treeTestCleanup();
let stack: LocalStack | undefined;

async function executionsOf(sfn: SFNClient, stateMachineArn: string) {
  const listed = await sfn.send(new ListExecutionsCommand({ stateMachineArn }));
  return Promise.all((listed.executions ?? []).map((execution) => sfn.send(new DescribeExecutionCommand({ executionArn: execution.executionArn! }))));
}

describe('a tree of child runs', { timeout: 180_000 }, () => {
  it('killed at its root: every child recorded killed by its parent with who asked, its execution aborted, nothing run after', async () => {
    stack = track(await treeStack(root, unwatch));
    const ledger = stack.ledger;
    const midId = childRunId('tree', 1, 'call_1');
    const leafId = childRunId(midId, 1, 'call_1');
    stack.engine.startExecution({ name: 'tree-1', input: { runId: 'tree', input: { invoice: 'inv_1' } } });
    // The leaf waits for a person: the whole tree is live, each run waiting on the one below.
    await waitFor(async () => (await ledger.listPendingApprovals()).some((approval) => approval.runId === leafId));

    const cancelled = await fetch(`${stack.endpoints.runs}/tree/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'wrong invoice' }) });
    expect(cancelled.status).toBe(202);

    const ended = await waitFor(async () => {
      const runs = await Promise.all(['tree', midId, leafId].map((runId) => ledger.getRun(runId)));
      return runs.every((run) => run?.status === 'killed') && runs;
    });
    const [rootRun, midRun, leafRun] = ended;
    expect(rootRun!.killed).toMatchObject({ by: expect.stringMatching(/^local:/), reason: 'wrong invoice' });
    const asked = rootRun!.killed!.by;
    expect(midRun!.killed).toEqual({ by: 'parent run tree', at: expect.any(String), reason: `its parent run tree was killed by ${asked}: wrong invoice` });
    expect(leafRun!.killed).toEqual({ by: `parent run ${midId}`, at: expect.any(String), reason: `its parent run ${midId} was killed: its parent run tree was killed by ${asked}: wrong invoice` });
    expect(leafRun!.stopReason).toMatch(new RegExp(`^killed by parent run ${midId} at `));

    // Each child's execution was stopped (ABORTED, Savepoint.ParentKilled), through its own engine's API; each ran once.
    const midStack = stack.children.get('tree-mid')!;
    const leafStack = midStack.children.get('tree-leaf')!;
    for (const [child, run] of [[midStack, midRun], [leafStack, leafRun]] as const) {
      const executions = await executionsOf(child.sfn, child.stateMachineArn);
      expect(executions.map((execution) => [execution.executionArn, execution.status, execution.error])).toEqual([[run!.executionArn, 'ABORTED', 'Savepoint.ParentKilled']]);
    }
    // The root stopped at its next step (the killed child's end woke it); nothing else ran: no payment, no further model call.
    expect((await executionsOf(stack.sfn, stack.stateMachineArn)).map((execution) => execution.status)).toEqual(['SUCCEEDED']);
    expect(paid).toEqual([]);
    expect(ended.map((run) => run!.modelTurns)).toEqual([1, 1, 1]);
    expect(await ledger.getApproval(leafId, 1, 1)).toMatchObject({ status: 'expired' });
    // What each spent replaced each child's reservation, up the tree, whichever ended first: the
    // leaf's end (after the middle run's: killed first, by its execution's stop) settled it into the
    // middle run, whose spend was then final, settled into the root. Every status change delivered:
    for (const [engine, run] of [[stack.engine, rootRun], [midStack.engine, midRun], [leafStack.engine, leafRun]] as const) await engine.waitForExecution(run!.executionArn);
    for (const engine of [stack.engine, midStack.engine, leafStack.engine]) await settleStatusChanges(engine);
    const spent = async (runId: string) => {
      const run = (await ledger.getRun(runId))!;
      const [turn] = (await ledger.listConversation(runId)).turns.map(turnCounts);
      return { total: [run.costMicros, run.inputTokens, run.outputTokens], own: [turn!.costMicros, turn!.inputTokens, turn!.outputTokens] };
    };
    const [rootSpent, midSpent, leafSpent] = await Promise.all(['tree', midId, leafId].map(spent));
    expect(leafSpent!.total).toEqual(leafSpent!.own);
    expect(midSpent!.total).toEqual(midSpent!.own.map((own, index) => own + leafSpent!.total[index]!));
    expect(rootSpent!.total).toEqual(rootSpent!.own.map((own, index) => own + midSpent!.total[index]!));
    expect((await ledger.getCall(leafId, 1, 1))?.status).not.toBe('completed');

    // `status` shows the tree, each child as its own record says.
    const report = (await loadReport(ledger, 'tree', new Date(), root))!;
    expect(report.children).toEqual([{ runId: midId, agent: 'tree-mid', tool: 'ask_mid', turn: 1, call: 1, status: 'killed', children: [{ runId: leafId, agent: 'tree-leaf', tool: 'ask_leaf', turn: 1, call: 1, status: 'killed' }] }]);
    const lines = formatReport(report).split('\n');
    expect(lines.filter((line) => /child run/.test(line))).toEqual([
      expect.stringMatching(new RegExp(`^    child run +${midId} \\(tree-mid, by ask_mid at 1/1\\): killed$`)),
      expect.stringMatching(new RegExp(`^      child run +${leafId} \\(tree-leaf, by ask_leaf at 1/1\\): killed$`)),
    ]);
  });

  it('forked: the copied turns reuse the children they started (no new run); a call after the fork point starts the fork\'s own child', async () => {
    const note = defineTool({ name: 'look', description: 'Looks.', input: z.object({}).strict(), effect: 'read', execute: async () => ({}) });
    const leafless = withDev(defineAgent({ name: 'tree-note', model: 'sim:savepoint-sim-1', system: 'Note.', input: z.object({ invoice: z.string() }).strict(), prompt: (input) => `Note ${input.invoice}`, tools: [note] }), {
      policy: () => ({ content: [{ type: 'text', text: 'noted' }], stop_reason: 'end_turn' }),
    });
    const parent = delegating('tree-forked', 'note', leafless, { maxDollars: 0.5, maxTokens: 20_000 });
    stack = track(await treeStack(parent, unwatch));
    const child = stack.children.get('tree-note')!;
    const done = await stack.engine.waitForExecution(stack.engine.startExecution({ name: 'forked-1', input: { runId: 'forked', input: { invoice: 'inv_1' } } }).executionArn);
    expect(done.status).toBe('SUCCEEDED');
    const first = childRunId('forked', 1, 'call_1');
    expect((await stack.ledger.getRun(first))?.status).toBe('succeeded');

    const client = createClient({ ledger: stack.ledger, sfn: stack.sfn, stateMachineArn: stack.stateMachineArn, agent: parent });
    const forkedRun = async (at: number) => {
      const { runId } = await client.fork('forked', { at });
      return waitFor(async () => {
        const run = await stack!.ledger.getRun(runId);
        return run?.status !== 'running' && run;
      });
    };
    // At turn 2: turn 1's call of the child is copied with its result; the fork's turn 2 ends the run.
    const after = await forkedRun(2);
    expect(after.status).toBe('succeeded');
    expect((await executionsOf(child.sfn, child.stateMachineArn)).length).toBe(1);
    expect((await loadReport(stack.ledger, after.runId, new Date(), parent))!.children).toEqual([{ runId: first, agent: 'tree-note', tool: 'note', turn: 1, call: 1, status: 'succeeded' }]);

    // At turn 1: the fork's own turn 1 calls the child, a new child under the fork's derived id.
    const before = await forkedRun(1);
    expect(before.status).toBe('succeeded');
    const own = childRunId(before.runId, 1, 'call_1');
    expect(await stack.ledger.getRun(own)).toMatchObject({ status: 'succeeded', parent: { runId: before.runId, turn: 1, call: 1 } });
    expect((await executionsOf(child.sfn, child.stateMachineArn)).length).toBe(2);
    expect((await loadReport(stack.ledger, before.runId, new Date(), parent))!.children).toEqual([{ runId: own, agent: 'tree-note', tool: 'note', turn: 1, call: 1, status: 'succeeded' }]);
  });
});
