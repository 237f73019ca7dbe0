import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLedger } from '../../cli/state.js';
import { followEvents, type RunEvent } from '../../client/events.js';
import { readRunRecords, settledEvents } from '../../lambdas/runs/events.js';
import { seededRandom } from '../../sim/random.js';

/**
 * The engine killed mid-stream: a real engine process (test/support/events-engine.ts) drives a run
 * and serves its events; the client follows it; the test SIGKILLs the process at a random event of
 * the stream, twice, and starts another on the same state directory each time (its watchdog
 * resumes the run, at a new port with a new credential, which the client looks up again). The
 * events the client yields are the run's full list, each exactly once.
 */

const ENGINE = new URL('../support/events-engine.ts', import.meta.url).pathname;
const children = new Set<ChildProcess>();
let dirs: string[] = [];
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

/** Starts an engine process; resolves once it serves. */
function engine(stateDir: string, runId: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', ENGINE, JSON.stringify({ stateDir, runId })], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => String(chunk).includes('serving') && resolve(child));
    child.on('exit', (code, signal) => reject(new Error(`engine exited (${code ?? signal}) before serving: ${stderr}`)));
  });
}

const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.on('exit', () => resolve())));

describe('the run event stream across engine crashes', () => {
  it('SIGKILLed twice mid-stream and started again: the client resumes, every event once', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-events-crash-'));
    dirs.push(stateDir);
    const runId = 'crash-followed';
    const random = seededRandom(3301);
    const killAt = [8 + Math.floor(random() * 20), 40 + Math.floor(random() * 30)];
    let current = await engine(stateDir, runId);
    const locate = async () => JSON.parse(readFileSync(join(stateDir, 'events-endpoint.json'), 'utf8')) as { url: string; credential: string };
    const got: RunEvent[] = [];
    let engines = 1;
    for await (const event of followEvents({ ...(await locate()), locate }, runId, { retryMs: 20, maxAttempts: 400 })) {
      got.push(event);
      if (killAt.includes(got.length)) {
        current.kill('SIGKILL');
        await exited(current);
        current = await engine(stateDir, runId);
        engines += 1;
      }
    }
    expect(engines).toBe(3);
    expect(got.at(-1)).toMatchObject({ type: 'run.finished', data: { status: 'succeeded' } });

    // A follower from the start gets the same list from the last engine; the ledger derives it too.
    const fresh: RunEvent[] = [];
    for await (const event of followEvents(await locate(), runId)) fresh.push(event);
    expect(got).toEqual(fresh);
    current.kill('SIGTERM');
    await exited(current);
    const { ledger, close } = await openLedger(stateDir);
    try {
      const records = (await readRunRecords(ledger, runId))!;
      expect(got).toEqual(settledEvents(records));
      // The crashes were mid-run: the run was taken over by a new execution after each.
      expect(records.run.executions.length).toBeGreaterThanOrEqual(2);
    } finally {
      await close();
    }
  });
});
