import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cachedTemplate } from '../../local/template/cache.js';
import { onPath } from '../support/on-path.js';

/**
 * Terminal escape injection, through the real CLI: a refund request whose id carries control
 * sequences (the provider's data, so the model's arguments, so the approval's summary) reaches
 * the run's progress and `savepoint approvals` as visible escapes, never as raw control bytes.
 */

const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;
const exec = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), 'savepoint-terminal-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const env = { ...process.env, SAVEPOINT_AGENT: 'refund-reconciler' };
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/;
const EVIL = 'rr_big\u001b[2K\r\u001b[8m\u202e';
let template: string;
let day: string;

beforeAll(async () => {
  template = join(root, 'template.json');
  writeFileSync(template, JSON.stringify(await cachedTemplate('refund-reconciler')));
  const sample = JSON.parse(readFileSync(new URL('../../agents/refund-reconciler/sample-day.json', import.meta.url), 'utf8')) as { refundRequests: { id: string; amountCents: number }[] };
  const large = sample.refundRequests.find((request) => request.amountCents > 50_000)!;
  large.id = EVIL;
  day = join(root, 'day.json');
  writeFileSync(day, JSON.stringify(sample));
});

it('a model-chosen approval summary full of control sequences is printed escaped, in the run and in `approvals`', async () => {
  const stateDir = join(root, 'state');
  const run = spawn(process.execPath, [bin, '--state-dir', stateDir, 'run', '--template', template, '--world-data', day, '--approve', 'wait', '--approval-timeout', '3600'], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let output = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (/⏸ {2}approval .*rr_big/.test(output)) resolve();
      };
      run.stdout.on('data', onData);
      run.stderr.on('data', onData);
      run.on('exit', () => reject(new Error(`the run ended before asking for an approval:\n${output}`)));
    });
    const approvals = await exec(process.execPath, [bin, '--state-dir', stateDir, 'approvals'], { env });
    for (const printed of [output, approvals.stdout, approvals.stderr]) expect(printed).not.toMatch(CONTROL);
    expect(approvals.stdout).toContain('rr_big\\u001b[2K\\u000d\\u001b[8m\\u202e');
    expect(output).toContain('rr_big\\u001b[2K\\u000d\\u001b[8m\\u202e');
    // JSON keeps the data: the escapes read back as the id itself.
    const json = await exec(process.execPath, [bin, '--state-dir', stateDir, 'approvals', '--json'], { env });
    expect(json.stdout).not.toMatch(CONTROL);
    expect((JSON.parse(json.stdout) as { approvals: { summary: string }[] }).approvals[0]!.summary).toContain(EVIL);
  } finally {
    run.kill('SIGTERM');
    await new Promise((resolve) => run.once('close', resolve));
  }
});

it('`--approve prompt` withdraws its question when the approval expires unanswered, and the run ends on its own', async () => {
  const stateDir = join(root, 'prompt');
  // stdin stays open and silent: a person who never answers.
  const run = spawn(process.execPath, [bin, '--state-dir', stateDir, 'run', '--template', template, '--approve', 'prompt', '--approval-timeout', '1'], { stdio: ['pipe', 'pipe', 'pipe'], env });
  let output = '';
  run.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  run.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  try {
    const code = await new Promise<number | null>((resolve) => run.on('close', resolve));
    expect(output).toMatch(/approve issue_refund .*\? \[y\/N\]/);
    expect(output).toMatch(/approval apv_\S+: no longer asked \(its deadline passed\)/);
    expect(code, output).toBe(0);
  } finally {
    run.stdin.end();
    run.kill('SIGKILL');
  }
}, 60_000);

/** A `savepoint run` whose stdin is `stdin`, and its output once it has ended. */
async function runWith(stdin: 'ignore' | string, ...args: string[]): Promise<{ code: number | null; output: string }> {
  const run = spawn(process.execPath, [bin, 'run', '--template', template, '--approve', 'prompt', ...args], { stdio: [stdin === 'ignore' ? 'ignore' : 'pipe', 'pipe', 'pipe'], env });
  if (stdin !== 'ignore') run.stdin!.end(stdin);
  let output = '';
  run.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  run.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => run.on('close', resolve));
  return { code, output };
}

it('answers piped to `--approve prompt` decide its approvals in order, none lost between questions', async () => {
  // The sample day asks two approvals: approve the first; reject the second, with a reason.
  const { code, output } = await runWith('y\nn\nnot this one\n', '--state-dir', join(root, 'piped'), '--approval-timeout', '3600');
  expect(code, output).toBe(0);
  expect(output.match(/✓ {2}approval apv_\S+: (approved|rejected)/g)).toEqual([expect.stringMatching(/approved$/), expect.stringMatching(/rejected$/)]);
  expect(output).toMatch(/Approval\.Rejected — not this one/);
  expect(output).toMatch(/approvals +2 \(1 approved, 1 rejected, 0 expired, 0 pending\)/);
}, 60_000);

it('`--approve prompt` whose input has ended decides nothing: each approval waits, as with --approve wait, and says how to decide it', async () => {
  const stateDir = join(root, 'no-input');
  const { code, output } = await runWith('ignore', '--state-dir', stateDir, '--approval-timeout', '1');
  expect(code, output).toBe(0);
  expect(output).toMatch(new RegExp(`✗ {2}approval (apv_\\S+): not decided here \\(the terminal's input has ended\\): \`savepoint --state-dir ${stateDir.replace(/[/.]/g, '\\$&')} approve \\1\` or reject decides it by \\S+, else it escalates`));
  expect(output).toMatch(/approvals +2 \(0 approved, 0 rejected, 2 expired, 0 pending\)/);
}, 60_000);

/** util-linux's `script` (Debian's bsdutils), which CI installs (.ci/run): without it the terminal test skips itself. */
const script = onPath('script');

it.skipIf(!script)('Ctrl-C at a question in a terminal stops the command, as at any other time (the run saved)', async () => {
  // A terminal of its own (util-linux's `script`, a pseudo-terminal): Ctrl-C typed there is SIGINT
  // only while the terminal is in its own mode, not in the raw mode readline sets for its line editor.
  const stateDir = join(root, 'ctrl-c');
  const command = [process.execPath, bin, '--state-dir', stateDir, 'run', '--template', template, '--approve', 'prompt', '--approval-timeout', '3600'].map((word) => `'${word}'`).join(' ');
  const terminal = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env });
  let output = '';
  const asked = new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('[y/N]')) resolve();
    };
    terminal.stdout.on('data', onData);
    terminal.stderr.on('data', onData);
  });
  const closed = new Promise<number | null>((resolve) => terminal.on('close', resolve));
  try {
    await Promise.race([asked, closed]);
    terminal.stdin.write('\u0003');
    expect(await closed, output).toBe(130);
    expect(output).toMatch(/✗ {2}approval apv_\S+: no longer asked \(the command is stopping; the run is saved\)/);
    expect(output).toMatch(/savepoint: interrupted — the run is saved; resume it with `savepoint --state-dir \S+ resume refunds-2026-11-28`/);
  } finally {
    terminal.kill('SIGKILL');
  }
}, 60_000);
