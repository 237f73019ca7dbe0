import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { localUser } from '../../local/services/approval-api.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';
import { leftBehind, savepoint, startUntil, workspace } from '../support/cli-process.js';

/**
 * `savepoint kill`: the kill of a run that waits on an approval exits 0 (the rejection that lets
 * the run stop also ends the `savepoint run` serving it, and nothing is read after it); a killed
 * run — by its own switch or the global one — is never resumed, also after the switch is lifted.
 */

const { children, dirs } = leftBehind();

/** A `savepoint run` of the sample day in a state directory of its own, started and waiting at its first approval (for 10 minutes). */
async function runWaitingForApproval(name: string) {
  const { stateDir, args } = await workspace(name, sampleDay);
  dirs.push(dirname(stateDir));
  const { reached, output, exited } = startUntil(args('run', '--approve', 'wait', '--approval-timeout', '600'), children);
  await reached;
  return { stateDir, output, exited, runId: /savepoint: run (\S+) /.exec(output())![1]! };
}

/** A killed run replays identically: the kill reproduced where the recorded run was killed (local/replay `recordedKill`). */
async function expectReplayedIdentically(stateDir: string, runId: string): Promise<void> {
  const replayed = await savepoint(['--state-dir', stateDir, 'replay', runId]);
  expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
  expect(replayed.stdout).toMatch(new RegExp(`^${runId}: identical \\(`));
}

describe('savepoint kill <runId>', () => {
  it('exits 0 when it kills a run waiting on an approval, and the run ends killed', async () => {
    const { stateDir, runId, output, exited } = await runWaitingForApproval('kill');
    // Its status says what it waits for and the command that decides it.
    const approvalId = /⏸ {2}approval (\S+):/.exec(output())![1]!;
    const status = await savepoint(['--state-dir', stateDir, 'status', runId]);
    expect((await savepoint(['--state-dir', stateDir, 'runs'])).stdout).toMatch(new RegExp(`^${runId} +running .*  waiting for a person$`, 'm'));
    expect(status.stdout).toMatch(new RegExp(`^waiting for a person: .+ — decide by \\S+: savepoint --state-dir ${stateDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} approve ${approvalId} \\(or reject\\)$`, 'm'));

    // A fork of it is refused while it runs (exit 2): a write it makes after the fork read its records would be sent again.
    expect(await savepoint(['--state-dir', stateDir, 'fork', runId, '--at', '1', '--effects', 'dry', '--yes'])).toMatchObject({ code: 2, stdout: '', stderr: `savepoint: runId: run ${runId} is still running; fork a run that has finished or stopped (cancel or kill it first to fork it now)\n` });

    // --lift lifts the global switch only: with a run id it is refused (exit 2), and the run goes on waiting.
    const lift = await savepoint(['--state-dir', stateDir, 'kill', '--lift', runId]);
    expect(lift).toMatchObject({ code: 2, stdout: '', stderr: 'savepoint: --lift: only with --all (`kill --all --lift` lifts the global kill switch); a killed run stays killed\n' });
    expect((await savepoint(['--state-dir', stateDir, 'runs'])).stdout).toMatch(new RegExp(`^${runId} +running .*  waiting for a person$`, 'm'));

    const kill = await savepoint(['--state-dir', stateDir, 'kill', runId, '--reason', 'wrong day']);
    expect(kill.stderr).toBe('');
    expect(kill).toMatchObject({ code: 0, stdout: `run ${runId}: killed; it stops before its next step\n` });
    expect(await exited).toBe(3);
    // Recorded as the local user in the one form the approval API, the console and the CLI share.
    expect(output()).toContain(`: killed — killed by ${localUser()} at `);
    await expectReplayedIdentically(stateDir, runId);
  });

  it('exits 0 when it kills a run the engine is driving (the engine that ends with it is not asked again)', async () => {
    const { stateDir, args } = await workspace('kill-driving', sampleDay);
    dirs.push(dirname(stateDir));
    // Approvals wait (for 10 minutes): the run cannot finish before the kill lands however slow the
    // kill's own process starts on a loaded machine — it is killed while it runs its turns, or at
    // the latest while its first approval waits.
    // Killed at its first tool call: a day's run has many turns to go.
    const { reached, output, exited } = startUntil(args('run', '--approve', 'wait', '--approval-timeout', '600'), children, /turn +1 +model: tool_use/);
    await reached;
    const runId = /savepoint: run (\S+) /.exec(output())![1]!;

    const kill = await savepoint(['--state-dir', stateDir, 'kill', runId, '--reason', 'wrong day']);
    expect(kill.stderr).toBe('');
    expect(kill).toMatchObject({ code: 0, stdout: `run ${runId}: killed; it stops before its next step\n` });
    expect(await exited).toBe(3);
    expect(output()).toContain(`: killed — killed by ${localUser()} at `);
    await expectReplayedIdentically(stateDir, runId);
  });

  it('refuses a reason longer than 500 characters with exit 2, naming --reason, and kills nothing', async () => {
    const { stateDir } = await workspace('kill-reason', sampleDay);
    dirs.push(dirname(stateDir));
    const kill = await savepoint(['--state-dir', stateDir, 'kill', 'any-run', '--reason', 'x'.repeat(501)]);
    expect(kill).toMatchObject({ code: 2, stderr: expect.stringMatching(/--reason: at most 500 characters \(got 501\)/) });
    const all = await savepoint(['--state-dir', stateDir, 'kill', '--all', '--reason', 'x'.repeat(100_000)]);
    expect(all).toMatchObject({ code: 2, stderr: expect.stringMatching(/--reason: at most 500 characters/) });
  });
});

