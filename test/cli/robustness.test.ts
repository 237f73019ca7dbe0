import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDay } from '../../agents/refund-reconciler/day-file.js';
import { openLedger } from '../../cli/state.js';
import { ErrorNames } from '../../lambdas/shared/errors.js';
import { startDynamo } from '../../local/services/dynamodb.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { onPath } from '../support/on-path.js';

/**
 * Nothing silently wrong, through the real CLI as a subprocess: bad input exits 2 naming the file
 * or field and changes no state; a state directory has one owner at a time; a stop signal saves
 * the run and leaves the state directory whole. Waits are on the processes' output, never on timers.
 */

const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;
const exec = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), 'savepoint-robust-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const sampleDay = JSON.parse(readFileSync(new URL('../../agents/refund-reconciler/sample-day.json', import.meta.url), 'utf8')) as Record<string, any>;
let template: string;

beforeAll(async () => {
  // One template file for every process below (`--template`), read from the on-disk cache (no synthesis in the worker).
  template = join(root, 'template.json');
  writeFileSync(template, JSON.stringify(await cachedTemplate('refund-reconciler')));
});

/** The agent every command here runs: the refund reconciler (its world data is a day file). */
const env = { ...process.env, SAVEPOINT_AGENT: 'refund-reconciler' };

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to its end (no terminal), returning its exit code and output. */
async function savepoint(...args: string[]): Promise<Result> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, ...args], { timeout: 90_000, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Background processes still running when the tests end (a failed test): killed, not leaked. */
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** A CLI process in the background: wait for its output to say something, signal it, wait for its end. */
function background(...args: string[]) {
  const child: ChildProcess = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number>((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? -1 : -2))));
  return {
    child,
    output: () => output,
    exited,
    /** Resolves once the output matches; rejects if the process ends first. */
    saw: (pattern: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!pattern.test(output)) return;
          listeners.delete(check);
          resolve();
        };
        listeners.add(check);
        check();
        void exited.then(() => {
          if (listeners.delete(check)) reject(new Error(`exited before printing ${pattern}:\n${output}`));
        });
      }),
  };
}

const oneSentence = (stderr: string) => {
  expect(stderr).not.toMatch(/^\s+at /m); // no stack trace
  expect(stderr.trim().split('\n')).toHaveLength(1);
};

