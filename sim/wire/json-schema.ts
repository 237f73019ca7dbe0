import { Ajv } from 'ajv';

const ajv = new Ajv({ strict: false });

/**
 * Why `schema` is not a usable tool input schema (a JSON Schema whose root is an object), or
 * undefined when it is. All three providers refuse other roots.
 */
export function toolSchemaProblem(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'must be a JSON Schema object';
  // Every request repeats the same tool list: a verdict is kept per schema text (bounded).
  const key = JSON.stringify(schema);
  if (verdicts.has(key)) return verdicts.get(key);
  const verdict = !ajv.validateSchema(schema)
    ? `is not valid JSON Schema: ${ajv.errorsText(ajv.errors)}`
    : (schema as { type?: unknown }).type !== 'object'
      ? 'must have type "object" at its root'
      : undefined;
  if (verdicts.size >= MAX_VERDICTS) verdicts.delete(verdicts.keys().next().value!);
  verdicts.set(key, verdict);
  return verdict;
}

const MAX_VERDICTS = 256;
const verdicts = new Map<string, string | undefined>();
