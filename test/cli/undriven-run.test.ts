import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { leftBehind, savepoint, startUntil } from '../support/cli-process.js';

/**
 * After a SIGKILL the ledger still says `running` (issue 39, item 6): `status` says that nothing
 * drives the run and what to type, and `resume <runId>` with no `--agent` finds the agent — here
 * one run by path, which no name finds — from the module it ran from in that state directory.
 */

const agentModule = new URL('./fixtures/held-note.ts', import.meta.url).pathname;
const { children, dirs } = leftBehind();
const root = mkdtempSync(join(tmpdir(), 'savepoint-undriven-'));
dirs.push(root);

describe('a run whose process was killed', () => {
  it('is reported as driven by nothing, with the resume command; resume without --agent finishes it', async () => {
    const stateDir = join(root, 'state');
    // Its one write waits for a person (for 10 minutes): the run is running, waiting, when it is killed.
    const run = startUntil(['--state-dir', stateDir, 'run', '--agent', agentModule, '--input', '{"text":"lunch"}', '--approve', 'wait', '--approval-timeout', '600'], children);
    await run.reached;
    const runId = /savepoint: run (\S+) /.exec(run.output())![1]!;
    run.child.kill('SIGKILL');
    await run.exited;

    const status = await savepoint(['--state-dir', stateDir, 'status', runId]);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`run ${runId} \\(held-note .*\\): running`));
    expect(status.stdout).toContain(`nothing drives this run: no engine runs in ${stateDir} (the process that ran it stopped). Resume it: savepoint --state-dir ${stateDir} resume ${runId}\n`);
    const json = await savepoint(['--state-dir', stateDir, 'status', runId, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'running', driven: false });

    // The command status printed, with what a person decides here instead of at a terminal.
    const resumed = await savepoint(['--state-dir', stateDir, 'resume', runId, '--approve', 'approve', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ agent: 'held-note', status: 'succeeded', approvals: { approved: 1 } });
    const after = await savepoint(['--state-dir', stateDir, 'status', runId]);
    expect(after.stdout).not.toContain('nothing drives');
  }, 120_000);
});

describe('an input too large for the run it would start', () => {
  it('is refused before the engine starts: exit 2, one sentence, no state directory', async () => {
    const stateDir = join(root, 'too-large');
    const input = join(root, 'too-large.json');
    writeFileSync(input, JSON.stringify({ text: 'x'.repeat(300 * 1024) }));
    const result = await savepoint(['--state-dir', stateDir, 'run', '--agent', agentModule, '--input', input]);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/^savepoint: --input: the run request is \d+ bytes as its execution's input, over Step Functions' 262144: pass what is large by reference/);
    expect(existsSync(stateDir)).toBe(false);
    // Within the execution's input, but its prompt quotes it: the run's record would not fit.
    writeFileSync(input, JSON.stringify({ text: 'x'.repeat(200 * 1024) }));
    const quoted = await savepoint(['--state-dir', stateDir, 'run', '--agent', agentModule, '--input', input]);
    expect(quoted.code, quoted.stderr).toBe(2);
    expect(quoted.stderr).toMatch(/^savepoint: --input: the run's record would hold \d+ bytes of its input and the prompt the agent makes of it, over the 344064/);
    expect(existsSync(stateDir)).toBe(false);
  }, 60_000);
});
