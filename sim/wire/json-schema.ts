import { Ajv } from 'ajv';

const ajv = new Ajv({ strict: false });

/**
 * Why `schema` is not a usable tool input schema (a JSON Schema whose root is an object), or
 * undefined when it is. All three providers refuse other roots.
 */
export function toolSchemaProblem(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'must be a JSON Schema object';
  if (!ajv.validateSchema(schema)) return `is not valid JSON Schema: ${ajv.errorsText(ajv.errors)}`;
  if ((schema as { type?: unknown }).type !== 'object') return 'must have type "object" at its root';
  return undefined;
}
