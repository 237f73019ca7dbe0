import { StopExecutionCommand } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { childRunId } from '../../lambdas/index.js';
import { turnCounts } from '../../lambdas/conversation/turns.js';
import { settleStatusChanges } from '../../local/services/status-events.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { startLocalStack, type LedgerKind, type LocalStack } from '../../local/runtime/local-stack.js';
import { waitFor, wakeOnEngineEvents, wakingLedger } from '../support/agent-harness.js';
import { delegating, leaf, paid, treeTestCleanup } from '../support/tree-agents.js';

/**
 * A parent killed between its AwaitChildRun's read and its child's start: the kill's cascade runs
 * before the child exists (it finds none to kill), and the parent's invocation, past its checks,
 * starts the child anyway. The child does not run on: its first decision (CallModel's check) reads
 * its parent, finds it killed, records the child killed by its parent as the cascade would
 * (tools/child-runs.ts `parentKill`), and stops before any model call or tool call; under the kill
 * of all runs it reads that kill. The kill lands exactly in that window: a decorator in front of
 * the parent's storeChildWait (after the step's read, before StartExecution) kills the parent
 * through the runs API — the real cascade, and StopExecution of the parent — sets the kill of
 * all runs, or stops the parent's execution (its run over before its child starts). Whichever, the
 * parent's record carries only its own spend: the child's reservation settled by what it spent, nothing.
 */

const { unwatch, track } = treeTestCleanup();
let stack: LocalStack | undefined;

const runId = 'late-kill';
const childId = childRunId(runId, 1, 'call_1');
const everyone = { by: 'alice', at: '2026-12-07T03:00:00.000Z', reason: 'stop everything' };

/** The parent's stack, with `kill` run once in front of its first storeChildWait (given the ledger itself). */
async function killedBeforeChildStarts(ledger: LedgerKind, kill: (target: Ledger) => Promise<void>): Promise<LocalStack> {
  let killed = false;
  const aroundWait = (inner: Ledger): Ledger =>
    new Proxy(inner, {
      get: (target, method: keyof Ledger) =>
        method === 'storeChildWait'
          ? async (...args: Parameters<Ledger['storeChildWait']>) => {
              if (!killed) {
                killed = true;
                await kill(target);
                // The kill (and its cascade) ran while the child did not exist yet.
                expect(await target.getRun(childId)).toBeUndefined();
              }
              return target.storeChildWait(...args);
            }
          : (target[method] as (...args: unknown[]) => unknown).bind(target),
    });
  const parent = delegating('late-kill-root', 'ask_leaf', leaf, { maxDollars: 0.5, maxTokens: 20_000 });
  const started = await startLocalStack({ agent: parent, ledger, retryDelayMs: 1, recovery: false, decorateLedger: (inner) => wakingLedger(aroundWait(inner)) });
  unwatch.push(wakeOnEngineEvents(started.engine));
  for (const child of started.children.values()) unwatch.push(wakeOnEngineEvents(child.engine));
  return track(started);
}

/**
 * The child once it ended or recorded a turn (it was started: the kill came before its start, not
 * before the wait), then — what it did checked — the parent once it ended.
 */
async function childThenParent(ledger: Ledger, checkChild: (child: RunRecord) => Promise<void>): Promise<RunRecord> {
  const childRun = await waitFor(async () => {
    const child = await ledger.getRun(childId);
    return child && (child.status !== 'running' || (await ledger.listConversation(childId)).turns.length > 0) && child;
  });
  await checkChild(childRun);
  return waitFor(async () => {
    const parent = await ledger.getRun(runId);
    return parent?.status !== 'running' && parent;
  });
}

/** The parent's counters are its own turns': its child's reservation was settled by what the child spent (nothing). */
async function ownSpendOnly(ledger: Ledger, parent: RunRecord): Promise<void> {
  const { turns } = await ledger.listConversation(parent.runId);
  const own = turns.map(turnCounts).reduce((sum, count) => ({ costMicros: sum.costMicros + count.costMicros, inputTokens: sum.inputTokens + count.inputTokens, outputTokens: sum.outputTokens + count.outputTokens }), { costMicros: 0, inputTokens: 0, outputTokens: 0 });
  expect(own.costMicros).toBeGreaterThan(0);
  expect({ costMicros: parent.costMicros, inputTokens: parent.inputTokens, outputTokens: parent.outputTokens }).toEqual(own);
}

