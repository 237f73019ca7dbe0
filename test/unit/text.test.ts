import { describe, expect, it } from 'vitest';
import { isRecord } from '../../lambdas/shared/json.js';
import { byCodeUnits, clip, shownValue } from '../../lambdas/shared/text.js';

describe('byCodeUnits', () => {
  it("orders ISO timestamps (toISOString's, the ledger's createdAt and decideBy) as their instants, and as localeCompare did", () => {
    // Across a second, a day, a month, a year and the millennium; the same instant twice.
    const instants = [0, 999, 1_000, 86_399_999, 86_400_000, 2_678_400_000, 31_536_000_000, 946_684_799_999, 946_684_800_000, 1_796_300_000_000, 1_796_300_000_000];
    const times = instants.map((ms) => new Date(ms).toISOString()).reverse();
    const sorted = [...times].sort(byCodeUnits);
    expect(sorted.map((time) => Date.parse(time))).toEqual([...instants].sort((a, b) => a - b));
    expect(sorted).toEqual([...times].sort((a, b) => a.localeCompare(b)));
    expect(byCodeUnits(times[0]!, times[0]!)).toBe(0);
  });
});

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

describe('shownValue', () => {
  it.each([
    ['a string, quoted (not read as a number, nor as nothing)', '0.5', '"0.5"'],
    ['an empty string', '', '""'],
    ['a long string, cut at 80 characters', 'x'.repeat(200), `"${'x'.repeat(79)}…"`],
    ['a number', 1.5, '1.5'],
    ['undefined', undefined, 'undefined'],
    ['null', null, 'null'],
    ["a module's namespace, by its first keys", { default: {}, saved: new Map() }, 'an object with default, saved'],
    ['an object without keys', new Map(), 'an object with no keys'],
    ['an array, by its length', ['a', 'b'], 'an array of 2 items'],
    ['a function, not its source', () => 'secret', 'a function'],
  ])('shows %s', (_, value, shown) => {
    expect(shownValue(value)).toBe(shown);
  });
});
