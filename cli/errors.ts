import type { Command } from 'commander';
import { z } from 'zod';
import { problemsOf } from '../lambdas/shared/validation.js';
/**
 * A mistake in what the user asked for — a bad option or file, a state directory that cannot be
 * used — told in one sentence. The CLI exits 2 for it, as it does for invalid input.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'a part of the path is a file',
  ENOENT: 'no such file or directory',
  ENOSPC: 'no space left on the device',
  EISDIR: 'it is a directory',
};

/** An fs error as the end of a sentence. */
export function describe(error: unknown): string {
  const code = (error as { code?: string } | undefined)?.code;
  return (code && REASONS[code]) ?? (error instanceof Error ? error.message : String(error));
}

/**
 * A file system error that names its file (Node's `path`, with `dest` for a rename: a state
 * directory's file replaced by a directory, one made unreadable) as one sentence naming the file
 * and the operation: `cannot read /x/ledger.head: it is a directory (EISDIR)`. Undefined for any
 * other error.
 */
export function fileErrorMessage(error: unknown): string | undefined {
  const { code, syscall, path, dest } = (error ?? {}) as NodeJS.ErrnoException & { dest?: string };
  if (typeof code !== 'string' || typeof syscall !== 'string' || typeof path !== 'string') return undefined;
  const reason = REASONS[code] ?? (error instanceof Error ? error.message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*$/, '') : code);
  return `cannot ${syscall} ${path}${typeof dest === 'string' ? ` to ${dest}` : ''}: ${reason} (${code})`;
}

/**
 * Why a server could not listen where the command line asked, as a UsageError naming the option
 * (exit 2, one sentence); any other error as it is.
 */
export function listenRefused(error: unknown, where: { port?: number | undefined; host?: string; portOption?: string }): unknown {
  const { port, host = '127.0.0.1', portOption = '--port' } = where;
  switch ((error as { code?: string } | undefined)?.code) {
    case 'EADDRINUSE':
      return new UsageError(`${portOption} ${port}: the port is in use on ${host}; pass another, or none for any free port`);
    case 'EACCES':
      return new UsageError(`${portOption} ${port}: this user may not listen on it (a port below 1024 needs privileges); pass another, or none for any free port`);
    case 'EADDRNOTAVAIL':
      return new UsageError(`--host ${host}: not an address of this machine; pass one of its own (127.0.0.1, the default, or 0.0.0.0 for every one)`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new UsageError(`--host ${host}: no such host; pass an address of this machine`);
    default:
      return error;
  }
}

/**
 * The options of the command being run that took their value from an environment variable
 * (commander's `Option.env`: the value's source is 'env'), by commander's name, with the variable:
 * a message about such a value names the variable the user set, not a flag they never typed.
 * Noted as the command's action starts (cli/program.ts).
 */
const fromEnvironment = new Map<string, string>();

/** Notes which of `command`'s options took their value from an environment variable (`asTyped` names it). */
export function noteEnvironmentOptions(command: Command): void {
  fromEnvironment.clear();
  for (const option of command.options) {
    const name = option.attributeName();
    if (option.envVar !== undefined && command.getOptionValueSource(name) === 'env') fromEnvironment.set(name, option.envVar);
  }
}

/**
 * An option as the user gave it, from commander's name of it: `maxDollars` → `--max-dollars`; or,
 * when its value came from an environment variable, that variable: `$SAVEPOINT_APPROVAL_TIMEOUT`.
 */
export const asTyped = (name: string): string => {
  const variable = fromEnvironment.get(name);
  return variable === undefined ? `--${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}` : `$${variable}`;
};

/**
 * A number option's text, for the schemas `parseOptions` reads. Not `z.coerce.number()`, which is
 * JavaScript's `Number()`: it took `0x10` as 16, `1e2` as 100, ` 5` as 5, `5.0` as a whole 5 and
 * `''` as 0, so a slip ran with a budget, a port or a seed nobody wrote. A count, a port or a seed
 * is a whole number: decimal digits only. An amount (dollars, a probability) may have a fraction:
 * digits with one point. Anything else is refused, naming the option and the text.
 */
const numberText = (pattern: RegExp, expected: string) =>
  z
    .string()
    .regex(pattern, { error: (issue) => `expected ${expected}, not ${JSON.stringify(issue.input)}` })
    .transform(Number);

/** A whole-number option (`--max-steps 16`): decimal digits, then `bounds` (e.g. `z.number().positive()`). */
export const wholeNumberOption = (bounds: z.ZodNumber = z.number()) => numberText(/^\d+$/, 'a whole number in decimal digits').pipe(bounds.int());

/** An amount option (`--max-dollars 2.50`, `--fail-rate .1`): decimal digits with at most one point, then `bounds`. */
export const amountOption = (bounds: z.ZodNumber = z.number()) => numberText(/^(?:\d+(?:\.\d+)?|\.\d+)$/, 'a number in decimal digits (e.g. 2.5)').pipe(bounds);

/**
 * A command's options (by commander's camelCase names) parsed by `schema`, or a UsageError that
 * names each bad one as the user typed it: `invalid options: --max-dollars: Too small: …`.
 */
export function parseOptions<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issues = result.error.issues.map(({ path: [first, ...rest], message }) => ({ path: first === undefined ? [] : [typeof first === 'string' ? asTyped(first) : first, ...rest], message }));
  throw new UsageError(`invalid options: ${problemsOf({ issues })}`);
}
