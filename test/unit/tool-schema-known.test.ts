import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { validatedToolSchemas } from '../../local/template/cache.js';
import { toolSchemaProblem } from '../../sim/wire/json-schema.js';

/**
 * The simulated provider's tool-schema check, remembered across processes (each engine paid ~45 ms
 * to load ajv for it): only a schema that passed is remembered, by a marker in the cache
 * directory that a later process's cache finds; a schema known valid is not checked again.
 */
const dir = mkdtempSync(join(tmpdir(), 'savepoint-schema-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tool schemas known valid across processes', () => {
  it('remembers a valid schema on disk, and never an invalid one', () => {
    const known = validatedToolSchemas({ dir });
    const added: string[] = [];
    const recording = { has: known.has, add: (text: string) => (added.push(text), known.add(text)) };
    const valid = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false };
    expect(toolSchemaProblem(valid, recording)).toBeUndefined();
    expect(toolSchemaProblem({ type: 'object', properties: { id: { type: 'nope' } } }, recording)).toMatch(/^is not valid JSON Schema: /);
    expect(toolSchemaProblem({ type: 'array', items: { type: 'string' } }, recording)).toBe('must have type "object" at its root');
    expect(added).toHaveLength(1);
    expect(added[0]).toContain(JSON.stringify(valid));
    expect(readdirSync(dir).filter((name) => name.startsWith('valid-tool-schema-'))).toHaveLength(1);
    // The next process's cache finds it on disk.
    expect(validatedToolSchemas({ dir }).has(added[0]!)).toBe(true);
    expect(validatedToolSchemas({ dir }).has(added[0]!.replace('"string"', '"number"'))).toBe(false);
  });

  it('does not check a schema the cache knows valid', () => {
    // Invalid, but the cache says it passed: the verdict is the cache's (what makes a later process skip ajv).
    expect(toolSchemaProblem({ type: 'object', properties: { n: { type: 'not-a-type' } } }, { has: () => true, add: () => undefined })).toBeUndefined();
  });
});
