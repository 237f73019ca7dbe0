import { describe, expect, it } from 'vitest';
import { BreakpointCache, DEFAULT_CACHED_PREFIXES, DEFAULT_CACHED_PROMPTS, PrefixCache } from '../../sim/wire/prompt-cache.js';

// The simulated model lives as long as the local engine, through many runs: its prompt caches must
// not grow with every run (issue 26, item 9). The accounting itself: test/providers/prices.test.ts.
describe('the simulated prompt caches stay bounded', () => {
  const block = (chars: number, breakpoint = false, fill = 'a') => ({ text: fill.repeat(chars), breakpoint });

  it('keeps the most recently used prefixes only: one read again stays, the least recently used goes first', () => {
    const cache = new BreakpointCache({ minTokens: 1, maxPrefixes: 3 });
    const run = (id: string) => [block(400, true, id)];
    cache.account(run('a'));
    for (const id of ['b', 'c', 'd']) {
      expect(cache.account(run('a')).cacheRead).toBe(100); // read: now the most recent
      cache.account(run(id));
    }
    expect(cache.size).toBe(3);
    expect(cache.account(run('b'))).toEqual({ input: 0, cacheRead: 0, cacheWrite: 100 });
    expect(cache.account(run('a')).cacheRead).toBe(100);
  });

  it('holds at most DEFAULT_CACHED_PREFIXES prefixes however many runs it serves', () => {
    const cache = new BreakpointCache({ minTokens: 1 });
    for (let run = 0; run < 5_000; run++) cache.account([block(40, true, 'shared'), block(40, true, `run-${run}`)]);
    expect(DEFAULT_CACHED_PREFIXES).toBe(4096);
    expect(cache.size).toBe(4096);
    // The prefix every run shares was read by each: still cached.
    expect(cache.account([block(40, true, 'shared')]).cacheRead).toBe(60);
  });

  it('keeps the newest prompts only in the OpenAI-style cache', () => {
    const cache = new PrefixCache({ maxPrompts: 2 });
    const base = 'x'.repeat(4 * 1100);
    cache.account(`${base}a`);
    expect(cache.account(`${base}b`)).toBe(1024);
    cache.account('y'.repeat(100));
    cache.account('z'.repeat(100));
    expect(cache.size).toBe(2);
    expect(cache.account(`${base}c`)).toBe(0); // the prompts it shared a prefix with are gone
    const bounded = new PrefixCache();
    for (let run = 0; run < 1_000; run++) bounded.account(`run ${run}`);
    expect(DEFAULT_CACHED_PROMPTS).toBe(256);
    expect(bounded.size).toBe(256);
  });
});
