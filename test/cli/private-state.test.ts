import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, lchownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { savepoint as runCli } from '../support/cli-process.js';

/**
 * Nobody else's hands on a run, through the real CLI: a state directory is private to its owner
 * (0700, its files 0600, refused when another user can write it), and the engine's loopback
 * endpoints serve only whoever can read its engine.json. The second-user tests run as another OS
 * user (created here when the tests run as root), and are skipped, saying why, where they cannot.
 */

const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;
const exec = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), 'savepoint-private-'));
chmodSync(root, 0o755); // the other user must reach the state directories' parent (as it could in a project)
afterAll(() => rmSync(root, { recursive: true, force: true }));
const env = { ...process.env, SAVEPOINT_AGENT: 'refund-reconciler' };
let template: string;
/**
 * The day the runs to their end take (`--world-data`): three refund requests, a plain one, a
 * mismatch and a large one (an approval), so the run writes every kind of file the sample day's 25
 * would (keys, ledger, the provider’s journals, history, log), for less CPU (the file: 3.0–3.6 s against 3.5–4.2 s, two sittings on 2026-12-05).
 */
let day: string;

beforeAll(async () => {
  template = join(root, 'template.json');
  writeFileSync(template, JSON.stringify(await cachedTemplate('refund-reconciler')));
  day = join(root, 'day.json');
  writeFileSync(day, JSON.stringify(makeSampleDay(7, { plain: 1, already_refunded: 0, mismatch: 1, large: 1 })));
});

/** The CLI to its end, on the refund reconciler. */
const savepoint = (...args: string[]) => runCli(args, { env: { SAVEPOINT_AGENT: 'refund-reconciler' } });

