import { describe, expect, it } from 'vitest';
import { childRunId } from '../../lambdas/index.js';
import { turnCounts } from '../../lambdas/conversation/turns.js';
import { stackCounterPk } from '../../lambdas/records/fleet.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import type { LedgerKind, LocalStack } from '../../local/runtime/local-stack.js';
import type { LocalFleetBudget } from '../../local/runtime/fleet-budget.js';
import { settleStatusChanges } from '../../local/services/status-events.js';
import { delegating, lookingChild, notePrices, treeStack, treeTestCleanup } from '../support/tree-agents.js';

/**
 * A fleet budget over a run that calls an agent tool (defineAgentTool): the parent counts its
 * child's budget into its own dollars (its hard budget holds for its tree), while the child run
 * leases its own spend from the fleet, as every run does. So the fleet must count the child's
 * dollars once — in the child's lease — and not a second time in the parent's: the day's counter,
 * every lease returned, holds what the two runs really spent, and a limit that covers that once
 * does not refuse the parent's call after its child. The stack's limits, shared by the parent's
 * agent and the child's (each a stack of its own on one ledger, as a SavepointStack's agents);
 * the synthesized definitions on the local engine, on both ledgers.
 */

const { unwatch } = treeTestCleanup();

const prices = notePrices;
/** Looks six times, then ends: the child spends several times a call's bound. */
const child = lookingChild('fleet-child', 6);
/** Calls the child once, then ends: its second model call comes after the child's spend is settled into it. */
const parent = delegating('fleet-parent', 'ask_child', child, { maxDollars: 1, maxTokens: 100_000 });

type Tree = { parent: RunRecord; child: RunRecord; own: number; leased: number; runs: number };

/** Runs the tree on a stack whose agents share `budget`'s stack limits, and reads both runs and the stack's counter once every status change was delivered. */
async function runTree(kind: LedgerKind, runId: string, budget: LocalFleetBudget): Promise<Tree> {
  const stack: LocalStack = await treeStack(parent, unwatch, { ledger: kind, fleetBudget: budget, prices });
  try {
    return await treeOn(stack, runId);
  } finally {
    await stack.close();
  }
}

async function treeOn(stack: LocalStack, runId: string): Promise<Tree> {
  const { executionArn } = stack.engine.startExecution({ name: `${runId}-1`, input: { runId, input: { invoice: 'inv_1' }, config: { maxTokensPerTurn: 256 } } });
  await stack.engine.waitForExecution(executionArn);
  await settleStatusChanges(stack.engine);
  for (const one of stack.children.values()) await settleStatusChanges(one.engine);
  const [parentRun, childRun] = (await Promise.all([stack.ledger.getRun(runId), stack.ledger.getRun(childRunId(runId, 1, 'call_1'))])) as [RunRecord, RunRecord];
  const own = (await stack.ledger.listConversation(runId)).turns.map(turnCounts).reduce((total, count) => total + count.costMicros, 0);
  // The counter of the day the parent leased on (its lease says which), not of today's date when read.
  const day = parentRun.fleetLease && (await stack.ledger.getFleetDay(stackCounterPk('Savepoint', parentRun.fleetLease.day)));
  return { parent: parentRun, child: childRun, own, leased: day?.leased ?? 0, runs: day?.runs ?? 0 };
}

describe.each<LedgerKind>(['embedded', 'dynalite'])('a fleet budget over a run and its child run, %s ledger', (kind) => {
  it("counts the child's dollars once: the day's counter holds what the parent and its child spent, every lease returned", { timeout: 120_000 }, async () => {
    const tree = await runTree(kind, `fleet-tree-${kind}`, { stack: { dollarsPerDay: 50 } });
    expect([tree.parent.status, tree.child.status]).toEqual(['succeeded', 'succeeded']);
    // The parent's hard budget still carries its child's spend.
    expect(tree.parent.costMicros).toBe(tree.own + tree.child.costMicros);
    // Both leased from the stack's counter, and gave back what they did not use.
    expect([tree.parent.fleetLease?.returned, tree.child.fleetLease?.returned]).toEqual([true, true]);
    expect(tree.runs).toBe(0);
    expect(tree.leased).toBe(tree.own + tree.child.costMicros);
  });

  it("does not refuse the parent's call after its child when the limit covers what the tree spends once, not twice", { timeout: 120_000 }, async () => {
    // What the tree spends, from the first test's shape: the child several calls, the parent two.
    const measured = await runTree(kind, `fleet-measure-${kind}`, { stack: { dollarsPerDay: 50 } });
    const once = measured.own + measured.child.costMicros;
    // Half the child's spend over what the tree spends: its last call's bound fits; the child's dollars counted twice do not.
    const limit = once + Math.floor(measured.child.costMicros / 2);
    const tree = await runTree(kind, `fleet-tight-${kind}`, { stack: { dollarsPerDay: limit / 1_000_000 } });
    expect({ parent: tree.parent.status, child: tree.child.status, childStop: tree.child.stopReason }).toEqual({ parent: 'succeeded', child: 'succeeded', childStop: 'done' });
    expect(tree.leased).toBe(tree.own + tree.child.costMicros);
    expect(tree.leased).toBeLessThanOrEqual(limit);
  });
});
