/**
 * The commands that stay up keep zod's default (compiled parsers): they parse the same schemas for
 * every run they serve. The others end after a run or a read (cli/savepoint.ts).
 */
const STAYS_UP: ReadonlySet<string> = new Set(['serve', 'mcp', 'console']);

/** The root command's options that take a value (cli/program.ts's, which test/cli/stays-up.test.ts holds this to): the command is the first word that is neither an option nor one of their values. */
export const ROOT_OPTIONS_WITH_VALUE: ReadonlySet<string> = new Set(['--state-dir', '--stack', '--region']);

/**
 * Whether the command line (`process.argv`) runs a command that stays up. Read before commander
 * parses it (the choice must precede the CLI's modules): a word it misreads only costs speed, as
 * either way every input is accepted and refused alike.
 */
export function staysUp(argv: readonly string[]): boolean {
  for (let index = 2; index < argv.length; index += 1) {
    const word = argv[index]!;
    if (ROOT_OPTIONS_WITH_VALUE.has(word)) index += 1;
    else if (!word.startsWith('-')) return STAYS_UP.has(word);
  }
  return false;
}
