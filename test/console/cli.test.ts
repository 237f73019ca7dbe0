import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedTemplate } from '../../local/template/cache.js';
import { smallDay } from '../support/cli-process.js';

/**
 * `savepoint run` serves the console in its process and prints its address; `savepoint console`
 * prints that address while the engine runs, and serves the state directory itself once it stopped.
 * Through the real CLI as subprocesses; waits are on their output, never on timers.
 */
const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;
const exec = promisify(execFile);
const root = mkdtempSync(join(tmpdir(), 'savepoint-console-'));
const stateDir = join(root, 'state');
const env = { ...process.env, SAVEPOINT_AGENT: 'refund-reconciler' };
let template: string;
/**
 * The day of each state directory's first run, which the directory keeps for the commands after it:
 * six refund requests, two of them large (smallDay), not the sample day's 25.
 */
const day = join(root, 'day.json');
const children = new Set<ChildProcess>();

beforeAll(async () => {
  template = join(root, 'template.json');
  writeFileSync(template, JSON.stringify(await cachedTemplate('refund-reconciler')));
  writeFileSync(day, JSON.stringify(smallDay));
});
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(root, { recursive: true, force: true });
});

/** A CLI process in the background, and a promise for the first output line matching a pattern. */
function background(...args: string[]) {
  return backgroundIn(stateDir, ...args);
}
function backgroundIn(dir: string, ...args: string[]) {
  const child = spawn(process.execPath, [bin, '--state-dir', dir, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  children.add(child);
  let output = '';
  const waiting = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const check of waiting) check();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number>((resolve) => child.on('close', (code) => (children.delete(child), resolve(code ?? -1))));
  const saw = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = output.match(pattern);
        if (match && waiting.delete(check)) resolve(match);
      };
      waiting.add(check);
      check();
      void exited.then(() => waiting.delete(check) && reject(new Error(`exited before printing ${pattern}:\n${output}`)));
    });
  return { child, saw, exited, output: () => output };
}

const CONSOLE_LINE = /savepoint: console (http:\/\/127\.0\.0\.1:\d+)\/#token=([\w-]+)/;

