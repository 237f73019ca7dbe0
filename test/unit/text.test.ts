import { describe, expect, it } from 'vitest';
import { isRecord } from '../../lambdas/shared/json.js';
import { clip } from '../../lambdas/shared/text.js';

describe('clip', () => {
  it('leaves text of at most the limit as it is', () => {
    expect(clip('a'.repeat(300), 300)).toBe('a'.repeat(300));
    expect(clip('', 3)).toBe('');
  });

  it('cuts longer text to the limit, its ellipsis included, unless told how much to keep', () => {
    expect(clip('a'.repeat(301), 300)).toBe(`${'a'.repeat(299)}…`);
    // The loop guard's messages: over 160 characters, 157 kept.
    expect(clip('b'.repeat(161), 160, 157)).toBe(`${'b'.repeat(157)}…`);
    expect(clip('b'.repeat(160), 160, 157)).toBe('b'.repeat(160));
    // Replay's divergence report: over 240, 240 kept and the ellipsis after them.
    expect(clip('c'.repeat(241), 240, 240)).toBe(`${'c'.repeat(240)}…`);
  });
});

describe('isRecord', () => {
  it('holds for a plain object only', () => {
    expect([{}, { a: 1 }, null, [], 'x', 1, undefined].map(isRecord)).toEqual([true, true, false, false, false, false, false]);
  });
});
