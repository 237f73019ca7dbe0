import type { z } from 'zod';
import { InvalidInputError } from './errors.js';

/**
 * Parses `value` with `schema`, or throws an `Agent.InvalidInput` error whose message names every
 * offending field (`what: field.path: message; …`). Used at every boundary: events, API bodies,
 * model output, tool arguments and configuration.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
  throw new InvalidInputError(`invalid ${what}: ${problems}`);
}
