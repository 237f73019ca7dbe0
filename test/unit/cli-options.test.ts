import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { parseOptions } from '../../cli/errors.js';

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
});