describe('savepoint console', () => {
  it('is served by `savepoint run`, printed by `savepoint console` while the engine runs, and served by itself afterwards', async () => {
    const run = background('run', '--template', template, '--world-data', day, '--approve', 'wait', '--approval-timeout', '3600');
    const [, origin, token] = await run.saw(CONSOLE_LINE);
    // The run waits for a person: the console lists it.
    await run.saw(/⏸ {2}approval apv_/);
    const runs = (await (await fetch(`${origin}/api/runs`, { headers: { 'x-savepoint-token': token! } })).json()) as { runs: { runId: string; lifecycle: string }[] };
    expect(runs.runs).toEqual([expect.objectContaining({ runId: 'refunds-2026-11-28', lifecycle: 'input_required' })]);

    const printed = await exec(process.execPath, [bin, '--state-dir', stateDir, 'console'], { env });
    expect(printed.stdout).toContain(`savepoint: console ${origin}/#token=${token} (served by the engine, pid ${run.child.pid})`);

    run.child.kill('SIGINT');
    expect(await run.exited).toBe(130);

    // No engine now: the console opens the state directory and serves it until it is stopped.
    const standalone = background('console');
    const [, ownOrigin, ownToken] = await standalone.saw(CONSOLE_LINE);
    expect(ownOrigin).not.toBe(origin);
    const view = (await (await fetch(`${ownOrigin}/api/runs/refunds-2026-11-28`, { headers: { 'x-savepoint-token': ownToken! } })).json()) as { lifecycle: string; approvals: unknown[] };
    expect(view).toMatchObject({ lifecycle: 'input_required', approvals: [expect.objectContaining({ toolName: 'issue_refund' })] });
    expect((await fetch(`${ownOrigin}/api/runs`, { headers: { 'x-savepoint-token': token! } })).status).toBe(403);
    // A decision in it is recorded in the ledger as this machine's user, for the run to take when it resumes.
    const approvalId = (view.approvals[0] as { approvalId: string }).approvalId;
    const decided = await fetch(`${ownOrigin}/api/approvals/${approvalId}/decide`, { method: 'POST', headers: { 'x-savepoint-token': ownToken!, 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'reject', reason: 'decided beside the engine' }) });
    expect({ status: decided.status, body: await decided.json() }).toEqual({ status: 200, body: { ok: true, status: 'rejected', delivered: false } });

    // The open console does not lock the state directory: status and a new run work beside it,
    // and the console then shows what the run did.
    const versionOf = async () => ((await (await fetch(`${ownOrigin}/api/version`, { headers: { 'x-savepoint-token': ownToken! } })).json()) as { version: number }).version;
    const before = await versionOf();
    const status = await exec(process.execPath, [bin, '--state-dir', stateDir, 'status', 'refunds-2026-11-28'], { env });
    expect(status.stdout).toMatch(/^run refunds-2026-11-28 .*: running$/m);
    const beside = await exec(process.execPath, [bin, '--state-dir', stateDir, 'run', '--run-id', 'beside', '--template', template, '--approve', 'reject'], { env });
    expect(beside.stdout).toMatch(/^run beside .*: succeeded/m);
    expect(beside.stdout).toMatch(/^savepoint: approvals are rejected automatically$/m);
    const listed = (await (await fetch(`${ownOrigin}/api/runs`, { headers: { 'x-savepoint-token': ownToken! } })).json()) as { runs: { runId: string; lifecycle: string }[] };
    expect(listed.runs.map((run) => [run.runId, run.lifecycle]).sort()).toEqual([['beside', 'completed'], ['refunds-2026-11-28', 'completed']]);
    // …and the page learns of it: the change counter it follows moved (the runs list was stale until a reload).
    await expect.poll(versionOf, { timeout: 15_000 }).toBeGreaterThan(before);
    standalone.child.kill('SIGINT');
    expect(await standalone.exited).toBe(0);
  }, 180_000);

  it('decides through an engine started after it: the waiting run gets the decision and goes on', async () => {
    const dir = join(root, 'engine-later');
    // A ledger for the console to open, from a run that stops before it asks anyone.
    const first = await exec(process.execPath, [bin, '--state-dir', dir, 'run', '--run-id', 'first', '--template', template, '--world-data', day, '--max-steps', '3'], { env }).catch((error: { stdout: string }) => error);
    expect(first.stdout).toMatch(/^run first .*: stopped/m);
    const standalone = backgroundIn(dir, 'console');
    const [, origin, token] = await standalone.saw(CONSOLE_LINE);
    const later = backgroundIn(dir, 'run', '--run-id', 'later', '--template', template, '--approve', 'wait', '--approval-timeout', '3600');
    const [, approvalId] = await later.saw(/⏸ {2}approval (apv_[\w-]+)/);
    const decided = await fetch(`${origin}/api/approvals/${approvalId}/decide`, { method: 'POST', headers: { 'x-savepoint-token': token!, 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }) });
    expect({ status: decided.status, body: await decided.json() }).toEqual({ status: 200, body: { ok: true, status: 'approved', delivered: true } });
    // The run went on past it: it asks about its next refund.
    await later.saw(new RegExp(`⏸ {2}approval (?!${approvalId})apv_`));
    later.child.kill('SIGINT');
    standalone.child.kill('SIGINT');
    await Promise.all([later.exited, standalone.exited]);
  }, 120_000);

  it('says where it cannot listen, naming the option (exit 2): a port in use, an address not of this machine, no such host', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const dir = join(root, 'listen');
    const refused = async (...args: string[]) => {
      const failed = await exec(process.execPath, [bin, '--state-dir', dir, ...args], { env }).then(() => ({ code: 0, stderr: '' }), (error: { code: number; stderr: string }) => error);
      expect(failed.code, failed.stderr).toBe(2);
      return failed.stderr;
    };
    try {
      // A ledger for the console to open, made by a run of its own.
      await exec(process.execPath, [bin, '--state-dir', dir, 'run', '--template', template, '--approve', 'reject'], { env });
      expect(await refused('console', '--port', String(port))).toBe(`savepoint: --port ${port}: the port is in use on 127.0.0.1; pass another, or none for any free port\n`);
      // TEST-NET-1 (RFC 5737): never an address of this machine.
      expect(await refused('console', '--host', '192.0.2.1')).toBe('savepoint: --host 192.0.2.1: not an address of this machine; pass one of its own (127.0.0.1, the default, or 0.0.0.0 for every one)\n');
      // `.invalid` never resolves (RFC 6761).
      expect(await refused('console', '--host', 'nosuchhost.invalid')).toBe('savepoint: --host nosuchhost.invalid: no such host; pass an address of this machine\n');
      expect(await refused('run', '--template', template, '--approve', 'reject', '--console-port', String(port))).toMatch(new RegExp(`^savepoint: --console-port ${port}: the port is in use on 127\\.0\\.0\\.1; pass another, or none for any free port$`, 'm'));
    } finally {
      taken.close();
    }
  }, 60_000);
});