/** The child ran no step: no model call, no turn or call recorded, nobody asked, nothing paid. */
async function ranNothing(ledger: Ledger, child: RunRecord): Promise<void> {
  expect(child).toMatchObject({ status: 'killed', parent: { runId, turn: 1, call: 1 }, modelTurns: 0, toolCalls: 0, steps: 0 });
  const { turns, calls } = await ledger.listConversation(childId);
  expect([turns, calls]).toEqual([[], []]);
  expect(await ledger.listPendingApprovals()).toEqual([]);
  expect(paid).toEqual([]);
}

describe.each<LedgerKind>(['embedded', 'dynalite'])('a parent killed between its wait\'s read and its child\'s start, %s ledger', (kind) => {
  it('killed itself: the child started after the cascade is recorded killed by its parent and runs no step; the parent ends killed', { timeout: 120_000 }, async () => {
    let cancelled: number | undefined;
    stack = await killedBeforeChildStarts(kind, async () => {
      const response = await fetch(`${stack!.endpoints.runs}/${runId}/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'wrong invoice' }) });
      cancelled = response.status;
    });
    stack.engine.startExecution({ name: 'late-kill-1', input: { runId, input: { invoice: 'inv_1' } } });
    let childRun: RunRecord | undefined;
    const parentRun = await childThenParent(stack.ledger, (child) => ranNothing(stack!.ledger, (childRun = child)));
    expect(cancelled).toBe(202);
    expect(parentRun).toMatchObject({ status: 'killed', killed: { reason: 'wrong invoice' } });
    expect(childRun!.killed).toEqual({ by: `parent run ${runId}`, at: expect.any(String), reason: `its parent run ${runId} was killed by ${parentRun.killed!.by}: wrong invoice` });
    await ownSpendOnly(stack.ledger, parentRun);
  });

  it('by the kill of all runs: the child started after it stops at its first decision and runs no step; the parent ends killed', { timeout: 120_000 }, async () => {
    stack = await killedBeforeChildStarts(kind, (target) => target.setGlobalKill(everyone));
    stack.engine.startExecution({ name: 'late-kill-1', input: { runId, input: { invoice: 'inv_1' } } });
    let childRun: RunRecord | undefined;
    const parentRun = await childThenParent(stack.ledger, (child) => ranNothing(stack!.ledger, (childRun = child)));
    expect(parentRun).toMatchObject({ status: 'killed', stopReason: `killed (all runs) by alice at ${everyone.at}: stop everything` });
    expect(childRun!.stopReason).toBe(`killed (all runs) by alice at ${everyone.at}: stop everything`);
    await ownSpendOnly(stack.ledger, parentRun);
  });

  it('by StopExecution of the parent: its run is over before the child starts; the child\'s end settles its reservation', { timeout: 120_000 }, async () => {
    stack = await killedBeforeChildStarts(kind, async (target) => {
      const { executionArn } = (await target.getRun(runId))!;
      await stack!.sfn.send(new StopExecutionCommand({ executionArn, error: 'Operator.Stop', cause: 'wrong invoice' }));
      // Its ExecutionStopped recorded the kill before the child starts.
      await settleStatusChanges(stack!.engine);
      expect((await target.getRun(runId))!.status).toBe('killed');
    });
    stack.engine.startExecution({ name: 'late-kill-1', input: { runId, input: { invoice: 'inv_1' } } });
    const childRun = await waitFor(async () => {
      const child = await stack!.ledger.getRun(childId);
      return child?.status !== 'running' && child;
    });
    await ranNothing(stack.ledger, childRun);
    // The child's end delivered (the wake of its parent, and the settle: its parent is over).
    const child = stack.children.get(leaf.name)!;
    await child.engine.waitForExecution(childRun.executionArn);
    await settleStatusChanges(child.engine);
    const parentRun = (await stack.ledger.getRun(runId))!;
    expect(parentRun.stopReason).toMatch(/^killed by StopExecution at .*: Operator.Stop: wrong invoice$/);
    await ownSpendOnly(stack.ledger, parentRun);
  });
});
