import { StopExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { childRunId } from '../../lambdas/index.js';
import { turnCounts } from '../../lambdas/conversation/turns.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import type { LedgerKind, LocalStack } from '../../local/runtime/local-stack.js';
import { delegating, expectKilledTreeCounted, heldCall, killCourseRun, lookingChild, notePrices, treeStack, treeTestCleanup, until } from '../support/tree-agents.js';

/**
 * A parent run killed while its child run (defineAgentTool) is mid-run, a model call of the child's
 * in flight, under a fleet budget of the parent's agent and of the stack (which the child's agent
 * shares). The child's second model call waits on a gate the test holds: it was reserved (within
 * the child's lease) before it went out, and it answers only after the kill has run its course —
 * the child's execution stopped, its run killed with its parent, its lease given back, its spend
 * settled into its parent — as a Lambda invocation outlives its execution's stop on AWS. Then
 * everything settles, and: the child spent nothing after the kill beyond what that call reserved;
 * every lease is back; the day's counters hold no run and exactly what the tree spent, the child's
 * dollars once; the parent's record carries its child's spend, no reservation left open. The parent
 * killed by its execution's stop (StopExecution) or by a cancel through the runs API (`savepoint
 * kill` of a served run); on both ledgers.
 */

const { unwatch, track } = treeTestCleanup();

const prices = notePrices;
const SYSTEM = 'Look, and look again.';
/** Looks three times, then ends: its second call is the one in flight at the kill. */
const child = lookingChild('kill-child', 3, SYSTEM);
const parent = delegating('kill-parent', 'ask_child', child, { maxDollars: 1, maxTokens: 100_000 });

type Kill = (stack: LocalStack, runId: string, executionArn: string) => Promise<void>;
const kills: Record<'StopExecution' | 'cancel', Kill> = {
  StopExecution: async (stack, _runId, executionArn) => {
    await stack.sfn.send(new StopExecutionCommand({ executionArn, error: 'Operator.Stop', cause: 'wrong invoice' }));
  },
  cancel: async (stack, runId) => {
    const cancelled = await fetch(`${stack.endpoints.runs}/${runId}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'wrong invoice' }) });
    expect(cancelled.status).toBe(202);
  },
};

describe.each<LedgerKind>(['embedded', 'dynalite'])('a parent killed while its child run is mid-call, under a fleet budget, %s ledger', (kind) => {
  it.each(Object.keys(kills) as (keyof typeof kills)[])('killed by %s: the child stops, spends no more than its call in flight reserved, every lease back, the tree counted once', { timeout: 120_000 }, async (how) => {
    const held = heldCall(SYSTEM, 2);
    const stack = track(await treeStack(parent, unwatch, { ledger: kind, prices, wrapModel: held.wrap, fleetBudget: { agent: { dollarsPerDay: 40 }, stack: { dollarsPerDay: 50 } } }));
    const runId = `kill-${how}-${kind}`;
    const childId = childRunId(runId, 1, 'call_1');
    const { executionArn } = stack.engine.startExecution({ name: `${runId}-1`, input: { runId, input: { invoice: 'inv_1' }, config: { maxTokensPerTurn: 256 } } });
    await held.entered;
    // The child's second call is out: reserved (in its lease) and not yet answered.
    const atKill = (await stack.ledger.getRun(childId))!;
    expect({ status: atKill.status, turns: atKill.modelTurns, reserved: (atKill.reservedMicros ?? 0) > 0 }).toEqual({ status: 'running', turns: 1, reserved: true });

    await kills[how](stack, runId, executionArn);
    // The kill's course run: both executions over, every status change of either delivered.
    await killCourseRun(stack, 'kill-child', executionArn, atKill.executionArn);
    // Only now does the call in flight answer (its invocation outlived its execution): its turn lands.
    held.open();
    await until(() => stack.ledger.getTurn(childId, 2));

    const [parentRun, childRun] = (await Promise.all([stack.ledger.getRun(runId), stack.ledger.getRun(childId)])) as [RunRecord, RunRecord];
    expect([parentRun.status, childRun.status]).toEqual(['killed', 'killed']);
    expect(childRun.killed).toMatchObject({ by: `parent run ${runId}` });
    // Nothing after the kill beyond the call in flight: no third call; that one, landing after the
    // kill's end, is in the trace and spent at what it reserved (its real cost is within it).
    expect(await stack.ledger.getTurn(childId, 3)).toBeUndefined();
    // The call in flight spent at what it reserved; the parent carries its own spend and its child's,
    // no reservation of either left open; every lease back; the counters of the day the parent leased
    // on hold no run and what was spent: the stack's the tree's (the child's dollars once), the
    // parent's agent's its own.
    const { childSpend } = await expectKilledTreeCounted(stack, parentRun, childRun, atKill);
    const traced = (await stack.ledger.listConversation(childId)).turns.map(turnCounts);
    expect(traced).toHaveLength(2);
    expect(traced.reduce((sum, count) => sum + count.costMicros, 0)).toBeLessThanOrEqual(childSpend);
  });
});
