import { describe, expect, it } from 'vitest';
import { program } from '../../cli/program.js';
import { ROOT_OPTIONS_WITH_VALUE } from '../../cli/command-word.js';
import { staysUp } from '../../cli/stays-up.js';

const argv = (...words: string[]) => ['node', 'bin/savepoint.js', ...words];

describe("the command line's command, read before the CLI loads (cli/stays-up.ts)", () => {
  it('finds the command past the root options and their values', () => {
    expect(staysUp(argv('serve', '--agent', 'a'))).toBe(true);
    expect(staysUp(argv('--state-dir', 'serve', 'replay', 'r1'))).toBe(false);
    expect(staysUp(argv('--state-dir', '/tmp/x', '--region', 'eu-west-1', 'mcp'))).toBe(true);
    expect(staysUp(argv('--state-dir=/tmp/x', 'console'))).toBe(true);
    expect(staysUp(argv('replay', 'serve'))).toBe(false);
    expect(staysUp(argv('run', '--agent', 'serve'))).toBe(false);
  });

  it('takes no command for a command that ends', () => {
    expect(staysUp(argv())).toBe(false);
    expect(staysUp(argv('--version'))).toBe(false);
  });

  it("knows every root option that takes a value (cli/program.ts's), so that its value is never read as the command", () => {
    const withValue = program.options.filter((option) => option.required || option.optional).map((option) => option.long);
    expect([...ROOT_OPTIONS_WITH_VALUE].sort()).toEqual(withValue.sort());
  });
});
