import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { amountOption, parseOptions, wholeNumberOption } from '../../cli/errors.js';

describe("a command's options", () => {
  const Options = z.object({ maxDollars: z.number().positive().optional(), since: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD').optional(), tags: z.array(z.string()).optional() }).strict();

  it('are parsed as the schema says', () => {
    expect(parseOptions(Options, { maxDollars: 2 })).toEqual({ maxDollars: 2 });
  });

  it('are refused naming each bad one as the user typed it, exit 2', () => {
    expect(() => parseOptions(Options, { maxDollars: -1, since: 'yesterday' })).toThrow(
      expect.objectContaining({ name: 'UsageError', message: 'invalid options: --max-dollars: Too small: expected number to be >0; --since: expected YYYY-MM-DD' }),
    );
    expect(() => parseOptions(Options, { tags: ['a', 3] })).toThrow('invalid options: --tags.1: Invalid input: expected string, received number');
    expect(() => parseOptions(Options, 'nothing')).toThrow('invalid options: Invalid input: expected object, received string');
  });

  // Not JavaScript's Number(), which took each of these as a number nobody wrote.
  const Numbers = z.object({ maxSteps: wholeNumberOption(z.number().positive()).optional(), maxDollars: amountOption(z.number().positive()).optional() });
  it.each(['0x10', '1e2', '5.0', ' 5', '5 ', '+5', '-5', '', 'Infinity', '1_000'])('refuse a whole number written %j, naming the option and the text', (text) => {
    expect(() => parseOptions(Numbers, { maxSteps: text })).toThrow(`invalid options: --max-steps: expected a whole number in decimal digits, not ${JSON.stringify(text)}`);
  });
  it.each(['0x1', '1e1', '1.', '.', '1.2.3', ' 2', 'NaN'])('refuse an amount written %j, naming the option and the text', (text) => {
    expect(() => parseOptions(Numbers, { maxDollars: text })).toThrow(`invalid options: --max-dollars: expected a number in decimal digits (e.g. 2.5), not ${JSON.stringify(text)}`);
  });
  it('take decimal digits, then the bounds', () => {
    expect(parseOptions(Numbers, { maxSteps: '016', maxDollars: '2.50' })).toEqual({ maxSteps: 16, maxDollars: 2.5 });
    expect(parseOptions(Numbers, { maxDollars: '.5' })).toEqual({ maxDollars: 0.5 });
    expect(() => parseOptions(Numbers, { maxSteps: '0' })).toThrow('invalid options: --max-steps: Too small: expected number to be >0');
  });
});
