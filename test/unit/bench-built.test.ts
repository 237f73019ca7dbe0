import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { staleBuilds } from '../../bench/built.js';

/** bench/built.ts: a benchmark that runs dist/ refuses a build older than the sources it was built from. */
describe('staleBuilds', () => {
  const roots: string[] = [];
  afterEach(() => {
    for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
  });

  /** A checkout with `files` (path: seconds since the epoch as its mtime). */
  function checkout(files: Record<string, number>): string {
    const root = mkdtempSync(join(tmpdir(), 'savepoint-built-'));
    roots.push(root);
    for (const [path, seconds] of Object.entries(files)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), '');
      utimesSync(join(root, path), seconds, seconds);
    }
    return root;
  }

  it('names each source whose build is missing or older, and none built after its source', () => {
    const root = checkout({
      'lambdas/a.ts': 100, 'dist/lambdas/a.js': 200,
      'lambdas/deep/b.ts': 300, 'dist/lambdas/deep/b.js': 200,
      'local/c.ts': 100,
      'local/types.d.ts': 500,
      'sim/d.ts': 100, 'dist/sim/d.js': 100,
    });
    expect(staleBuilds(['lambdas', 'local', 'sim'], root).sort()).toEqual([join('lambdas', 'deep', 'b.ts'), join('local', 'c.ts')]);
  });
});
