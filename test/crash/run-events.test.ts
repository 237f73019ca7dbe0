import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openLedger } from '../../cli/state.js';
import { connect, servedAt } from '../../client/connect.js';
import { followEvents, type EventsAddress, type RunEvent } from '../../client/events.js';
import { readRunRecords, settledEvents } from '../../lambdas/runs/events.js';
import { seededRandom } from '../../sim/random.js';
import { startServe } from '../support/serve-process.js';

/**
 * The engine killed mid-stream: `savepoint serve` (its own process, test/support/event-follower.ts
 * its agent) drives a run and serves its events; the client follows it; the test SIGKILLs serve at
 * a random event of the stream, twice, and starts it again on the same state directory each time
 * (it resumes the run it left running, at a new port with a new credential, which the client looks
 * up again in engine.json). The events the client yields are the run's full list, each exactly once.
 */

const AGENT = new URL('../support/event-follower.ts', import.meta.url).pathname;
const children = new Set<ChildProcess>();
let dirs: string[] = [];
afterEach(() => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

/** Starts serve on the state directory; resolves once it is ready. */
const engine = async (stateDir: string): Promise<ChildProcess> => (await startServe(['--state-dir', stateDir, 'serve', '--agent', AGENT], children)).child;

const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.on('exit', () => resolve())));

describe('the run event stream across engine crashes', () => {
  it('SIGKILLed twice mid-stream and started again: the client resumes, every event once', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-events-crash-'));
    dirs.push(stateDir);
    const runId = 'crash-followed';
    const random = seededRandom(3301);
    const killAt = [8 + Math.floor(random() * 20), 40 + Math.floor(random() * 30)];
    let current = await engine(stateDir);
    await (await connect({ stateDir })).start({ runId, input: { turns: 12 } });
    // The address serve publishes (engine.json), read again before each reconnection.
    const locate = async (): Promise<EventsAddress> => ({ base: servedAt(stateDir).base });
    const got: RunEvent[] = [];
    let engines = 1;
    for await (const event of followEvents({ ...(await locate()), locate }, runId, { retryMs: 20, maxAttempts: 400 })) {
      got.push(event);
      if (killAt.includes(got.length)) {
        current.kill('SIGKILL');
        await exited(current);
        current = await engine(stateDir);
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
