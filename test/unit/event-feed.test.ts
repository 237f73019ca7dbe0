import { describe, expect, it } from 'vitest';
import { POLL_MS, POLL_MS_PER_FOLLOWER, WAKE_CPU_MS_PER_FOLLOWER, WAKE_MS, WOKEN_POLL_MS, runFeeds } from '../../lambdas/runs/event-feed.js';
import type { RunRecords } from '../../lambdas/runs/events.js';
import { run, turn } from '../contract/fixtures.js';
import { manualClock } from '../support/manual-clock.js';

/**
 * The poller behind the run event stream (lambdas/runs/event-feed.ts): one read of a run per poll
 * however many follow it, polls stretched by the followers, none once nobody follows or the run's
 * last event is out.
 */

function feedsOver(records: () => RunRecords | undefined) {
  const clock = manualClock();
  const reads: string[] = [];
  // The process's CPU time as the manual clock (a busy process): a wake's CPU gap passes as the test moves the clock.
  const feeds = runFeeds({ read: async (runId) => (reads.push(runId), records()), clock, cpuMs: () => clock.now().getTime(), idleMs: () => 0 });
  const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
  return { clock, reads, feeds, settle };
}

describe('runFeeds', () => {
  it('reads a followed run once per poll however many follow it, and each follower gets every growth', async () => {
    let state: RunRecords = { run: run('r1'), turns: [], calls: [], approvals: [] };
    const { clock, reads, feeds, settle } = feedsOver(() => state);
    const seen = Array.from({ length: 100 }, () => [] as number[]);
    const stops = seen.map((lengths) => feeds.follow('r1', (events) => lengths.push(events.length)));
    await settle();
    expect(reads).toHaveLength(1);
    state = { ...state, turns: [{ ...turn(1), content: [{ type: 'text', text: 'hi' }] }] };
    clock.advance(100 * POLL_MS_PER_FOLLOWER);
    await settle();
    expect(reads).toHaveLength(2);
    for (const lengths of seen) expect(lengths).toEqual([1, 3]);
    for (const stop of stops) stop();
    clock.advance(10_000);
    await settle();
    expect(reads).toHaveLength(2); // nobody follows: no poll
  });

  it('stretches the polls with the followers: one follower every 25 ms, a hundred every 250 ms', async () => {
    const { clock, reads, feeds, settle } = feedsOver(() => ({ run: run('r1'), turns: [], calls: [], approvals: [] }));
    const stop = feeds.follow('r1', () => {});
    await settle();
    clock.advance(POLL_MS);
    await settle();
    expect(reads).toHaveLength(2);
    stop();
    const many = Array.from({ length: 100 }, () => feeds.follow('r1', () => {}));
    await settle();
    const before = reads.length;
    clock.advance(100 * POLL_MS_PER_FOLLOWER - 1);
    await settle();
    expect(reads).toHaveLength(before);
    clock.advance(1);
    await settle();
    expect(reads).toHaveLength(before + 1);
    for (const stopOne of many) stopOne();
  });

  it('a wake reads the run once the process has spent the followers\' CPU gap since the last read (at once after a quiet spell, soon when idle); the poll goes on without wakes, slower once wakes read the run', async () => {
    let state: RunRecords = { run: run('r1'), turns: [], calls: [], approvals: [] };
    const clock = manualClock();
    const reads: string[] = [];
    // The process's CPU time and its loop's idle time, moved by hand: the steps' work between two reads, and the waits.
    let cpu = 0;
    let idle = 0;
    const feeds = runFeeds({ read: async (runId) => (reads.push(runId), state), clock, cpuMs: () => cpu, idleMs: () => idle });
    const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
    const lengths: number[] = [];
    const stops = Array.from({ length: 100 }, (_, index) => feeds.follow('r1', (events) => index === 0 && lengths.push(events.length)));
    await settle();
    expect(reads).toHaveLength(1);
    // No wake yet: the poll reads (another process's writes), every 25 ms + 2.5 ms per follower.
    clock.advance(100 * POLL_MS_PER_FOLLOWER);
    await settle();
    expect(reads).toHaveLength(2);
    const gap = 100 * WAKE_CPU_MS_PER_FOLLOWER;
    expect(gap).toBeGreaterThan(WAKE_MS);
    expect(gap).toBeLessThan(100 * POLL_MS_PER_FOLLOWER / 4);
    // Woken right after a read, the process busy (its CPU time moving as fast as the clock): read after the gap, not the poll's 250 ms.
    state = { ...state, turns: [{ ...turn(1), content: [{ type: 'text', text: 'hi' }] }] };
    feeds.wake('r1');
    feeds.wake('r1'); // many writes, one read
    cpu += gap - 1;
    clock.advance(gap - 1);
    await settle();
    expect(reads).toHaveLength(2);
    cpu += 1;
    clock.advance(1);
    await settle();
    expect(reads).toHaveLength(3);
    expect(lengths).toEqual([1, 3]);
    // Quiet for longer than the gap (the process busy elsewhere): a wake reads at once.
    cpu += gap;
    clock.advance(gap);
    await settle();
    expect(reads).toHaveLength(3);
    feeds.wake('r1');
    await settle();
    expect(reads).toHaveLength(4);
    // The machine loaded (the process given a third of a core: its CPU time at a third of the wall
    // clock's pace): the steps are slower in wall time, the reads are not more frequent per step,
    // and the wall clock's poll does not read in between.
    const [cpuAtRead, wallAtRead] = [cpu, clock.now().getTime()];
    feeds.wake('r1');
    for (let waited = 0; waited < WOKEN_POLL_MS && reads.length === 4; waited += 3) {
      cpu += 1;
      clock.advance(3);
      await settle();
    }
    expect(reads).toHaveLength(5);
    expect(cpu - cpuAtRead).toBe(gap); // read once the gap was spent in CPU time: at 3 × the gap in wall time
    expect(clock.now().getTime() - wallAtRead).toBe(3 * gap);
    // An idle process (its CPU time still, its loop waiting): a write is read once the loop has idled WAKE_MS.
    feeds.wake('r1');
    idle += WAKE_MS - 1;
    clock.advance(WAKE_MS - 1);
    await settle();
    expect(reads).toHaveLength(5);
    idle += 1;
    clock.advance(1);
    await settle();
    expect(reads).toHaveLength(6);
    // Neither busy nor idle (not given a core): the poll's gap is the most a write waits.
    feeds.wake('r1');
    clock.advance(WOKEN_POLL_MS - 1);
    await settle();
    expect(reads).toHaveLength(6);
    clock.advance(1);
    await settle();
    expect(reads).toHaveLength(7);
    // No wake: the poll still reads, at the woken run's pace.
    clock.advance(WOKEN_POLL_MS);
    await settle();
    expect(reads).toHaveLength(8);
    feeds.wake('nobody'); // a run nobody follows: nothing
    for (const stop of stops) stop();
    feeds.wake('r1');
    clock.advance(10_000);
    await settle();
    expect(reads).toHaveLength(8);
  });

  it('a wake during a read reads again after it (the read under way may predate the write)', async () => {
    let release = () => {};
    let state: RunRecords = { run: run('r1'), turns: [], calls: [], approvals: [] };
    const clock = manualClock();
    const reads: RunRecords[] = [];
    const feeds = runFeeds({ read: async () => { const seen = state; await new Promise<void>((resolve) => (release = resolve)); reads.push(seen); return seen; }, clock, cpuMs: () => clock.now().getTime(), idleMs: () => 0 });
    const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
    const lengths: number[] = [];
    feeds.follow('r1', (events) => lengths.push(events.length));
    await settle();
    state = { ...state, turns: [{ ...turn(1), content: [{ type: 'text', text: 'hi' }] }] };
    feeds.wake('r1');
    release();
    await settle();
    expect(lengths).toEqual([1]);
    clock.advance(WAKE_MS);
    await settle();
    release();
    await settle();
    expect(reads).toHaveLength(2);
    expect(lengths).toEqual([1, 3]);
  });

  it('a hundred followers connecting at once from the start cost one read; one resuming after an id reads for itself', async () => {
    const { reads, feeds } = feedsOver(() => ({ run: run('r1'), turns: [{ ...turn(1), content: [{ type: 'text', text: 'hi' }] }], calls: [], approvals: [] }));
    const lists = await Promise.all(Array.from({ length: 100 }, () => feeds.current('r1')));
    expect(reads).toHaveLength(1);
    for (const list of lists) expect(list?.map((event) => event.id)).toEqual(['a.run', 't000001.1.model', 't000001.2.budget']);
    await Promise.all([feeds.current('r1', 't000001.1.model'), feeds.current('r1', 't000001.1.model')]);
    expect(reads).toHaveLength(3);
    await feeds.current('r1');
    expect(reads).toHaveLength(4); // the shared read is over: the next one is new
  });

  it('stops polling once the run\'s last event is out', async () => {
    const { clock, reads, feeds, settle } = feedsOver(() => ({ run: run('r1', { status: 'succeeded', finishedAt: new Date().toISOString() }), turns: [], calls: [], approvals: [] }));
    const lengths: number[] = [];
    feeds.follow('r1', (events) => lengths.push(events.length));
    await settle();
    clock.advance(60_000);
    await settle();
    expect(lengths).toEqual([2]); // a.run, z.run
    expect(reads).toHaveLength(1);
  });
});
