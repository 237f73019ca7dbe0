import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect, type RunEvent } from '../../client/index.js';
import { readRunRecords, settledEvents } from '../../lambdas/runs/events.js';
import { openLedger } from '../../cli/state.js';
import { duplicates, leftBehind, workspace } from '../support/cli-process.js';
import { sampleDay } from '../support/refund-harness.js';
import { startServe, type Serving } from '../support/serve-process.js';

/**
 * `client.events` against `savepoint serve` (its own process), followed through `connect({ stateDir })`:
 * the test SIGKILLs serve mid-stream and starts it again (it resumes the run, at a new address the
 * client finds in the state directory), the run's approvals decided as they come: the events the
 * client yields are the run's full list, each once, the run finishes once, each refund is paid once.
 */
const { children, dirs } = leftBehind();

describe('client.events on savepoint serve', () => {
  it('resumes by itself after serve was SIGKILLed mid-stream and started again: every event once, the run finished once, each refund paid once', async () => {
    const { stateDir, args } = await workspace('serve-events', sampleDay);
    dirs.push(dirname(stateDir));
    let serving: Serving = await startServe(args('serve'), children);
    const client = await connect({ stateDir });
    const runId = 'followed-r1';
    await client.start({ agent: 'refund-reconciler', input: { date: sampleDay.date }, runId, config: { approvalTimeoutSeconds: 3600 } });

    const got: RunEvent[] = [];
    let killed = false;
    for await (const event of client.events(runId)) {
      got.push(event);
      // Killed mid-run, at the 8th event (the run is still taking steps: its first approval comes later).
      if (got.length === 8 && !killed) {
        killed = true;
        serving.child.kill('SIGKILL');
        await serving.exited;
        serving = await startServe(args('serve'), children);
      }
      // A person decides each approval as it is asked (through whichever serve runs now).
      if (event.type === 'approval.waiting') await (await connect({ stateDir })).decide(String(event.data['approvalId']), 'approve', { reason: 'checked' });
    }
    expect(killed).toBe(true);
    expect(got.at(-1)).toMatchObject({ id: 'z.run', type: 'run.finished', data: { status: 'succeeded' } });
    // A follower from the start gets the same list; each id once.
    const fresh: RunEvent[] = [];
    for await (const event of (await connect({ stateDir })).events(runId)) fresh.push(event);
    expect(got).toEqual(fresh);
    expect(new Set(got.map((event) => event.id)).size).toBe(got.length);

    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);
    const { ledger, close } = await openLedger(stateDir);
    try {
      const records = (await readRunRecords(ledger, runId))!;
      expect(got).toEqual(settledEvents(records));
      expect(records.run.executions.length).toBeGreaterThanOrEqual(2); // taken over after the kill
    } finally {
      await close();
    }
    expect(duplicates(stateDir)).toEqual([]);
  }, 180_000);
});
