import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { createClient } from '../../client/ledger-client.js';
import { postDecision } from '../support/agent-harness.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * A fork is a run of its own: `fork --run-id` naming the parent itself, or another run, is refused
 * before anything starts, naming `runId` (it used to start the parent again and report it as the fork).
 */
describe('a fork onto a run id that is taken', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ onAsked: (approval, stack) => void postDecision(stack, approval.approvalId, { decision: 'approve' }) });
    for (const runId of ['parent', 'other']) expect((await harness.run({ runId, input: sampleInput })).status).toBe('SUCCEEDED');
  }, 240_000);
  afterAll(() => harness?.stack.close());

  const client = () => createClient({ ledger: harness.stack.ledger, agent: refundReconciler, sfn: harness.stack.sfn, stateMachineArn: harness.stack.stateMachineArn });

  it("refuses the parent's own run id, naming runId, and starts nothing", async () => {
    const before = harness.stack.engine.listExecutions().executions.length;
    await expect(client().fork('parent', { at: 3, runId: 'parent' })).rejects.toThrow(/^runId: parent is the parent's own run id; a fork needs a run id of its own/);
    await expect(client().fork('parent', { at: 3, runId: 'other' })).rejects.toThrow(/^runId: run other exists already \(not this fork\)/);
    expect(harness.stack.engine.listExecutions().executions.length).toBe(before);
  });

  it('answers the same fork asked for again with the fork it started, and starts no second execution; another fork under its id is refused', async () => {
    const first = await client().fork('parent', { at: 3, effects: 'dry', runId: 'parent-dry' });
    await harness.stack.engine.waitForExecution(first.executionArn);
    const before = harness.stack.engine.listExecutions().executions.length;
    // (A second execution of it, StartRun refuses: before, the console and `fork --stack` said it had started.)
    expect(await client().fork('parent', { at: 3, effects: 'dry', runId: 'parent-dry' })).toEqual(first);
    await expect(client().fork('parent', { at: 3, runId: 'parent-dry' })).rejects.toThrow(/^runId: run parent-dry exists already \(a fork of parent at turn 3, effects dry\); a fork needs a run id of its own/);
    await expect(client().fork('parent', { at: 2, effects: 'dry', runId: 'parent-dry' })).rejects.toThrow(/^runId: run parent-dry exists already/);
    expect(harness.stack.engine.listExecutions().executions.length).toBe(before);
  });
});
