import type { z } from 'zod';
/**
 * Parses `value` with `schema`, or throws an `Agent.InvalidInput` error whose message names every
 * offending field (`what: field.path: message; …`). Used at every boundary: events, API bodies,
 * model output, tool arguments and configuration.
 */
export declare function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S>;
