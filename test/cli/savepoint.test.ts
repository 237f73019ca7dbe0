import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;
const exec = promisify(execFile);

/** Runs the CLI as a newcomer would (no terminal), returning its exit code and output. */
async function savepoint(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, ...args], { timeout: 90_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-cli-'));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

describe('savepoint CLI', () => {
  it('exits 2 with a message naming the option for bad input', async () => {
    const badRate = await savepoint('run', '--agent', 'refund-reconciler', '--memory', '--fail-rate', '2');
    expect(badRate.code).toBe(2);
    expect(badRate.stderr).toMatch(/invalid options: --fail-rate: Too big/);
    const badDate = await savepoint('run', '--agent', 'refund-reconciler', '--memory', '--input', '{"date":"2026-13-45x"}');
    expect(badDate.code).toBe(2);
    expect(badDate.stderr).toMatch(/input of agent refund-reconciler: date: expected a date YYYY-MM-DD/);
    const noAgent = await savepoint('run', '--agent', 'no-such-agent', '--memory');
    expect(noAgent.code).toBe(2);
    expect(noAgent.stderr).toMatch(/no agent named "no-such-agent"/);
  });

  it('runs the nightly job, lets a person decide approvals from another command, and reports', async () => {
    const dir = ['--state-dir', stateDir];
    const run = spawn(process.execPath, [bin, ...dir, 'run', '--agent', 'refund-reconciler', '--json', '--approve', 'wait', '--approval-timeout', '120'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    run.stdout.on('data', (chunk) => (stdout += chunk));
    run.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number>((resolve) => run.on('exit', (code) => resolve(code ?? -1)));

    // Decide the two large refunds while the run waits: one approved, one rejected. The run
    // announces each approval as it asks (no polling): another command lists and decides it.
    const announcement = (index: number) =>
      new Promise<string>((resolve) => {
        const check = () => {
          const ids = [...stderr.matchAll(/⏸ {2}approval (\S+):/g)].map((match) => match[1]!);
          if (ids.length <= index) return;
          run.stderr.off('data', check);
          resolve(ids[index]!);
        };
        run.stderr.on('data', check);
        check();
      });
    const decided: string[] = [];
    for (const verb of ['approve', 'reject']) {
      const approvalId = await announcement(decided.length);
      const listed = await savepoint(...dir, 'approvals', '--json');
      expect(listed, listed.stderr).toMatchObject({ code: 0 });
      expect((JSON.parse(listed.stdout) as { approvals: { approvalId: string }[] }).approvals.map((approval) => approval.approvalId)).toContain(approvalId);
      const decision = await savepoint(...dir, verb, approvalId, '--reason', 'checked by the test');
      expect(decision, decision.stderr).toMatchObject({ code: 0 });
      decided.push(approvalId);
    }
    expect(await exited, stderr).toBe(0);

    const report = JSON.parse(stdout) as Record<string, any>;
    expect(report).toMatchObject({
      runId: 'refunds-2026-11-28',
      status: 'succeeded',
      agent: 'refund-reconciler',
      summary: { requests: 25, issued: 17, skipped: 4, flagged: 4, escalated: 1 },
      tools: { issue_refund: { ok: 17, rejected: 1, guarantee: 'exactly-once' }, get_order: { guarantee: 'read' } },
      approvals: { approved: 1, rejected: 1, pending: 0 },
      inFlight: 0,
      execution: { status: 'SUCCEEDED' },
    });
    expect(report.execution.lambdaInvocations).toBeGreaterThan(report.steps);
    expect(report.execution.retries).toBe(0);
    expect(stderr).toMatch(/approval apv_/);

    // With the engine gone, the other commands open the state directory themselves.
    const status = await savepoint(...dir, 'status', 'refunds-2026-11-28', '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({ status: 'succeeded', steps: report.steps, summary: { issued: 17 } });
    // status, runs and approvals end their process once their output is written (exitWhenWritten):
    // all of it printed, and the directory they opened released (no lock left for the next command).
    const runs = await savepoint(...dir, 'runs', '--json');
    expect((JSON.parse(runs.stdout) as { runs: { runId: string }[] }).runs.map((run) => run.runId)).toEqual(['refunds-2026-11-28']);
    expect(JSON.parse((await savepoint(...dir, 'approvals', '--json')).stdout)).toEqual({ approvals: [] });
    expect(['owner.lock', 'ledger.lock'].filter((name) => existsSync(join(stateDir, name)))).toEqual([]);
    const payments = JSON.parse((await savepoint(...dir, 'world', '--agent', 'refund-reconciler', '--json')).stdout) as { refunds: { refundRequestId: string }[] };
    expect(payments.refunds).toHaveLength(17);
    expect(new Set(payments.refunds.map((refund) => refund.refundRequestId)).size).toBe(17);

    // The run id is the idempotency key: running again pays nothing more.
    const again = await savepoint(...dir, 'run', '--agent', 'refund-reconciler', '--json');
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/had already finished/);
    expect(JSON.parse((await savepoint(...dir, 'world', '--agent', 'refund-reconciler', '--json')).stdout).refunds).toHaveLength(17);

    expect(await savepoint(...dir, 'status', 'no-such-run')).toMatchObject({ code: 2, stderr: expect.stringMatching(/no run no-such-run/) });
    expect(await savepoint(...dir, 'reject', decided[0]!)).toMatchObject({ code: 2, stderr: expect.stringMatching(/already approved/) });

    // `runs` says when --limit leaves runs out: on stderr (its stdout is the runs alone), in the JSON as `more`.
    const all = await savepoint(...dir, 'runs', '--limit', '1');
    expect(all).toMatchObject({ code: 0, stderr: '' });
    const second = await savepoint(...dir, 'run', '--agent', 'refund-reconciler', '--run-id', 'refunds-second', '--approve', 'reject', '--json');
    expect(second.code, second.stderr).toBe(0);
    const cut = await savepoint(...dir, 'runs', '--limit', '1');
    expect(cut.code).toBe(0);
    expect(cut.stdout.trim().split('\n')).toHaveLength(1);
    expect(cut.stdout).toMatch(/^refunds-second /);
    expect(cut.stderr).toBe('savepoint: the newest 1 runs shown, and there are more: --limit <n> shows more (at most 1000)\n');
    const cutJson = await savepoint(...dir, 'runs', '--limit', '1', '--json');
    expect(cutJson.stderr).toBe('');
    expect(JSON.parse(cutJson.stdout)).toMatchObject({ runs: [{ runId: 'refunds-second' }], more: true });
    expect(JSON.parse((await savepoint(...dir, 'runs', '--limit', '2', '--json')).stdout)).not.toHaveProperty('more');
  }, 180_000);
});
