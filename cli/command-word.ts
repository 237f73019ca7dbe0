/** The root command's options that take a value (cli/program.ts's, which test/cli/stays-up.test.ts holds this to): the command is the first word that is neither an option nor one of their values. */
export const ROOT_OPTIONS_WITH_VALUE: ReadonlySet<string> = new Set(['--state-dir', '--stack', '--region']);

/**
 * The command a command line (`process.argv`) runs, read before commander parses it: the first
 * word past the root options and their values. Undefined when there is none, or when the root's
 * help is asked for first (`savepoint --help run` shows the root's help, which lists every
 * command). What reads it before the CLI loads (cli/savepoint.ts, cli/main.ts) chooses only what
 * costs speed: a word it misreads is parsed by commander all the same.
 */
export function commandWord(argv: readonly string[]): string | undefined {
  for (let index = 2; index < argv.length; index += 1) {
    const word = argv[index]!;
    if (word === '--help' || word === '-h') return undefined;
    if (ROOT_OPTIONS_WITH_VALUE.has(word)) index += 1;
    else if (!word.startsWith('-')) return word;
  }
  return undefined;
}
