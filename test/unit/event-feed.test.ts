import { describe, expect, it } from 'vitest';
import { POLL_MS, POLL_MS_PER_FOLLOWER, runFeeds } from '../../lambdas/runs/event-feed.js';
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
  const feeds = runFeeds({ read: async (runId) => (reads.push(runId), records()), clock });
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
