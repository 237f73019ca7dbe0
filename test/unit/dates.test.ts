import { describe, expect, it } from 'vitest';
import { CalendarDate } from '../../lambdas/shared/dates.js';
import { parseOrThrow } from '../../lambdas/shared/validation.js';

describe('CalendarDate', () => {
  it.each([
    ['2026-11-28'],
    ['2028-02-29'], // a leap year
    ['2000-02-29'], // divisible by 400: a leap year
    ['2026-12-31'],
    ['2026-01-01'],
    ['2026-04-30'],
    ['0004-02-29'], // early leap years too
  ])('accepts the real date %s', (value) => {
    expect(CalendarDate.parse(value)).toBe(value);
  });

  it.each([
    ['2026-13-45', /month 13 is not 01–12/],
    ['2026-00-10', /month 00 is not 01–12/],
    ['2026-02-30', /February 2026 has days 01–28/],
    ['2026-02-29', /February 2026 has days 01–28/], // not a leap year
    ['1900-02-29', /February 1900 has days 01–28/], // divisible by 100, not 400
    ['2026-04-31', /April 2026 has days 01–30/],
    ['2026-11-00', /November 2026 has days 01–30/],
    ['0000-01-01', /no year 0000/],
    ['2026-1-5', /expected a date YYYY-MM-DD/],
    ['28/11/2026', /expected a date YYYY-MM-DD/],
    ['2026-11-28T00:00:00Z', /expected a date YYYY-MM-DD/],
    ['', /expected a date YYYY-MM-DD/],
  ])('rejects %s, naming the problem', (value, message) => {
    expect(() => parseOrThrow(CalendarDate, value, 'date')).toThrow(message);
  });

  it('reports one problem per bad value, under the field it came in', () => {
    const result = parseOrThrow.bind(null, CalendarDate.optional(), '2026-02-30', 'options');
    expect(result).toThrow(/^invalid options: 2026-02-30 is not a calendar date: February 2026 has days 01–28$/);
  });
});
