import type { z } from 'zod';
import { InvalidInputError } from './errors.js';

/**
 * Parses `value` with `schema`, or throws an `Agent.InvalidInput` error whose message names every
 * offending field (`what: field.path: message; …`; a value refused whole, such as an option's, is
 * `what: message`). Used at every boundary: events, API bodies, model output, tool arguments and
 * configuration.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new InvalidInputError(`invalid ${what}: ${problemsOf(result.error)}`);
}

/** Every problem zod found, each under its field (`field.path: message`, or the message alone for the value as a whole), `; `-joined. */
export function problemsOf(error: { readonly issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[] }): string {
  return error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message)).join('; ');
}
