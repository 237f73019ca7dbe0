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
import { STACK_TAG } from '../../infra/step-function.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { postDecision, waitFor } from '../support/agent-harness.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

let h: Harness;
afterEach(async () => h.stack.close());

const versionArn = (n: number) => `${h.stack.stateMachineArn}:${n}`;
const listed = async () => ((await h.stack.sfn.send(new ListStateMachineVersionsCommand({ stateMachineArn: h.stack.stateMachineArn }))).stateMachineVersions ?? []).map((v) => v.stateMachineVersionArn);
const failure = (promise: Promise<unknown>) => promise.then(() => 'no error', (error: Error) => error.name);

/** The functions whose versions the state machine invokes (the template's AWS::Lambda::Version resources), as the twin names them. */
async function versionedFunctions(): Promise<string[]> {
  const template = (await cachedTemplate('refund-reconciler')) as CfnTemplateJson;
  const ids = Object.values(template.Resources ?? {}).filter((r) => r.Type === 'AWS::Lambda::Version').map((r) => (r.Properties!['FunctionName'] as { Ref: string }).Ref);
  return [...new Set(ids)].map((id) => `arn:aws:lambda:us-east-1:000000000000:function:${id}`).sort();
}
const versionsOf = (fn: string) => h.stack.iam!.lambda.list(fn);
const each = (functions: string[], numbers: number[]) => functions.flatMap((fn) => numbers.map((n) => `${fn}:${n}`)).sort();

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
    // Each deploy published a Lambda version of every step function the state machine invokes:
    // those the remaining state machine versions pin (1, 5, 6) stay, 2–4 are deleted, $LATEST stays.
    const functions = await versionedFunctions();
    expect(functions.length).toBeGreaterThanOrEqual(7);
    expect(pruned.functionVersions!.deleted.sort()).toEqual(each(functions, [2, 3, 4]));
    expect(pruned.functionVersions!.kept.map((k) => k.arn).sort()).toEqual(each(functions, [1, 5, 6]));
    for (const fn of functions) expect(versionsOf(fn)).toEqual(['$LATEST', '1', '5', '6']);
    expect(h.stack.engine.iamDecisions()).toMatchObject({ denied: 0 });

    // Nothing starts on a deleted version; the alias's version cannot be deleted; deleting again changes nothing.
    expect(await failure(h.stack.sfn.send(new StartExecutionCommand({ stateMachineArn: versionArn(3), name: 'on-deleted', input: '{}' })))).toBe('StateMachineDoesNotExist');
    expect(await failure(h.stack.sfn.send(new DeleteStateMachineVersionCommand({ stateMachineVersionArn: versionArn(6) })))).toBe('ConflictException');
    expect(await failure(h.stack.sfn.send(new DeleteStateMachineVersionCommand({ stateMachineVersionArn: versionArn(3) })))).toBe('no error');
    // A second pass finds nothing more to delete; the next deploy takes the next number, never a deleted one's.
    const again = await h.stack.pruneVersions({ keep: 2, graceMs: 0 });
    expect([again.deleted, again.functionVersions!.deleted]).toEqual([[], []]);
    expect(h.stack.deploy(refundReconciler, { codeVersion: 'v7' })).toBe(7);
    for (const fn of functions) expect(versionsOf(fn)).toEqual(['$LATEST', '1', '5', '6', '7']);

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
    expect(pruned).toMatchObject({ deleted: [versionArn(2)], kept: [{ arn: versionArn(3), why: 'newest' }, { arn: versionArn(1), why: 'recent' }] });
    expect(pruned.functionVersions!.deleted.sort()).toEqual(each(await versionedFunctions(), [2]));
  });
});

describe('pruning Lambda versions', () => {
  it('the twin enforces what the pruner relies on: a deleted version a live execution pins fails its next Task with Lambda.ResourceNotFoundException', async () => {
    h = await startHarness({ recovery: false, codeVersion: 'v1' });
    const { executionArn: parked } = h.stack.engine.startExecution({ name: 'parked-on-v1', input: { runId: 'parked', input: sampleInput, config: { approvalTimeoutSeconds: 3600 } } });
    const approval = await waitFor(() => h.approvals[0]);
    h.stack.deploy(refundReconciler, { codeVersion: 'v2' });
    // What the pruner never does: delete the versions a live execution's state machine version pins.
    const functions = await versionedFunctions();
    for (const fn of functions) h.stack.iam!.lambda.delete(fn, '1');
    // Lambda deletes a version, never $LATEST by its qualifier (DeleteFunction), and a deleted one is gone.
    expect(() => h.stack.iam!.lambda.delete(functions[0]!, '$LATEST')).toThrow(expect.objectContaining({ name: 'InvalidParameterValueException' }));
    expect(() => h.stack.iam!.lambda.delete(functions[0]!, '1')).toThrow(expect.objectContaining({ name: 'ResourceNotFoundException' }));
    expect(versionsOf(functions[0]!)).toEqual(['$LATEST', '2']);
    expect((await postDecision(h.stack, approval.approvalId, { decision: 'approve' })).status).toBe(200);
    const ended = await h.stack.engine.waitForExecution(parked);
    expect(ended.status).not.toBe('SUCCEEDED');
    const failed = h.stack.engine.getExecutionHistory(parked).filter((event) => event.type === 'TaskFailed' && event.taskFailedEventDetails?.error === 'Lambda.ResourceNotFoundException');
    expect(failed[0]?.taskFailedEventDetails).toMatchObject({ error: 'Lambda.ResourceNotFoundException', cause: expect.stringMatching(/^Function not found: arn:aws:lambda:.*:1 \(Service: AWSLambda; Status Code: 404/) });
  });

  it("is refused a function that does not carry the stack's tag (attribute-based access control), and deletes nothing", async () => {
    const template = structuredClone(await cachedTemplate('refund-reconciler')) as CfnTemplateJson;
    const untagged = Object.entries(template.Resources!).find(([id, r]) => r.Type === 'AWS::Lambda::Function' && id.startsWith('AgentCallToolFunction'))!;
    const tags = untagged[1].Properties!['Tags'] as { Key: string; Value: string }[];
    expect(tags).toContainEqual({ Key: STACK_TAG, Value: 'Savepoint' });
    untagged[1].Properties!['Tags'] = tags.filter((tag) => tag.Key !== STACK_TAG);
    h = await startHarness({ recovery: false, template });
    for (let n = 2; n <= 3; n++) h.stack.deploy(refundReconciler, { codeVersion: `v${n}`, template });
    await expect(h.stack.pruneVersions({ keep: 1, graceMs: 0 })).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringMatching(new RegExp(`PruneVersionsFunction\\w+/\\w+ is not authorized to perform: lambda:ListVersionsByFunction on resource: arn:aws:lambda:us-east-1:000000000000:function:${untagged[0]}`)),
    });
    for (const fn of await versionedFunctions()) expect(versionsOf(fn)).toEqual(['$LATEST', '1', '2', '3']);
  });
});
