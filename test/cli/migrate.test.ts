import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;
const agent = (version: number) => new URL(`../versions/agents/v${version}.ts`, import.meta.url).pathname;
const exec = promisify(execFile);
const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-migrate-'));
const dir = ['--state-dir', stateDir];
const engines: ChildProcess[] = [];
afterAll(() => {
  for (const engine of engines) engine.kill('SIGKILL');
  rmSync(stateDir, { recursive: true, force: true });
});

async function savepoint(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, ...dir, ...args], { timeout: 90_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/**
 * An engine on agent module v<version>, running run `runId` until it waits for its approval; resolves with its exit.
 * It is waited on by its own announcement (`⏸  approval …`, printed once the approval is in the
 * ledger), not by polling; the commands below then reach it through the CLI, as an operator would.
 */
async function engineWaiting(version: number, runId: string): Promise<{ stop: () => Promise<number> }> {
  const engine = spawn(process.execPath, [bin, ...dir, 'run', '--agent', agent(version), '--input', JSON.stringify({ id: runId }), '--run-id', runId, '--approve', 'wait', '--approval-timeout', '600'], { stdio: ['ignore', 'pipe', 'pipe'] });
  engines.push(engine);
  const exited = new Promise<number>((resolve) => engine.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : -1))));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const watch = (chunk: Buffer) => {
      output += chunk.toString();
      if (/⏸ +approval apv_/.test(output)) resolve();
    };
    engine.stdout!.on('data', watch);
    engine.stderr!.on('data', watch);
    void exited.then((code) => reject(new Error(`the engine on v${version} exited (${code}) before asking for an approval:\n${output}`)));
  });
  return { stop: () => (engine.kill('SIGTERM'), exited) };
}

describe('savepoint migrate', () => {
  it('refuses an incompatible version (exit 2, naming why, nothing changed), moves the run to a compatible one, and status shows it', async () => {
    const v1 = await engineWaiting(1, 'run-a');
    expect(await v1.stop()).toBe(143); // saved, waiting on its approval

    // With no engine running, it says which to start: the new version's, long-running (not the one-shot `run`).
    // A run id the ledger does not hold is said as every command says it, engine or none.
    expect(await savepoint('migrate', 'run-z', '--to', '3')).toMatchObject({ code: 2, stderr: expect.stringMatching(/^savepoint: no run run-z in \S+\n$/) });
    const noEngine = await savepoint('migrate', 'run-a', '--to', '3');
    expect(noEngine).toMatchObject({ code: 2, stderr: 'savepoint: migrate: this client reaches no engine (no Step Functions API): start the new version on the state directory, `savepoint serve --agent <its module>`\n' });

    const v2 = await engineWaiting(2, 'run-b');
    const before = JSON.parse((await savepoint('status', 'run-a', '--json')).stdout) as { version: object };
    const refused = await savepoint('migrate', 'run-a', '--to', '2');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('run run-a cannot be migrated to version 2: version 2 does not declare version 1 compatible (it declares no compatibleWith); the run finishes on version 1');
    expect((JSON.parse((await savepoint('status', 'run-a', '--json')).stdout) as { version: object }).version).toEqual(before.version);
    expect(await v2.stop()).toBe(143);

    const v3 = await engineWaiting(3, 'run-c');
    const migrated = await savepoint('migrate', 'run-a', '--to', '3', '--json');
    expect(migrated, migrated.stderr).toMatchObject({ code: 0 });
    expect(JSON.parse(migrated.stdout)).toMatchObject({ runId: 'run-a', migration: { from: { version: '1' }, to: { version: '3' } } });
    const status = await savepoint('status', 'run-a');
    expect(status.stdout).toMatch(/version\s+3 \([0-9a-f]{16}\)/);
    expect(status.stdout).toMatch(/migrated\s+1 \([0-9a-f]{16}\) → 3 \([0-9a-f]{16}\) by local:/);
    expect(await v3.stop()).toBe(143);
  }, 240_000);
});
