import { createRequire } from 'node:module';
import type { Ajv } from 'ajv';

/** Texts known to pass a check, kept across processes (local/template/cache.ts's validatedToolSchemas). */
export interface KnownValid {
  has(text: string): boolean;
  add(text: string): void;
}

const requireHere = createRequire(import.meta.url);

/**
 * ajv, loaded at the first schema not known valid: its code and the draft-07 meta-schema it
 * compiles cost a process ~45 ms of CPU, for the same tool list every run of an agent sends.
 */
let ajv: Ajv | undefined;
function validator(): Ajv {
  if (!ajv) {
    const loaded = requireHere('ajv') as typeof import('ajv');
    ajv = new loaded.Ajv({ strict: false });
  }
  return ajv;
}

/** What a verdict depends on besides the schema: ajv's version and this file's rule (change the rule's number when it changes). */
const CHECK = `ajv ${(requireHere('ajv/package.json') as { version: string }).version}, object root 1`;

/**
 * Why `schema` is not a usable tool input schema (a JSON Schema whose root is an object), or
 * undefined when it is. All three providers refuse other roots. `known`: schemas found valid
 * before, by this process or an earlier one, checked no more.
 */
export function toolSchemaProblem(schema: unknown, known?: KnownValid): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'must be a JSON Schema object';
  // Every request repeats the same tool list: a verdict is kept per schema text (bounded).
  const key = JSON.stringify(schema);
  if (verdicts.has(key)) return verdicts.get(key);
  const text = `${CHECK}\0${key}`;
  let verdict: string | undefined;
  if (!known?.has(text)) {
    verdict = check(schema);
    if (verdict === undefined) known?.add(text);
  }
  if (verdicts.size >= MAX_VERDICTS) verdicts.delete(verdicts.keys().next().value!);
  verdicts.set(key, verdict);
  return verdict;
}

function check(schema: object): string | undefined {
  const ajv = validator();
  if (!ajv.validateSchema(schema)) return `is not valid JSON Schema: ${ajv.errorsText(ajv.errors)}`;
  return (schema as { type?: unknown }).type !== 'object' ? 'must have type "object" at its root' : undefined;
}

const MAX_VERDICTS = 256;
const verdicts = new Map<string, string | undefined>();
