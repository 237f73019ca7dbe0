import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCAL_MANIFEST_BUCKET } from '../../lambdas/runs/batch.js';
import { leftBehind, savepoint, startUntil } from '../support/cli-process.js';
import { startServe } from '../support/serve-process.js';

/**
 * `savepoint batch --wait` as a nightly job runs it: it prints why a manifest batch lists no runs,
 * and exits 1 when the batch did not succeed or one of its runs was refused (an item the agent's
 * input refuses), so the job fails where the batch did.
 */
const agentModule = new URL('./fixtures/batch-payer.ts', import.meta.url).pathname;
/** An agent whose one write waits for a person. */
const heldNote = new URL('./fixtures/held-note.ts', import.meta.url).pathname;
const { children, dirs } = leftBehind();
const root = mkdtempSync(join(tmpdir(), 'savepoint-batch-wait-'));
dirs.push(root);

describe('savepoint batch --wait', () => {
  it('exits 1, saying why, for a manifest it cannot read and for an item the agent refuses', async () => {
    const stateDir = join(root, 'state');
    const bucket = join(stateDir, 's3', LOCAL_MANIFEST_BUCKET);
    mkdirSync(bucket, { recursive: true });
    writeFileSync(join(bucket, 'customers.json'), JSON.stringify([{ customer: 'c1' }, { customer: 'x'.repeat(41) }]));
    const serving = await startServe(['--state-dir', stateDir, 'serve', '--agent', agentModule], children);
    const batch = (manifest: string) => savepoint(['--state-dir', stateDir, 'batch', '--agent', agentModule, '--manifest', `s3://${LOCAL_MANIFEST_BUCKET}/${manifest}`, '--wait']);

    const missing = await batch('nobody.json');
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stdout).toMatch(new RegExp(`^savepoint: batch \\S+ failed: no run listed; Reading s3://${LOCAL_MANIFEST_BUCKET}/nobody\\.json failed: NoSuchKey.*\n {2}States\\.ItemReaderFailed: .*NoSuchKey`, 'm'));

    // An item over Step Functions' 256 KiB fails the whole batch: it says so, with the cause its execution ended with.
    writeFileSync(join(bucket, 'large.json'), JSON.stringify([{ customer: 'c2' }, { customer: 'x'.repeat(262_144) }]));
    const large = await batch('large.json');
    expect(large.code, large.stderr).toBe(1);
    expect(large.stdout).toMatch(/^savepoint: batch \S+ failed: .+\n {2}States\.DataLimitExceeded: The state\/task 'StartItemRun \(json manifest\)' was scheduled with an input with a size exceeding the maximum number of bytes service limit\.$/m);
    // --json answers them as the runs API does; started again without --wait, the batch that existed says why it failed.
    const json = await savepoint(['--state-dir', stateDir, 'batch', '--agent', agentModule, '--manifest', `s3://${LOCAL_MANIFEST_BUCKET}/large.json`, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ created: false, status: 'FAILED', error: 'States.DataLimitExceeded', cause: expect.stringMatching(/^The state\/task 'StartItemRun \(json manifest\)' was scheduled with an input with a size exceeding/) });
    const again = await savepoint(['--state-dir', stateDir, 'batch', '--agent', agentModule, '--manifest', `s3://${LOCAL_MANIFEST_BUCKET}/large.json`]);
    expect(again.stdout).toMatch(/\(it existed: nothing new was started\)\nsavepoint: batch \S+ failed: .+\n {2}States\.DataLimitExceeded: The state\/task/);

    const refused = await batch('customers.json');
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stdout).toMatch(/^savepoint: batch \S+ succeeded: 1 succeeded, 1 refused\n {2}batch-\S+-1 refused: invalid input of agent batch-payer: customer: .+$/m);

    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);
  }, 120_000);

  it('says how many of its runs wait for a person, and where to decide, while it waits for them', async () => {
    const stateDir = join(root, 'held');
    const items = join(root, 'notes.json');
    writeFileSync(items, JSON.stringify([{ text: 'lunch at noon' }, { text: 'call the vendor' }]));
    const serving = await startServe(['--state-dir', stateDir, 'serve', '--agent', heldNote], children);
    const command = ['--state-dir', stateDir, 'batch', '--agent', heldNote, '--items', items, '--batch-id', 'notes', '--wait'];
    const waiting = startUntil(command, children, /\(2 waiting for a person: savepoint --state-dir \S+ approvals\)/);
    await waiting.reached;
    expect(waiting.output()).toMatch(new RegExp(`^savepoint: batch notes: 2 running \\(2 waiting for a person: savepoint --state-dir ${stateDir} approvals\\)$`, 'm'));
    // Ctrl-C on a second wait for the same batch stops that waiting, not the batch: it says so, exit 130.
    const second = startUntil(command, children, /^savepoint: batch notes of 2 runs .*\(it existed: nothing new was started\)$/m);
    await second.reached;
    second.child.kill('SIGINT');
    expect(await second.exited, second.output()).toBe(130);
    expect(second.output()).toMatch(/^savepoint: interrupted — stopped waiting; batch notes goes on without this command \(the same command again waits for it, and starts no run twice\)$/m);
    const listed = await savepoint(['--state-dir', stateDir, 'approvals', '--json']);
    const approvals = (JSON.parse(listed.stdout) as { approvals: { approvalId: string }[] }).approvals.map((approval) => approval.approvalId);
    expect(approvals).toHaveLength(2);
    // serve says the same of each, with the command that decides it on this state directory.
    for (const approvalId of approvals) expect(serving.output()).toContain(`(savepoint --state-dir ${stateDir} approve ${approvalId})\n`);
    for (const approvalId of approvals) expect((await savepoint(['--state-dir', stateDir, 'approve', approvalId])).code).toBe(0);
    expect(await waiting.exited, waiting.output()).toBe(0);
    expect(waiting.output()).toMatch(/^savepoint: batch notes succeeded: 2 succeeded$/m);

    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);
  }, 120_000);
});