describe('savepoint kill --all', () => {
  it('stops the next run before its first step, and savepoint run says the switch is on and what lifts it', async () => {
    const { stateDir, args } = await workspace('kill-all', sampleDay);
    dirs.push(dirname(stateDir));
    // A ledger first (a run stopped at its first step): the switch is kept in it.
    expect((await savepoint(args('run', '--run-id', 'before', '--max-steps', '1'))).code).toBe(3);
    expect(await savepoint(['--state-dir', stateDir, 'kill', '--all', '--reason', 'incident'])).toMatchObject({ code: 0, stdout: 'global kill switch on: every run stops before its next step\n' });
    const run = await savepoint(args('run', '--approve', 'reject'));
    expect(run.code, run.stderr).toBe(3);
    expect(run.stdout).toMatch(/: killed — killed \(all runs\) by \S+ at \S+: incident$/m);
    expect(run.stdout).toMatch(/^savepoint: the global kill switch is on: every run on this state directory stops before its next step \(`savepoint --state-dir \S+ kill --all --lift` lifts it\)$/m);
  });

  it('stops a run waiting for a person now, as kill <runId> does, not when its approval is decided', async () => {
    const { stateDir, runId, output, exited } = await runWaitingForApproval('kill-all-waiting');

    const kill = await savepoint(['--state-dir', stateDir, 'kill', '--all', '--reason', 'incident']);
    expect(kill.stderr).toBe('');
    expect(kill).toMatchObject({ code: 0, stdout: `global kill switch on: every run stops before its next step; 1 run waiting for a person stopped now (${runId})\n` });
    expect(await exited).toBe(3);
    expect(output()).toContain(`: killed — killed by ${localUser()} at `);
    await expectReplayedIdentically(stateDir, runId);
  });
});

describe('a run killed by the global kill switch', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    await harness?.stack.close();
    harness = undefined;
  });

  it('stays killed after the switch is lifted: starting its run id again does nothing', async () => {
    harness = await startHarness();
    const { ledger } = harness.stack;
    await ledger.setGlobalKill({ by: 'ops', at: '2026-11-29T03:00:00.000Z', reason: 'incident' });
    const killed = await harness.run({ runId: 'global', input: { date: sampleDay.date } });
    expect(JSON.parse(killed.output!)).toMatchObject({ status: 'killed' });
    await ledger.setGlobalKill(undefined);

    const again = await harness.run({ runId: 'global', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 1 } });
    expect(again.status).toBe('SUCCEEDED');
    expect(again.states['CallModel']).toBeUndefined();
    expect(again.states['NothingToDo']).toBeDefined();
    expect(await ledger.getRun('global')).toMatchObject({ status: 'killed', steps: 0, executions: [killed.executionArn] });
  });
});