/** Every entry under `dir` (itself included) whose mode lets a group or other users in. */
function openEntries(dir: string): string[] {
  const found: string[] = [];
  const visit = (path: string) => {
    const stats = statSync(path);
    if ((stats.mode & 0o077) !== 0) found.push(`${path.slice(dir.length) || '/'} ${(stats.mode & 0o777).toString(8)}`);
    if (stats.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(dir);
  return found;
}

describe('a state directory is private to its owner', () => {
  let stateDir: string;
  beforeAll(async () => {
    stateDir = join(root, 'ran');
    const run = await savepoint('--state-dir', stateDir, 'run', '--template', template, '--world-data', day, '--approve', 'approve');
    expect(run.code, run.stderr).toBe(0);
  });

  it('a run leaves the directory 0700 and every file in it 0600 (keys, ledger, journals, history, log)', async () => {
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    expect(readdirSync(stateDir).length).toBeGreaterThan(3);
    expect(openEntries(stateDir)).toEqual([]);
    // The next command that opens it finds nothing to mend either.
    expect((await savepoint('--state-dir', stateDir, 'runs')).code).toBe(0);
    expect(openEntries(stateDir)).toEqual([]);
  });

  it('makes an older, world-readable state directory private again when it opens it', async () => {
    const older = join(root, 'older');
    execFileSync('cp', ['-r', stateDir, older]);
    chmodSync(older, 0o755);
    for (const name of readdirSync(older)) chmodSync(join(older, name), statSync(join(older, name)).isDirectory() ? 0o755 : 0o644);
    expect(openEntries(older).length).toBeGreaterThan(3);
    expect((await savepoint('--state-dir', older, 'runs')).code).toBe(0);
    expect(openEntries(older)).toEqual([]);
  });

  it.each([
    ['ledger.jsonl', 0o664],
    ['keys/', 0o777],
    ['directory itself', 0o757],
  ])('refuses, naming it, a state directory whose %s another user can write', async (what, mode) => {
    const name = what === 'directory itself' ? '' : what;
    const copy = join(root, `writable-${name.replace('/', '') || 'dir'}`);
    execFileSync('cp', ['-r', stateDir, copy]);
    chmodSync(join(copy, name), mode);
    const status = await savepoint('--state-dir', copy, 'runs');
    expect(status.code).toBe(2);
    expect(status.stderr).toContain(`${join(copy, name).replace(/\/$/, '')} can be written by other users (mode ${mode.toString(8)})`);
    expect(status.stderr.trim().split('\n')).toHaveLength(1);
  });

  // A directory we own but cannot chmod (immutable here: `chattr +i`, as a read-only mount would be) stays readable by others:
  // refused with exit 2 naming it and what to do, not exit 1 with the raw EPERM of chmod.
  const immutable = canMakeImmutable();
  /** `runs` on a copy of the state directory with `mode`, made immutable (`chattr +i`) for the command's time. */
  async function runsOnImmutableCopy(name: string, mode: number) {
    const copy = join(root, name);
    execFileSync('cp', ['-r', stateDir, copy]);
    chmodSync(copy, mode);
    execFileSync('chattr', ['+i', copy]);
    try {
      return { copy, runs: await savepoint('--state-dir', copy, 'runs') };
    } finally {
      execFileSync('chattr', ['-i', copy]);
    }
  }
  it.runIf(immutable === true)('refuses, naming it and what to do, a readable state directory it cannot make private (exit 2, not a raw EPERM)', async () => {
    const { copy: readOnly, runs: status } = await runsOnImmutableCopy('read-only', 0o755);
    expect(status.code, status.stderr).toBe(2);
    expect(status.stderr).toContain(`${readOnly} can be read by other users (mode 755) and cannot be made private here (changing its mode is not permitted): `);
    expect(status.stderr).toContain(`then \`chmod -R go-rwx ${readOnly}\`, or use another --state-dir`);
    expect(status.stderr).not.toMatch(/EPERM/);
    expect(status.stderr.trim().split('\n')).toHaveLength(1);
  });
  if (immutable !== true) it.skip(`refuses a readable state directory it cannot make private (skipped: ${immutable})`, () => undefined);

  // A private directory no file can be made in (immutable, as on a read-only mount or a backup): even a reading
  // command takes the ledger's lock there, and says so with what to do (exit 2), not the raw EPERM of the lock file.
  it.runIf(immutable === true)('says, for a state directory no file can be made in, that every command takes the ledger\'s lock (exit 2, not a raw error)', async () => {
    const { copy: frozen, runs } = await runsOnImmutableCopy('frozen', 0o700);
    expect(runs.code, runs.stderr).toBe(2);
    expect(runs.stderr).toBe(`savepoint: cannot write to the state directory ${frozen}: operation not permitted (every command takes its ledger's lock, ledger.lock, a command that only reads too: copy the directory somewhere writable to read it)\n`);
  });

  // Another user's link in a shared directory, pointing at one of ours (or at nothing yet): its owner picks the target.
  it.runIf(process.getuid?.() === 0)("refuses, naming it, a state directory reached through another user's symbolic link, itself or above it (exit 2)", async () => {
    const links = join(root, 'links');
    mkdirSync(links);
    const planted = join(links, 'planted');
    symlinkSync(stateDir, planted);
    lchownSync(planted, 65534, 65534); // only root can give a link away
    const above = join(links, 'above');
    symlinkSync(root, above);
    lchownSync(above, 65534, 65534);
    const dangling = join(links, 'dangling');
    symlinkSync(join(root, 'not-yet'), dangling);
    lchownSync(dangling, 65534, 65534);
    for (const [stateDirArg, link] of [[planted, planted], [join(above, 'ran'), above], [dangling, dangling]] as const) {
      const status = await savepoint('--state-dir', stateDirArg, 'runs');
      expect(status.code, stateDirArg).toBe(2);
      expect(status.stderr).toContain(`${link} is a symbolic link owned by another user (uid 65534): `);
      expect(status.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(existsSync(join(root, 'not-yet'))).toBe(false); // nothing was created through the link
    // A link of one's own is followed, as before.
    const own = join(links, 'own');
    symlinkSync(stateDir, own);
    expect((await savepoint('--state-dir', own, 'runs')).code).toBe(0);
  });
});

describe('a command that reads a run does not run code from the current directory', () => {
  it('`status` uses the project’s own agent, not an agents/<name>/agent.ts planted in the working directory', async () => {
    const stateDir = join(root, 'status-run');
    expect((await savepoint('--state-dir', stateDir, 'run', '--template', template, '--world-data', day, '--approve', 'approve')).code).toBe(0);
    const planted = join(root, 'planted');
    const marker = join(root, 'planted-ran');
    mkdirSync(join(planted, 'agents', 'refund-reconciler'), { recursive: true });
    writeFileSync(join(planted, 'agents', 'refund-reconciler', 'agent.ts'), `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nexport default {};\n`);
    const { SAVEPOINT_AGENT: _unset, ...plain } = env;
    const status = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      execFile(process.execPath, [bin, '--state-dir', stateDir, 'status', 'refunds-2026-11-28'], { cwd: planted, env: plain, timeout: 90_000 }, (error, stdout) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout }),
      );
    });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('refunds-2026-11-28');
    expect(existsSync(marker)).toBe(false);
  });
});

