import { commandWord } from './command-word.js';

/**
 * The commands that stay up keep zod's default (compiled parsers): they parse the same schemas for
 * every run they serve. The others end after a run or a read (cli/savepoint.ts).
 */
const STAYS_UP: ReadonlySet<string> = new Set(['serve', 'mcp', 'console']);

/**
 * Whether the command line (`process.argv`) runs a command that stays up. Read before commander
 * parses it (the choice must precede the CLI's modules): a word it misreads only costs speed, as
 * either way every input is accepted and refused alike.
 */
export function staysUp(argv: readonly string[]): boolean {
  const command = commandWord(argv);
  return command !== undefined && STAYS_UP.has(command);
}
