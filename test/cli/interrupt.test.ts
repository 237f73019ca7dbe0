import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sampleDay } from '../support/refund-harness.js';
import { runCommand } from '../../cli/run.js';
import { ledgerOf, savepoint, smallDay, workspace } from '../support/cli-process.js';

/**
 * A Ctrl-C soon after the start says one true thing: the run is saved (it exists: resume it), or
 * nothing started. It used to say both when the signal came before StartRun had recorded the run.
 */

const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('an early Ctrl-C', () => {
  it('says either that the run is saved (and it is) or that nothing started, never both', async () => {
    const { stateDir, args } = await workspace('interrupt', sampleDay);
    dirs.push(dirname(stateDir));
    const child = spawn(process.execPath, [bin, ...args('run')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let sent = false;
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      // The console's line comes just before the run is started: the earliest moment after setup.
      if (!sent && /savepoint: console http/.test(output)) {
        sent = true;
        child.kill('SIGINT');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(130);
    // The command it names works pasted as it is: it names the state directory, which is not the default.
    const saved = /the run is saved; resume it with `savepoint --state-dir (\S+) resume (\S+)`/.exec(output);
    const nothing = /SIGINT before the run started: stopped; the state directory is as it was/.test(output);
    expect([Boolean(saved), nothing]).toContainEqual(true);
    expect(Boolean(saved) && nothing).toBe(false);
    if (saved) {
      expect(saved[1]).toBe(stateDir);
      expect((await ledgerOf(stateDir, saved[2]!)).run).toMatchObject({ status: 'running' });
    }
  });

  it('of a run in memory (--memory) says that it ends with the process: nothing is saved to resume', async () => {
    const { stateDir, args } = await workspace('memory', smallDay); // its first approval at its first request
    dirs.push(dirname(stateDir));
    // Interrupted while it waits for its first approval: mid-run, whatever the machine's speed.
    const child = spawn(process.execPath, [bin, ...args('run', '--memory', '--approve', 'wait', '--approval-timeout', '600')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let interrupted = false;
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      // One Ctrl-C: a second one would end the process at once.
      if (/⏸ {2}approval /.test(output) && !interrupted) interrupted = child.kill('SIGINT');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    expect(await new Promise((resolve) => child.on('exit', resolve)), output).toBe(130);
    expect(output).toMatch(/^savepoint: interrupted — the run was in memory \(--memory\) and ends with this process: nothing can resume it$/m);
    expect(output).not.toMatch(/saved|resume it with/);
  });

  it('is resumed with the approval wait the run started with, which the resume banner states', async () => {
    const { stateDir, args } = await workspace('banner', smallDay); // its first approval at its first request
    dirs.push(dirname(stateDir));
    const child = spawn(process.execPath, [bin, ...args('run', '--approve', 'wait', '--approval-timeout', '600')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let interrupted = false;
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (/⏸ {2}approval /.test(output) && child.signalCode === null && !interrupted) interrupted = child.kill('SIGINT');
    });
    expect(await new Promise((resolve) => child.on('exit', resolve))).toBe(130);
    const runId = /resume it with `savepoint --state-dir \S+ resume (\S+)`/.exec(output)![1]!;

    // `savepoint resume <runId>`, in process: unattended, this command line alone would wait 1 s.
    const value = (name: string) => args()[args().indexOf(name) + 1];
    const lines: string[] = [];
    let killed: Promise<unknown> | undefined;
    const out = (line: string) => {
      lines.push(line);
      // Once the banner is out, the run is killed from another command (the resumed run waits on the approval).
      if (line.startsWith('savepoint: approvals ')) killed ??= savepoint(['--state-dir', stateDir, 'kill', runId]);
    };
    const resumed = await runCommand(
      { stateDir, worldData: value('--world-data'), template: value('--template'), runId, resume: true, memory: false, json: false, failRate: '0', seed: '1', crashRate: '0', approve: 'wait' },
      { out, err: out, interactive: false },
    );
    expect(await killed).toMatchObject({ code: 0 });
    expect(lines).toContain(`savepoint: approvals wait 600 s for \`savepoint --state-dir ${stateDir} approve <id>\`, then escalate`);
    expect(resumed.report.status).toBe('killed');
  });
});