/** Whether this process can make a directory immutable (`chattr +i`: root, on a file system that has the attribute); else why not. */
function canMakeImmutable(): true | string {
  if (process.getuid?.() !== 0) return 'not running as root: cannot make a directory immutable';
  const probe = mkdtempSync(join(tmpdir(), 'savepoint-immutable-'));
  try {
    execFileSync('chattr', ['+i', probe], { stdio: 'ignore' });
    execFileSync('chattr', ['-i', probe], { stdio: 'ignore' });
    return true;
  } catch (error) {
    return `chattr +i is not available here (${(error as Error).message.split('\n')[0]})`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** Another OS user, made for these tests when they run as root; undefined (and why) when there can be none. */
function otherUser(): { uid: number; gid: number } | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: 'not running as root: cannot act as a second OS user' };
  const name = 'savepoint-probe';
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
  } catch {
    try {
      execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name], { stdio: 'ignore' });
    } catch (error) {
      return { skip: `could not create the user ${name}: ${(error as Error).message}` };
    }
  }
  return { uid: Number(execFileSync('id', ['-u', name]).toString()), gid: Number(execFileSync('id', ['-g', name]).toString()) };
}

const other = otherUser();
if ('skip' in other) console.log(`skipping the second-user tests: ${other.skip}`);

/** Runs `script` (ESM, top-level await) as the other user; its stdout, parsed as JSON. */
async function asOtherUser(script: string): Promise<any> {
  if ('skip' in other) throw new Error(other.skip);
  const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], { uid: other.uid, gid: other.gid, cwd: '/', timeout: 30_000 });
  return JSON.parse(stdout);
}

describe.skipIf('skip' in other)('another local user cannot touch a running engine', () => {
  const stateDir = join(root, 'running');
  let run: ChildProcess;
  let output = '';
  beforeAll(async () => {
    mkdirSync(stateDir);
    run = spawn(process.execPath, [bin, '--state-dir', stateDir, 'run', '--template', template, '--approve', 'wait', '--approval-timeout', '3600'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (/waits for approval|awaiting approval|approval apv_/i.test(output)) resolve();
      };
      run.stdout!.on('data', onData);
      run.stderr!.on('data', onData);
      run.on('exit', () => reject(new Error(`the run ended before waiting for an approval:\n${output}`)));
    });
  });
  afterAll(async () => {
    run.kill('SIGTERM');
    await new Promise((resolve) => run.once('close', resolve));
  });

  it('cannot read engine.json, the ledger or the keys', async () => {
    const answer = await asOtherUser(`
      import { readFileSync } from 'node:fs';
      const tried = {};
      for (const name of ['engine.json', 'ledger.jsonl', 'keys/approval-links.key']) {
        try { readFileSync(${JSON.stringify(stateDir)} + '/' + name); tried[name] = 'read'; } catch (error) { tried[name] = error.code; }
      }
      console.log(JSON.stringify(tried));`);
    expect(answer).toEqual({ 'engine.json': 'EACCES', 'ledger.jsonl': 'EACCES', 'keys/approval-links.key': 'EACCES' });
  });

  it('cannot decide an approval, nor start or stop an execution, on the engine’s ports', async () => {
    const approvals = JSON.parse((await savepoint('--state-dir', stateDir, 'approvals', '--json')).stdout) as { approvals: { approvalId: string; runId: string }[] };
    const pending = approvals.approvals[0]!;
    // The ports are no secret (any user can list listening sockets); only the credential is.
    const ports = [...new Set([...execFileSync('ss', ['-ltnpH']).toString().matchAll(/127\.0\.0\.1:(\d+)\s.*pid=(\d+)/g)].filter((m) => Number(m[2]) === run.pid).map((m) => Number(m[1])))];
    expect(ports.length).toBeGreaterThan(0);
    const answers = await asOtherUser(`
      const ports = ${JSON.stringify(ports)};
      const answers = [];
      for (const port of ports) {
        const decide = await fetch('http://127.0.0.1:' + port + '/v1/approvals/${pending.approvalId}', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"decision":"approve","reason":"mine"}' }).then((r) => r.status, () => 'refused');
        const stop = await fetch('http://127.0.0.1:' + port + '/', { method: 'POST', headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AWSStepFunctions.StopExecution' }, body: JSON.stringify({ executionArn: 'arn:aws:states:us-east-1:123456789012:execution:x:${pending.runId}' }) }).then((r) => r.status, () => 'refused');
        answers.push({ port, decide, stop });
      }
      console.log(JSON.stringify(answers));`);
    for (const answer of answers as { decide: number | 'refused'; stop: number | 'refused' }[]) {
      expect(answer.decide === 'refused' || answer.decide >= 400, JSON.stringify(answer)).toBe(true);
      expect(answer.stop === 'refused' || answer.stop >= 400, JSON.stringify(answer)).toBe(true);
    }
    expect(answers.some((answer: { decide: unknown }) => answer.decide === 403)).toBe(true);
    // Nothing changed: the approval still waits, the run still runs, and its owner can still decide it.
    const status = await savepoint('--state-dir', stateDir, 'status', pending.runId, '--json');
    expect(status.stdout).toMatch(/"status": "running"/);
    const approve = await savepoint('--state-dir', stateDir, 'approve', pending.approvalId, '--reason', 'the owner');
    expect(approve.code, approve.stderr).toBe(0);
  });
});
