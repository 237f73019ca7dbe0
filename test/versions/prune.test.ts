/**
 * The version pruner (issue 20 item 9), end to end on the twin: the step's own code, as its role
 * (the template's grants, IAM enforced), through the Step Functions endpoint, which applies AWS's
 * rules for DeleteStateMachineVersion (API reference, DeleteStateMachineVersion): "You can't
 * delete a state machine version currently referenced by one or more aliases"; "Deleting a state
 * machine version won't terminate its in-progress executions"; "After you delete a version, you
 * can't call StartExecution using that version's ARN".
 */
import { DeleteStateMachineVersionCommand, ListExecutionsCommand, ListStateMachineVersionsCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { afterEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { postDecision, waitFor } from '../support/agent-harness.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

let h: Harness;
afterEach(async () => h.stack.close());

const versionArn = (n: number) => `${h.stack.stateMachineArn}:${n}`;
const listed = async () => ((await h.stack.sfn.send(new ListStateMachineVersionsCommand({ stateMachineArn: h.stack.stateMachineArn }))).stateMachineVersions ?? []).map((v) => v.stateMachineVersionArn);
const failure = (promise: Promise<unknown>) => promise.then(() => 'no error', (error: Error) => error.name);

describe('pruning state machine versions', () => {
  it('deletes the old versions nothing needs, keeps the newest, the aliased and the running ones, and the run on a kept old version finishes', async () => {
    h = await startHarness({ recovery: false, codeVersion: 'v1' });
    // A run parked on v1's approval: v1 has a RUNNING execution.
    const { executionArn: parked } = h.stack.engine.startExecution({ name: 'parked-on-v1', input: { runId: 'parked', input: sampleInput, config: { approvalTimeoutSeconds: 3600 } } });
    const approval = await waitFor(() => h.approvals[0]);
    for (let n = 2; n <= 6; n++) expect(h.stack.deploy(refundReconciler, { codeVersion: `v${n}` })).toBe(n);
    // v3 ran an execution that ended (a run that failed at once: its input is refused).
    const { executionArn: ended } = await h.stack.sfn.send(new StartExecutionCommand({ stateMachineArn: versionArn(3), name: 'ended-on-v3', input: JSON.stringify({ runId: 'bad', input: { date: 'not a date' } }) }));
    await h.stack.engine.waitForExecution(ended!);
    expect((await h.stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: versionArn(3) }))).executions!.map((e) => e.name)).toEqual(['ended-on-v3']);

    const pruned = await h.stack.pruneVersions({ keep: 2, graceMs: 0 });
    expect(pruned.deleted).toEqual([versionArn(2), versionArn(3), versionArn(4)]);
    expect(pruned.kept).toEqual(expect.arrayContaining([{ arn: versionArn(6), why: 'newest' }, { arn: versionArn(5), why: 'newest' }, { arn: versionArn(1), why: 'running' }]));
    expect(await listed()).toEqual([versionArn(6), versionArn(5), versionArn(1)]);
    expect(h.stack.engine.iamDecisions()).toMatchObject({ denied: 0 });

    // Nothing starts on a deleted version; the alias's version cannot be deleted; deleting again changes nothing.
    expect(await failure(h.stack.sfn.send(new StartExecutionCommand({ stateMachineArn: versionArn(3), name: 'on-deleted', input: '{}' })))).toBe('StateMachineDoesNotExist');
    expect(await failure(h.stack.sfn.send(new DeleteStateMachineVersionCommand({ stateMachineVersionArn: versionArn(6) })))).toBe('ConflictException');
    expect(await failure(h.stack.sfn.send(new DeleteStateMachineVersionCommand({ stateMachineVersionArn: versionArn(3) })))).toBe('no error');
    // A second pass finds nothing more to delete; the next deploy takes the next number, never a deleted one's.
    expect((await h.stack.pruneVersions({ keep: 2, graceMs: 0 })).deleted).toEqual([]);
    expect(h.stack.deploy(refundReconciler, { codeVersion: 'v7' })).toBe(7);

    // The run on v1 is still v1's: approved, it finishes there.
    expect((await postDecision(h.stack, approval.approvalId, { decision: 'approve' })).status).toBe(200);
    for (let approved = 1; ; approved++) {
      const next = await waitFor(() => (h.stack.engine.describeExecution(parked).status !== 'RUNNING' ? 'ended' : h.approvals[approved]));
      if (next === 'ended') break;
      expect((await postDecision(h.stack, next.approvalId, { decision: 'approve' })).status).toBe(200);
    }
    expect(h.stack.engine.describeExecution(parked)).toMatchObject({ status: 'SUCCEEDED', stateMachineVersionArn: versionArn(1) });
  });

  it('keeps a version whose last execution ended within the grace period (recovery restarts a run on its own version)', async () => {
    h = await startHarness({ recovery: false });
    for (let n = 2; n <= 3; n++) h.stack.deploy(refundReconciler, { codeVersion: `v${n}` });
    const { executionArn } = await h.stack.sfn.send(new StartExecutionCommand({ stateMachineArn: versionArn(1), name: 'ended-on-v1', input: JSON.stringify({ runId: 'bad', input: { date: 'not a date' } }) }));
    await h.stack.engine.waitForExecution(executionArn!);
    const pruned = await h.stack.pruneVersions({ keep: 1 });
    expect(pruned).toEqual({ deleted: [versionArn(2)], kept: [{ arn: versionArn(3), why: 'newest' }, { arn: versionArn(1), why: 'recent' }] });
  });
});
