/**
 * The synthesized template names this copy of savepoint: each step function's asset hash is taken
 * from its bundling options, which hold absolute paths, and each function version's logical id
 * from its code. So two checkouts (or installed copies) with the same sources synthesize different
 * version ids and must not share a cached template, while one copy synthesizes the same template
 * from whichever directory a command runs in (a run started in one and resumed from another meets
 * the same versions).
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { synthesizeTemplate } from '../../local/template/synthesize.js';

const exec = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const tsx = join(repo, 'node_modules/.bin/tsx');
const scratch = mkdtempSync(join(tmpdir(), 'savepoint-roots-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of this checkout's sources at another path (node_modules linked, not copied). */
function copyOfSavepoint(name: string): string {
  const root = join(scratch, name);
  for (const entry of ['infra', 'lambdas', 'local', 'package.json', 'tsconfig.json']) cpSync(join(repo, entry), join(root, entry), { recursive: true });
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'));
  return root;
}

/** Runs `script` (an ES module) with tsx in `cwd`, and parses what it prints. */
async function probe(script: string, cwd: string, args: string[] = []): Promise<unknown> {
  const file = join(scratch, `probe-${Math.random().toString(36).slice(2)}.mts`);
  writeFileSync(file, script);
  const { stdout } = await exec(tsx, [file, ...args], { cwd });
  return JSON.parse(stdout) as unknown;
}

describe('the template cache across copies of savepoint', () => {
  it('does not hand one checkout the template another cached from identical sources', async () => {
    const [first, second] = [copyOfSavepoint('first'), copyOfSavepoint('second')];
    const cache = mkdtempSync(join(scratch, 'cache-'));
    // Each copy caches a template marked with its own root, then reads what the cache holds for it.
    const script = (root: string) => `
      import { writeFileSync } from 'node:fs';
      import { readCachedTemplate, sourcesHash, templateCacheFile } from ${JSON.stringify(join(root, 'local/template/cache.ts'))};
      const [mode, dir] = process.argv.slice(2);
      const file = templateCacheFile('refund-reconciler', { dir });
      if (mode === 'plant') writeFileSync(file, JSON.stringify({ Resources: { Marker: { Type: ${JSON.stringify(root)} } } }), { mode: 0o600 });
      console.log(JSON.stringify({ sources: sourcesHash(), file, found: readCachedTemplate('refund-reconciler', { dir }) ?? null }));
    `;
    const planted = (await probe(script(first), first, ['plant', cache])) as { sources: string; file: string; found: unknown };
    expect(planted.found).toEqual({ Resources: { Marker: { Type: first } } });
    const other = (await probe(script(second), second, ['read', cache])) as typeof planted;
    expect(other.sources).toBe(planted.sources);
    expect(other.file).not.toBe(planted.file);
    expect(other.found).toBeNull();
  });

  it('synthesizes the same template (function versions and asset hashes) from any working directory', async () => {
    const elsewhere = mkdtempSync(join(scratch, 'cwd-'));
    const script = `
      import { synthesizeTemplate } from ${JSON.stringify(join(repo, 'local/template/synthesize.ts'))};
      console.log(JSON.stringify(await synthesizeTemplate('refund-reconciler')));
    `;
    const here = await synthesizeTemplate('refund-reconciler');
    const there = (await probe(script, elsewhere)) as typeof here;
    const versions = (template: typeof here) => Object.keys(template.Resources).filter((id) => template.Resources[id]!.Type === 'AWS::Lambda::Version');
    expect(versions(there).length).toBeGreaterThan(5);
    expect(versions(there)).toEqual(versions(here));
    expect(there).toEqual(here);
  });
});
