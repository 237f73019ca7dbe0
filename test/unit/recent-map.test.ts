import { describe, expect, it } from 'vitest';
import { RecentMap } from '../../lambdas/shared/recent-map.js';

describe('RecentMap (a memo bounded by its most recently used entries)', () => {
  it('keeps at most `limit` entries however many keys it is given', () => {
    const memo = new RecentMap<string, number>(8);
    for (let run = 0; run < 1_000; run++) memo.set(`run-${run}`, run);
    expect(memo.size).toBe(8);
    expect(memo.get('run-999')).toBe(999);
    expect(memo.get('run-991')).toBeUndefined();
  });

  it('forgets the least recently used first: an entry in use stays while newer keys come and go', () => {
    const memo = new RecentMap<string, string>(3);
    memo.set('hot', 'h');
    for (let run = 0; run < 100; run++) {
      expect(memo.getOrSet('hot', () => 'made again')).toBe('h');
      memo.set(`run-${run}`, 'r');
    }
    expect(memo.get('hot')).toBe('h');
    expect(memo.size).toBe(3);
  });

  it('makes a missing value once, and keeps an undefined value as a value', () => {
    const memo = new RecentMap<string, string | undefined>(2);
    let made = 0;
    expect(memo.getOrSet('a', () => (made++, undefined))).toBeUndefined();
    expect(memo.getOrSet('a', () => (made++, 'other'))).toBeUndefined();
    expect(made).toBe(1);
  });

  it('refuses a limit below 1, naming it', () => {
    expect(() => new RecentMap(0)).toThrow(/limit must be at least 1, got 0/);
  });
});
