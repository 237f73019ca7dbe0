import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect, type Run, type RunsClient } from '../../client/index.js';
import { leftBehind, savepoint, workspace } from '../support/cli-process.js';
import { sampleDay } from '../support/refund-harness.js';
import { startServe } from '../support/serve-process.js';

/**
 * `savepoint serve` as its own process, driven by the public client over loopback
 * (`connect({ stateDir })`: the address and credential serve published): it takes runs, keeps
 * serving after one waits or ends, refuses a second serve on its state directory, drains on
 * SIGTERM, and a new serve resumes the run the first left unfinished.
 */
const { children, dirs } = leftBehind();

const serve = (args: string[]) => startServe(args, children);

/** Decides every approval the run waits for until it has ended. */
async function approveUntilEnded(client: RunsClient, runId: string): Promise<Run> {
  for (;;) {
    const run = await client.wait(runId, { untilInput: true });
    if (run.lifecycle !== 'input_required') return run;
    for (const approval of await client.approvals(runId)) await client.decide(approval.approvalId, 'approve', { reason: 'checked' });
  }
}

describe('savepoint serve, driven by the client', () => {
  it('serves runs until stopped, refuses a second serve, drains on SIGTERM, and resumes the unfinished run when it starts again', async () => {
    const { stateDir, args } = await workspace('serve', sampleDay);
    dirs.push(dirname(stateDir));
    const first = await serve(args('serve'));
    const client = await connect({ stateDir });

    const started = await client.start({ agent: 'refund-reconciler', input: { date: sampleDay.date }, runId: 'serve-r1', config: { approvalTimeoutSeconds: 3600 } });
    expect(started).toMatchObject({ runId: 'serve-r1', agent: 'refund-reconciler', created: true, lifecycle: 'working' });
    const waiting = await client.wait('serve-r1', { untilInput: true });
    expect(waiting.lifecycle).toBe('input_required');
    expect((await client.approvals('serve-r1')).length).toBeGreaterThan(0);
    // The same run id again: the same run, nothing started.
    expect(await client.start({ input: { date: sampleDay.date }, runId: 'serve-r1' })).toMatchObject({ runId: 'serve-r1', created: false, executionArn: started.executionArn });
    // A second run, cancelled while it lives: the kill names who asked.
    await client.start({ input: { date: sampleDay.date }, runId: 'serve-r2', config: { approvalTimeoutSeconds: 3600 } });
    const cancelled = await client.cancel('serve-r2', { reason: 'not needed' });
    expect(cancelled.report.killed).toMatchObject({ by: expect.stringMatching(/^local:/), reason: 'not needed' });

    // One engine per state directory: a second serve is refused with one clear message.
    const second = await savepoint(args('serve'));
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/^savepoint: the state directory \S+ is already served by `savepoint serve` \(pid \d+, since [^)]+\): its runs API takes every run/m);

    // SIGTERM: it drains and ends (0), the run saved unfinished, engine.json gone.
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.output()).toMatch(/SIGTERM received — draining/);
    expect(existsSync(join(stateDir, 'engine.json'))).toBe(false);

    // A new serve resumes it; the client finds the new address in the state directory.
    const again = await serve(args('serve'));
    expect(again.output()).toMatch(/^savepoint: resumed run serve-r1 /m);
    const reconnected = await connect({ stateDir });
    const finished = await approveUntilEnded(reconnected, 'serve-r1');
    expect(finished).toMatchObject({ runId: 'serve-r1', lifecycle: 'completed', report: { status: 'succeeded' } });
    expect(finished.pollAfterSeconds).toBeUndefined();
    // It keeps serving after the run has ended: the cancelled run reads as cancelled, and both are listed.
    expect(await reconnected.wait('serve-r2')).toMatchObject({ lifecycle: 'cancelled' });
    const { runs } = await reconnected.list({ agent: 'refund-reconciler' });
    expect(runs.map((run) => [run.runId, run.lifecycle]).sort()).toEqual([['serve-r1', 'completed'], ['serve-r2', 'cancelled']]);
    expect(await reconnected.get('never-ran')).toBeUndefined();
    await expect(reconnected.start({ input: { day: 1 } })).rejects.toMatchObject({ name: 'RunsApiError', status: 400, message: expect.stringMatching(/^invalid input of agent refund-reconciler/) });

    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 180_000);
});