describe('a bad --day file or --date exits 2 naming it, and changes no state', () => {
  const dayFile = (name: string, content: string | Buffer) => {
    const path = join(root, name);
    writeFileSync(path, content);
    return path;
  };
  const withField = (change: (day: Record<string, any>) => void) => {
    const day = structuredClone(sampleDay);
    change(day);
    return JSON.stringify(day);
  };

  const CASES: [string, () => string, RegExp][] = [
    ['a missing file', () => join(root, 'no-such-day.json'), /cannot read the day file .*no-such-day\.json: no such file or directory/],
    ['a directory', () => root, /cannot read the day file .*: it is a directory/],
    ['an empty file', () => dayFile('empty.json', ''), /day file .*empty\.json is empty/],
    ['a file of blanks', () => dayFile('blank.json', '  \n\n'), /day file .*blank\.json is empty/],
    ['a file that is not JSON', () => dayFile('not-json.json', '{"date": '), /day file .*not-json\.json is not JSON/],
    ['an oversized file', () => dayFile('huge.json', Buffer.alloc(1024 * 1024 + 1, ' ')), /day file .*huge\.json is larger than the 1048576 bytes/],
    ['JSON that is not a day', () => dayFile('array.json', '[]'), /invalid day file .*array\.json: Invalid input: expected object, received array/],
    ['an impossible date', () => dayFile('feb-30.json', withField((day) => (day.date = '2026-02-30'))), /invalid day file .*feb-30\.json: date: 2026-02-30 is not a calendar date/],
    [
      'a reason too long for the provider',
      () => dayFile('long-reason.json', withField((day) => (day.refundRequests[0].reason = 'x'.repeat(600_000)))),
      /invalid day file .*long-reason\.json: refundRequests\.0\.reason: Too big: expected string to have <=500 characters/,
    ],
    [
      'an amount too large for the provider',
      () => dayFile('huge-amount.json', withField((day) => (day.orders[0].totalCents = 1e15))),
      /invalid day file .*huge-amount\.json: orders\.0\.totalCents: Too big/,
    ],
  ];
  // Every case against the agent's own check (what the CLI calls before it makes anything); three
  // kinds (unreadable, not JSON, a field) also through the CLI process: exit 2, one sentence, no
  // state. A process per case would prove the same mapping ten times over (~1.5 s of CPU each).
  const THROUGH_THE_CLI = ['a missing file', 'a file that is not JSON', 'an impossible date'];

  it.each(CASES)('%s: invalid input naming the file', (_case, path, message) => {
    expect(() => loadDay(path())).toThrow(expect.objectContaining({ name: ErrorNames.InvalidInput, message: expect.stringMatching(message) }));
  });

  it.each(CASES.filter(([name]) => THROUGH_THE_CLI.includes(name)))('%s: exit 2 through the CLI', async (_case, path, message) => {
    const stateDir = join(root, `untouched-${Math.random().toString(36).slice(2)}`);
    const result = await savepoint('--state-dir', stateDir, 'run', '--template', template, '--world-data', path());
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    oneSentence(result.stderr);
    expect(existsSync(stateDir)).toBe(false); // nothing made, no day kept
  });

  // One date through the CLI (the calendar's every rule is test/unit/dates.test.ts's), and an input
  // that is not JSON: refused before the engine starts, so the state directory is not made either.
  it.each([
    ['a date off the calendar', JSON.stringify({ date: '2026-13-45' }), /^savepoint: invalid input of agent refund-reconciler: date: 2026-13-45 is not a calendar date: month 13 is not 01–12$/m],
    ['an input that is not JSON', '{"date": ', /^savepoint: input: not valid JSON \(/],
  ])('--input with %s', async (_case, input, message) => {
    const stateDir = join(root, `untouched-${Math.random().toString(36).slice(2)}`);
    const result = await savepoint('--state-dir', stateDir, 'run', '--template', template, '--input', input);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    oneSentence(result.stderr);
    expect(existsSync(stateDir)).toBe(false);
  });

  // An agent without a world has no input to fall back on (the world's `defaultInput`): refused
  // before the stack starts, not once it had made the state directory and printed its console.
  it('no --input for an agent whose world suggests none, named before anything is made', async () => {
    const stateDir = join(root, `untouched-${Math.random().toString(36).slice(2)}`);
    const result = await savepoint('--state-dir', stateDir, 'run', '--agent', new URL('fixtures/held-note.ts', import.meta.url).pathname);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/^savepoint: input: agent held-note needs an input: --input <json\|file>$/m);
    oneSentence(result.stderr);
    expect(existsSync(stateDir)).toBe(false);
  });

  // The refund reconciler sets no maxBudgets: its own budgets are the most a run may ask for
  // (lambdas/runs/budget-caps.ts), named as typed, before the engine starts.
  it('a budget above what a run of the agent may ask for, named as typed', async () => {
    const stateDir = join(root, `untouched-${Math.random().toString(36).slice(2)}`);
    const result = await savepoint('--state-dir', stateDir, 'run', '--template', template, '--max-steps', '100000', '--max-dollars', '5');
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/^savepoint: --max-steps: 100000 is above the most a run of this agent may ask for \(400; the agent's or the deployment's maxBudgets\.maxSteps raises it\)$/m);
    oneSentence(result.stderr);
    expect(existsSync(stateDir)).toBe(false);
  });

  // A crash aimed at a tool the agent does not have never happens: the run finished and a crash
  // test passed without any process being killed. Refused, naming the agent's tools.
  it('a --crash-at tool the agent does not have, named with the tools it has, before anything is made', async () => {
    const stateDir = join(root, `untouched-${Math.random().toString(36).slice(2)}`);
    const result = await savepoint('--state-dir', stateDir, 'run', '--template', template, '--crash-at', 'after-commit:issue_refnud');
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/^savepoint: --crash-at: agent refund-reconciler has no tool "issue_refnud" \(it has list_refund_requests, get_order, get_payment, issue_refund, flag_for_review, post_report\): the crash would never happen$/m);
    oneSentence(result.stderr);
    expect(existsSync(stateDir)).toBe(false);
  });

  // A number option is decimal digits (an amount: with a fraction), refused otherwise naming the option
  // as typed: read by JavaScript's Number(), `0x10` ran as 16, `1e2` as 100 and `5.0` as 5.
  it.each([
    ['--max-steps', '0x10', 'a whole number in decimal digits'],
    ['--max-steps', '1e2', 'a whole number in decimal digits'],
    ['--max-steps', '5.0', 'a whole number in decimal digits'],
    ['--max-dollars', '0x1', 'a number in decimal digits \\(e\\.g\\. 2\\.5\\)'],
  ])('a number option in another notation (%s %s), named as typed, before anything is made', async (option, value, expected) => {
    const stateDir = join(root, `untouched-${Math.random().toString(36).slice(2)}`);
    const result = await savepoint('--state-dir', stateDir, 'run', '--template', template, option, value);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^savepoint: invalid options: ${option}: expected ${expected}, not "${value.replace('.', '\\.')}"$`, 'm'));
    oneSentence(result.stderr);
    expect(existsSync(stateDir)).toBe(false);
  });

  // The user set the variable and typed no --approval-timeout: the message names what they set.
  it('a bad $SAVEPOINT_APPROVAL_TIMEOUT, named as the variable, before anything is made', async () => {
    const stateDir = join(root, `untouched-${Math.random().toString(36).slice(2)}`);
    const run = exec(process.execPath, [bin, '--state-dir', stateDir, 'run', '--template', template], { timeout: 90_000, env: { ...env, SAVEPOINT_APPROVAL_TIMEOUT: 'abc' } });
    await expect(run).rejects.toMatchObject({ code: 2, stderr: 'savepoint: invalid options: $SAVEPOINT_APPROVAL_TIMEOUT: expected a whole number in decimal digits, not "abc"\n' });
    expect(existsSync(stateDir)).toBe(false);
  });

  it("fork's --at in another notation (0x1), named, before the parent is read", async () => {
    const stateDir = join(root, `untouched-${Math.random().toString(36).slice(2)}`);
    const result = await savepoint('--state-dir', stateDir, 'fork', 'some-run', '--at', '0x1', '--yes');
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toBe('savepoint: invalid options: --at: expected a whole number in decimal digits, not "0x1"\n');
    expect(existsSync(stateDir)).toBe(false);
  });

  // JSON that is not a template was run (null: ignored, the stack synthesized instead) or failed
  // once the stack started (exit 1, the state directory made): refused before, naming the file.
  it.each([
    ['JSON null', 'template-null.json', 'null', /^savepoint: --template \S+template-null\.json: not a CloudFormation template \(no "Resources" object of resources\)$/m],
    ['an object with no resources', 'template-empty.json', '{}', /^savepoint: --template \S+template-empty\.json: not a CloudFormation template \(no "Resources" object of resources\)$/m],
    [
      'a template with no state machine',
      'template-no-machine.json',
      '{"Resources":{"Queue":{"Type":"AWS::SQS::Queue"}}}',
      /^savepoint: --template \S+template-no-machine\.json: The template has no AWS::StepFunctions::StateMachine resource$/m,
    ],
    [
      'a state machine with no definition',
      'template-no-definition.json',
      '{"Resources":{"Machine":{"Type":"AWS::StepFunctions::StateMachine","Properties":{}}}}',
      /^savepoint: --template \S+template-no-definition\.json: state machine Machine has neither DefinitionString nor Definition \(DefinitionS3Location is not supported\)$/m,
    ],
  ])('a --template file that is not a template of the agent: %s', async (_case, name, content, message) => {
    const file = dayFile(name, content);
    const stateDir = join(root, `untouched-${Math.random().toString(36).slice(2)}`);
    const result = await savepoint('--state-dir', stateDir, 'run', '--template', file);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(message);
    oneSentence(result.stderr);
    expect(existsSync(stateDir)).toBe(false);
  });

  it("keeps the state directory's day when a later --day is invalid", async () => {
    const stateDir = join(root, 'kept-day');
    mkdirSync(stateDir);
    writeFileSync(join(stateDir, 'world-data.json'), JSON.stringify(sampleDay));
    const bad = dayFile('bad-for-kept.json', withField((day) => (day.refundRequests[1].id = 'r'.repeat(300))));
    const result = await savepoint('--state-dir', stateDir, 'run', '--template', template, '--world-data', bad);
    expect(result).toMatchObject({ code: 2, stderr: expect.stringMatching(/refundRequests\.1\.id: Too big/) });
    expect(JSON.parse(readFileSync(join(stateDir, 'world-data.json'), 'utf8'))).toEqual(sampleDay);
  });
});

describe('a state directory that cannot be used is one sentence and exit 2', () => {
  it('a file', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'not a directory');
    const result = await savepoint('--state-dir', file, 'run', '--template', template);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/the state directory .*a-file is a file, not a directory/);
    oneSentence(result.stderr);
    expect(readFileSync(file, 'utf8')).toBe('not a directory');
  });

  it('under a file', async () => {
    const file = join(root, 'a-file-above');
    writeFileSync(file, 'not a directory');
    const result = await savepoint('--state-dir', join(file, 'state'), 'run', '--template', template);
    expect(result).toMatchObject({ code: 2, stderr: expect.stringMatching(/cannot create the state directory .*a-file-above\/state: a part of the path is a file/) });
    oneSentence(result.stderr);
  });

  it('unwritable', async () => {
    // root writes anywhere chmod says it may not: use a directory the kernel refuses it instead.
    const unwritable = process.getuid?.() === 0 ? '/sys/kernel' : join(root, 'read-only');
    if (unwritable !== '/sys/kernel') {
      mkdirSync(unwritable);
      chmodSync(unwritable, 0o500);
    }
    const result = await savepoint('--state-dir', unwritable, 'run', '--template', template);
    expect(result).toMatchObject({ code: 2, stderr: expect.stringMatching(/cannot write to the state directory .*: permission denied/) });
    oneSentence(result.stderr);
  });

  it('an invalid engine.json, named', async () => {
    const stateDir = join(root, 'bad-engine-file');
    mkdirSync(stateDir);
    writeFileSync(join(stateDir, 'engine.json'), '{"pid": "nope"');
    const result = await savepoint('--state-dir', stateDir, 'status', 'refunds-2026-11-28');
    expect(result).toMatchObject({ code: 2, stderr: expect.stringMatching(/bad-engine-file\/engine\.json is not a valid engine file/) });
    oneSentence(result.stderr);
  });

  it('a reading command on a directory that holds no ledger (a mistyped --state-dir) says so, and makes nothing there: no directory, no keys', async () => {
    const missing = join(root, 'never-made');
    const empty = join(root, 'made-empty');
    mkdirSync(empty);
    for (const [stateDir, command] of [[missing, ['status', 'refunds-2026-11-28']], [empty, ['runs']], [missing, ['approvals']]] as const) {
      const result = await savepoint('--state-dir', stateDir, ...command);
      expect(result, command[0]).toMatchObject({ code: 2, stderr: expect.stringMatching(/no ledger in .*: run `savepoint run` first/) });
    }
    expect(existsSync(missing)).toBe(false);
    expect(readdirSync(empty)).toEqual([]);
  });

  it('a ledger whose first run was killed before its table was made says there is no ledger, not "Requested resource not found"', async () => {
    const stateDir = join(root, 'half-made');
    mkdirSync(stateDir);
    const dynamo = await startDynamo({ path: join(stateDir, 'ledger') }); // what a kill -9 during startup leaves
    await dynamo.close();
    const result = await savepoint('--state-dir', stateDir, 'status', 'refunds-2026-11-28');
    expect(result.stderr).not.toMatch(/Requested resource not found/);
    expect(result).toMatchObject({ code: 2, stderr: expect.stringMatching(/no ledger in .*half-made: run `savepoint run` first/) });
    expect(existsSync(join(stateDir, 'owner.lock'))).toBe(false);
  });
});

describe('one owner per state directory, and stop signals that save the run', () => {
  const runId = 'refunds-2026-11-28';
  const leftBehind = (stateDir: string) => ['owner.lock', 'engine.json'].filter((name) => existsSync(join(stateDir, name)));
  /** A state directory with run `runId` saved by a SIGTERM, as the tests below find it: each works on a copy of its own. */
  let saved: string;
  beforeAll(async () => {
    saved = join(root, 'saved');
    const run = background('--state-dir', saved, 'run', '--template', template, '--approve', 'wait', '--approval-timeout', '3600');
    await run.saw(/— execution/);
    run.child.kill('SIGTERM');
    expect(await run.exited, run.output()).toBe(143);
  });
  const copyOfSaved = (name: string) => {
    const stateDir = join(root, name);
    cpSync(saved, stateDir, { recursive: true });
    return { stateDir, dir: ['--state-dir', stateDir] };
  };

  it('SIGTERM during startup leaves nothing half-made: no run, no lock, no day, a status that says so — or, handled once the run started, a saved run', async () => {
    const stateDir = join(root, 'killed-at-startup');
    const dir = ['--state-dir', stateDir];
    const run = background(...dir, 'run', '--template', template);
    await run.saw(/starting the local stack/);
    run.child.kill('SIGTERM');
    expect(await run.exited, run.output()).toBe(143);
    expect(leftBehind(stateDir)).toEqual([]);
    const status = await savepoint(...dir, 'status', runId);
    expect(status.stderr).not.toMatch(/Requested resource not found/);
    // A signal is handled when the process gets to it: a startup of a few ms may be over by then.
    // Either way the process says the one thing that is true, and the state directory agrees.
    if (/SIGTERM before the run started: stopped/.test(run.output())) {
      expect(run.output()).not.toMatch(/the run is saved/);
      expect(existsSync(join(stateDir, 'world-data.json'))).toBe(false);
      expect(status).toMatchObject({ code: 2, stderr: expect.stringMatching(`no run ${runId}`) });
    } else {
      expect(run.output()).toMatch(`SIGTERM received — the run is saved; resume it with \`savepoint --state-dir ${stateDir} resume ${runId}\``);
      expect(status).toMatchObject({ code: 0, stdout: expect.stringMatching(new RegExp(`^run ${runId} .*: running$`, 'm')) });
    }
  });

  it('two runs started at once: one runs, the other exits 2 naming the owner, with no "Database is closed"', async () => {
    const stateDir = join(root, 'contested-state');
    const dir = ['--state-dir', stateDir];
    const first = background(...dir, 'run', '--template', template, '--approve', 'wait', '--approval-timeout', '3600');
    const second = background(...dir, 'run', '--template', template, '--approve', 'wait', '--approval-timeout', '3600');
    const loser = await Promise.race([first.exited.then(() => first), second.exited.then(() => second)]);
    const winner = loser === first ? second : first;
    expect(await loser.exited, loser.output()).toBe(2);
    expect(loser.output()).toMatch(/the state directory .*state is in use by `savepoint run` \(pid \d+/);
    expect(loser.output()).not.toMatch(/Database is closed|LEVEL_|^\s+at /m);

    // The winner runs; SIGTERM saves it like Ctrl-C does.
    await winner.saw(/— execution/);
    winner.child.kill('SIGTERM');
    expect(await winner.exited, winner.output()).toBe(143);
    expect(winner.output()).toMatch(`SIGTERM received — the run is saved; resume it with \`savepoint --state-dir ${stateDir} resume ${runId}\``);
    expect(leftBehind(stateDir)).toEqual([]);
    const status = await savepoint(...dir, 'status', runId, '--json');
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ runId, status: 'running' });
  });

  it('a run, or another reader, started while a command reads the ledger exits 2 naming the reader, as when readers took the directory', async () => {
    const { stateDir, dir } = copyOfSaved('read-meanwhile');
    // A command that only reads (replay, status…) takes the ledger's lock, not the directory's: this process reads as `savepoint replay` does.
    const reading = await openLedger(stateDir, 'replay', 'read');
    try {
      expect(leftBehind(stateDir)).toEqual([]);
      const reader = new RegExp(`the state directory .*read-meanwhile is in use by \`savepoint replay\` \\(pid ${process.pid}, since [^)]+\\): try again when it has finished`);
      const run = await savepoint(...dir, 'run', '--template', template, '--run-id', 'started-meanwhile', '--approve', 'approve');
      expect(run, run.stderr).toMatchObject({ code: 2, stderr: expect.stringMatching(reader) });
      expect(run.stderr).not.toMatch(/ledger\.lock|^\s+at /m);
      const status = await savepoint(...dir, 'status', runId);
      expect(status, status.stderr).toMatchObject({ code: 2, stderr: expect.stringMatching(reader) });
      expect(leftBehind(stateDir)).toEqual([]);
    } finally {
      await reading.close();
    }
    const status = await savepoint(...dir, 'status', runId, '--json');
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ runId, status: 'running' });
    expect(existsSync(join(stateDir, 'ledger.lock'))).toBe(false);
  });

  it.each([
    ['SIGHUP', 129],
    ['SIGINT', 130],
  ] as const)('%s during a resume saves the run too (exit %i)', async (signal, code) => {
    const { stateDir, dir } = copyOfSaved(`resumed-${signal}`);
    const resume = background(...dir, 'resume', runId, '--template', template, '--approve', 'wait', '--approval-timeout', '3600');
    await resume.saw(/\(resumed\) — execution/);
    resume.child.kill(signal);
    expect(await resume.exited, resume.output()).toBe(code);
    expect(resume.output()).toMatch(`the run is saved; resume it with \`savepoint --state-dir ${stateDir} resume ${runId}\``);
    expect(leftBehind(stateDir)).toEqual([]);
  });

  it('a stale lock and engine.json naming a live but unrelated pid are not obeyed', async () => {
    // This test process is alive and unrelated. One stale lock points at an endpoint nobody
    // listens on; the other at one that answers another nonce.
    const { stateDir, dir } = copyOfSaved('stale-lock');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const closedUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const impostor = createServer((_request, response) => response.end(JSON.stringify({ nonce: 'someone-else-entirely' })));
    await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', () => resolve()));
    const impostorUrl = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}/`;
    try {
      for (const owner of [closedUrl, impostorUrl]) {
        const nonce = 'stale-nonce-0123456789abcdef';
        writeFileSync(join(stateDir, 'owner.lock'), JSON.stringify({ pid: process.pid, nonce, owner, command: 'run', startedAt: '2026-11-28T00:00:00Z' }));
        const dead = 'http://127.0.0.1:9'; // engine endpoints that would refuse: obeyed, status would fail
        writeFileSync(join(stateDir, 'engine.json'), JSON.stringify({ pid: process.pid, nonce, startedAt: '2026-11-28T00:00:00Z', endpoints: { dynamodb: dead, sfn: dead, approvals: dead, payments: dead, model: dead } }));
        const status = await savepoint(...dir, 'status', runId, '--json');
        expect(status.code, status.stderr).toBe(0);
        expect(JSON.parse(status.stdout)).toMatchObject({ runId, status: 'running' });
        // A reading command takes no lock of the state directory (the ledger's own keeps writers
        // out while it reads): the stale lock is left for the next owner, which breaks it.
        expect(JSON.parse(readFileSync(join(stateDir, 'owner.lock'), 'utf8'))).toMatchObject({ nonce, owner });
      }
    } finally {
      await new Promise<void>((resolve) => impostor.close(() => resolve()));
    }
  });

  it('payments recovers a journal torn by a kill mid-append, and says so', async () => {
    const { stateDir, dir } = copyOfSaved('torn-journal');
    const journal = join(stateDir, 'payments.jsonl');
    const before = readFileSync(journal, 'utf8');
    appendFileSync(journal, '{"kind":"refund","key":"torn-by-a-kill","finger');
    const payments = await savepoint(...dir, 'world', '--json');
    expect(payments.code, payments.stderr).toBe(0);
    expect(payments.stderr).toMatch(/warning: .*payments\.jsonl:\d+: dropped a torn last line \(\d+ bytes/);
    expect(JSON.parse(payments.stdout).refunds).toHaveLength(before.split('\n').filter(Boolean).filter((line) => line.includes('"kind":"refund"')).length);
    expect(readFileSync(journal, 'utf8')).toBe(before);
  });

  // trace only reads: it opened the ledger to write, as a run does, and cut the log's torn last line (a change a read command must not make).
  it("trace reads a ledger whose log ends in a torn line without cutting it, as status does", async () => {
    const { stateDir, dir } = copyOfSaved('torn-ledger-trace');
    const log = join(stateDir, 'ledger.jsonl');
    appendFileSync(log, '{"torn');
    const before = readFileSync(log);
    const traced = await savepoint(...dir, 'trace', runId, '--json');
    expect(traced.code, traced.stderr).toBe(0);
    expect(JSON.parse(traced.stdout)).toMatchObject({ runId });
    expect(traced.stderr).not.toMatch(/dropped a torn last line/);
    expect(readFileSync(log).equals(before)).toBe(true);
  });

  it('status of a run id no run can have ("", ".") exits 2 naming runId, not a TypeError from the listing its path would name', async () => {
    const { dir } = copyOfSaved('odd-run-ids');
    for (const odd of ['', '.']) {
      const status = await savepoint(...dir, 'status', odd);
      expect(status.code, status.stderr).toBe(2);
      expect(status.stderr).toBe(`savepoint: invalid runId: expected 1-80 letters, digits, "-" or "_" (it names the execution), got ${JSON.stringify(odd)}\n`);
    }
  });

  it('replay, trace and migrate of a run id no run can have ("", "a b") exit 2 naming runId, as status does, not "no run  in …"', async () => {
    const { dir } = copyOfSaved('odd-run-ids-of-the-ledger');
    for (const [command, odd, ...rest] of [['replay', ''], ['trace', 'a b'], ['migrate', '', '--to', '2']]) {
      const exit = await savepoint(...dir, command!, odd!, ...rest);
      expect(exit.code, exit.stderr).toBe(2);
      expect(exit.stderr).toBe(`savepoint: invalid runId: expected 1-80 letters, digits, "-" or "_" (it names the execution), got ${JSON.stringify(odd)}\n`);
    }
  });

  it('run --ledger dynalite on a state directory of the embedded ledger is refused naming both, in English', async () => {
    const { dir } = copyOfSaved('other-ledger-kind');
    const run = await savepoint(...dir, 'run', '--template', template, '--ledger', 'dynalite');
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/^savepoint: the state directory \S+other-ledger-kind holds an embedded ledger: pass --ledger embedded, or another --state-dir for a dynalite one$/m);
  });
});

/** prlimit (util-linux), which CI installs (.ci/run): without it the file-size test skips itself. */
const prlimit = onPath('prlimit');

describe('a ledger that cannot be written mid-run (a full disk)', () => {
  it.skipIf(!prlimit)("exits 1 saying the execution ended before the run's end could be recorded, and how to resume it; the resume, once it can write, pays each refund once", async () => {
    const stateDir = join(root, 'file-size');
    // The ledger (~290 kB for the sample day) outgrows the limit part way through the day: its writes fail with EFBIG (Node
    // ignores SIGXFSZ), as on a full disk. Above what else a run may write first (the agent's bundle and its source map, ~125 kB).
    const limited = await new Promise<Result>((resolve) =>
      execFile('prlimit', ['--fsize=200000', process.execPath, bin, '--state-dir', stateDir, 'run', '--template', template, '--approve', 'approve'], { timeout: 90_000, env }, (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: unknown }).code) : 0, stdout, stderr }),
      ),
    );
    expect(limited.code, limited.stderr).toBe(1);
    const resume = `savepoint --state-dir ${stateDir} resume refunds-${sampleDay.date} --approve approve`;
    expect(limited.stdout).toContain(`savepoint: the run's execution ended FAILED (Error: EFBIG: file too large, write) before the run's end could be recorded; the run is saved as it was: once the cause is fixed, resume it with \`${resume}\``);
    expect(limited.stdout).toMatch(new RegExp(`^run refunds-${sampleDay.date} .*: running$`, 'm'));

    const resumed = await savepoint('--state-dir', stateDir, 'resume', `refunds-${sampleDay.date}`, '--template', template, '--approve', 'approve', '--json');
    expect(resumed.code, resumed.stderr).toBe(0);
    const report = JSON.parse(resumed.stdout) as { status: string; tools: Record<string, { ok: number }> };
    expect(report.status).toBe('succeeded');
    // The payments provider paid each refund request once: as many refunds as the run issued, none twice.
    const world = JSON.parse((await savepoint('--state-dir', stateDir, 'world', '--json')).stdout) as { refunds: { refundRequestId: string }[] };
    expect(world.refunds.length).toBe(report.tools['issue_refund']!.ok);
    expect(new Set(world.refunds.map((refund) => refund.refundRequestId)).size).toBe(world.refunds.length);
  });
});
