import type * as z from 'zod';

/**
 * A zod schema made the first time it is asked for (`Schema()`), then kept: the one way the
 * harness declares a schema that many processes never parse. Every module a process loads builds
 * its top-level schemas as it loads, ~10 µs of CPU each (a `z.number().int().positive()` is three
 * schemas), and most of them serve one command or one step: `savepoint replay` built ~700 of the
 * harness's and parsed with ~90 (issue 38). A schema of the public API (`savepoint`'s exports) stays
 * a value: the package's users read it as one.
 *
 * A function rather than a proxy or a getter: nothing stands between a parse and the schema once
 * it is made, and `z.infer<ReturnType<typeof Schema>>` is its exact type. The schema is the one
 * `make` returns, with its messages.
 */
export function schemaOnFirstUse<S extends z.ZodType>(make: () => S): () => S {
  let schema: S | undefined;
  return () => (schema ??= make());
}
