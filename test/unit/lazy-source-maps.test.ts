/**
 * A step's bundle maps its stack traces to the sources when a stack is first formatted, not by
 * Node's --enable-source-maps at each cold start (issue 38, item 7): built as infra/step-bundle.ts
 * builds a step (minified, its map beside it, lazy-source-maps.ts injected), run without
 * NODE_OPTIONS.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'savepoint-lazy-maps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The step bundled into `dir/<out>`: a bundle of each test's own, so that none sees what another did to its files. */
function bundle(out: string): string {
  const entry = join(dir, 'step.ts');
  writeFileSync(entry, ['export function handler(input: { fail: boolean }): string {', '  if (input.fail) {', "    throw new Error('the step failed');", '  }', "  return 'ok';", '}', ''].join('\n'));
  buildSync({ entryPoints: { index: entry }, outdir: join(dir, out), bundle: true, format: 'esm', platform: 'node', outExtension: { '.js': '.mjs' }, minify: true, keepNames: true, sourcemap: 'linked', sourcesContent: false, inject: [new URL('../../lambdas/adapters/lazy-source-maps.ts', import.meta.url).pathname], logLevel: 'silent' });
  return join(dir, out, 'index.mjs');
}

/** The stack of the bundled step's error, in a fresh process without NODE_OPTIONS; `beforeThrow` runs after the import. */
function stackOf(file: string, beforeThrow = ''): string {
  const script = `const { handler } = await import(${JSON.stringify(`file://${file}`)}); ${beforeThrow} try { handler({ fail: true }); } catch (error) { process.stdout.write(String(error.stack)); }`;
  return execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
}

describe('lazy source maps in a step bundle', () => {
  it("names the source file and line of each frame, as Node's own source maps would", () => {
    const stack = stackOf(bundle('mapped'));
    expect(stack.split('\n')[0]).toBe('Error: the step failed');
    expect(stack).toMatch(/\n {4}at handler \(file:\/\/.*\/step\.ts:3:11\)/);
  });

  it('reads the map when a stack is formatted, not when the bundle is imported', () => {
    // The map taken away after the import: the frames stay the bundle's own (it was never read before).
    const file = bundle('map-taken-away');
    const stack = stackOf(file, `(await import('node:fs')).renameSync(${JSON.stringify(`${file}.map`)}, ${JSON.stringify(`${file}.map.away`)});`);
    expect(stack).toMatch(/\n {4}at handler \(file:\/\/.*\/index\.mjs:\d+:\d+\)/);
    expect(stack).not.toContain('step.ts');
  });
});
