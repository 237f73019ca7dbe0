import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect } from '../../client/index.js';
import { ledgerOf, leftBehind, savepoint, smallDay, startUntil, workspace } from '../support/cli-process.js';

/**
 * `savepoint run` is one-shot: it ends with its own run. A run an application started through its
 * runs API meanwhile is not driven on by it; the command says so, naming the run and what resumes
 * it (`savepoint serve` drives every run to its end: test/client/connect-serve.test.ts).
 */
const { children, dirs } = leftBehind();

describe('savepoint run with a run started through its runs API', () => {
  it('says, as it ends, which runs it leaves unfinished and what resumes them', async () => {
    // A day of six refund requests (smallDay): the run's approvals decided to its end.
    const { stateDir, args } = await workspace('run-leaves', smallDay);
    dirs.push(dirname(stateDir));
    const { reached, output, exited } = startUntil(args('run', '--run-id', 'own-run', '--approve', 'wait', '--approval-timeout', '600'), children);
    await reached;

    const client = await connect({ stateDir });
    // A run that stops at its first budget check to ask a person for more: it waits while `run` ends.
    await client.start({ input: { date: smallDay.date }, runId: 'app-run', config: { maxSteps: 1, onBudgetExceeded: 'ask', approvalTimeoutSeconds: 600 } });
    expect(await client.wait('app-run', { untilInput: true })).toMatchObject({ lifecycle: 'input_required' });
    // The command's engine goes with it: a wait then has nothing to ask (connect's client would wait
    // for a serve to come back), so it ends when the command does.
    const commandEnded = new AbortController();
    void exited.then(() => commandEnded.abort());
    for (;;) {
      const own = await client.wait('own-run', { untilInput: true, signal: commandEnded.signal }).catch(() => undefined);
      if (!own || own.lifecycle !== 'input_required') break;
      for (const approval of await client.approvals('own-run')) await client.decide(approval.approvalId, 'approve').catch(() => undefined);
    }
    expect(await exited).toBe(0);
    expect(output()).toMatch(/^savepoint: this command ends with its run, and 1 other run is left unfinished \(app-run, waiting for a person\): they are saved, and resume when the next engine starts on this state directory/m);
    expect((await ledgerOf(stateDir, 'app-run')).run).toMatchObject({ status: 'running' });
  }, 180_000);

  it('ends with its run when a run its watchdog resumed waits for a person, and leaves that run waiting', async () => {
    const { stateDir, args } = await workspace('run-leaves-waiting', smallDay);
    dirs.push(dirname(stateDir));
    // A run whose process dies (SIGKILL) while it waits for a person, with a day to decide.
    const first = startUntil(args('run', '--run-id', 'waiter', '--approve', 'wait', '--approval-timeout', '86400'), children);
    await first.reached;
    first.child.kill('SIGKILL');
    await first.exited;

    // Another run on the state directory: the watchdog resumes the waiter, which asks again; this
    // command ends with its own run (stopped at its step budget), not a day later with the waiter's.
    const other = await savepoint(args('run', '--run-id', 'quick', '--max-steps', '1', '--approve', 'wait'));
    expect(other.code, other.stderr).toBe(3);
    expect(other.stdout).toMatch(/^savepoint: watchdog: resumed run waiter, left running by a process that died/m);
    expect(other.stdout).toMatch(/^savepoint: this command ends with its run, and 1 other run is left unfinished \(waiter, waiting for a person\): they are saved/m);
    expect((await ledgerOf(stateDir, 'waiter')).run).toMatchObject({ status: 'running' });
  }, 180_000);
});
