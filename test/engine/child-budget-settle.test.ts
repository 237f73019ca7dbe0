import { StopExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { childRunId } from '../../lambdas/index.js';
import { turnCounts } from '../../lambdas/conversation/turns.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { settleStatusChanges } from '../../local/services/status-events.js';
import type { LedgerKind, LocalStack } from '../../local/runtime/local-stack.js';
import { waitFor } from '../support/agent-harness.js';
import { delegating, leaf, paid, treeStack, treeTestCleanup } from '../support/tree-agents.js';

/**
 * A parent run killed while its child run (defineAgentTool) waits for a person: the child's whole
 * budget was reserved in the parent's record when the child started, and what the child really
 * spent replaces it once the child ends (its ExecutionStopped settles it, once) — whether the
 * parent then stops at the call (a cancel through the runs API: the child's end wakes it, its
 * CallTool skips the call) or its execution was stopped first (StopExecution: the parent is over
 * before the child ends). On both ledgers, through the twin (each function's ledger calls
 * authorized as its role, from the synthesized template: ExecutionStopped's write of the parent's
 * run item included).
 */

const { unwatch, track } = treeTestCleanup();
let stack: LocalStack | undefined;

const budget = { maxDollars: 0.5, maxTokens: 20_000 };

/** The parent's own spend: its turns' counts (what its record holds besides its child's). */
async function ownSpend(ledger: Ledger, runId: string) {
  const { turns } = await ledger.listConversation(runId);
  const counts = turns.map(turnCounts);
  const sum = (field: 'costMicros' | 'inputTokens' | 'outputTokens') => counts.reduce((total, count) => total + count[field], 0);
  return { costMicros: sum('costMicros'), inputTokens: sum('inputTokens'), outputTokens: sum('outputTokens') };
}

type Started = { stack: LocalStack; runId: string; executionArn: string; childId: string };

/** Starts the parent `runId`, and resolves once its child waits for a person (the child spent its one model turn). */
async function childWaiting(kind: LedgerKind, runId: string): Promise<Started> {
  stack = track(await treeStack(delegating(`settle-${kind}`, 'ask_leaf', leaf, budget), unwatch, { ledger: kind }));
  const childId = childRunId(runId, 1, 'call_1');
  const { executionArn } = stack.engine.startExecution({ name: `${runId}-1`, input: { runId, input: { invoice: 'inv_1' } } });
  await waitFor(async () => (await stack!.ledger.listPendingApprovals()).some((approval) => approval.runId === childId));
  // Reserved: the child's whole budget is in the parent's record while it runs.
  const own = await ownSpend(stack.ledger, runId);
  expect(await stack.ledger.getRun(runId)).toMatchObject({ costMicros: own.costMicros + budget.maxDollars * 1_000_000, inputTokens: own.inputTokens + budget.maxTokens });
  return { stack, runId, executionArn, childId };
}

/**
 * Both runs once their executions ended and every status change of either was delivered (the
 * child's own stack records its kill on a ledger no probe is woken by: waited for by its engine).
 */
async function bothEnded({ stack: started, runId, executionArn, childId }: Started): Promise<[RunRecord, RunRecord]> {
  const child = started.children.get('tree-leaf')!;
  const childArn = (await started.ledger.getRun(childId))!.executionArn;
  await started.engine.waitForExecution(executionArn);
  await child.engine.waitForExecution(childArn);
  await settleStatusChanges(started.engine);
  await settleStatusChanges(child.engine);
  const ended = await Promise.all([started.ledger.getRun(runId), started.ledger.getRun(childId)]);
  expect(ended.map((run) => run?.status)).toEqual(['killed', 'killed']);
  return ended as [RunRecord, RunRecord];
}

/** The parent's counters: its own spend and what its child spent, the reservation gone. */
async function expectSettled(ledger: Ledger, parent: RunRecord, child: RunRecord): Promise<void> {
  const own = await ownSpend(ledger, parent.runId);
  expect(child.costMicros).toBeGreaterThan(0);
  expect({ costMicros: parent.costMicros, inputTokens: parent.inputTokens, outputTokens: parent.outputTokens }).toEqual({
    costMicros: own.costMicros + child.costMicros,
    inputTokens: own.inputTokens + child.inputTokens,
    outputTokens: own.outputTokens + child.outputTokens,
  });
}

describe.each<LedgerKind>(['embedded', 'dynalite'])('a parent killed while its child runs, %s ledger', (kind) => {
  it('cancelled through the runs API: it stops at the call, and carries what its child spent, not the child\'s reservation', { timeout: 120_000 }, async () => {
    const started = await childWaiting(kind, 'settle-cancel');
    const cancelled = await fetch(`${started.stack.endpoints.runs}/settle-cancel/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'wrong invoice' }) });
    expect(cancelled.status).toBe(202);
    const [parent, child] = await bothEnded(started);
    await expectSettled(started.stack.ledger, parent, child);
    expect(paid).toEqual([]);
  });

  it('its execution stopped (StopExecution): the child ends after it, and its end settles the parent\'s reservation, once', { timeout: 120_000 }, async () => {
    const started = await childWaiting(kind, 'settle-stop');
    await started.stack.sfn.send(new StopExecutionCommand({ executionArn: started.executionArn, error: 'Operator.Stop', cause: 'wrong invoice' }));
    const [parent, child] = await bothEnded(started);
    expect(parent.stopReason).toMatch(/^killed by StopExecution at .*: Operator.Stop: wrong invoice$/);
    expect(child.killed).toMatchObject({ by: 'parent run settle-stop' });
    await expectSettled(started.stack.ledger, parent, child);
    expect(paid).toEqual([]);
  });
});
