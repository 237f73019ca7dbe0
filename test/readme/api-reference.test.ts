import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The generated API reference (issue 39, item 3): `npm run docs` (bin/docs.js) has TypeDoc write it
 * from the TSDoc of every entry point, and fails on any warning; `.ci/run` runs it after the API
 * report. This keeps those parts whole (the run itself is CI's: it takes a minute of CPU).
 */
const ROOT = new URL('../../', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string>; exports: Record<string, unknown> };
const DOCS_JS = readFileSync(join(ROOT, 'bin/docs.js'), 'utf8');

describe('the API reference', () => {
  it('is built by npm run docs, which .ci/run runs after the API report', () => {
    expect(pkg.scripts['docs']).toBe('node bin/docs.js');
    const ciRun = readFileSync(join(ROOT, '.ci/run'), 'utf8').split('\n');
    expect(ciRun.indexOf('npm run docs')).toBeGreaterThan(ciRun.indexOf('npm run api'));
    expect(ciRun.indexOf('npm run api')).toBeGreaterThan(-1);
  });

  it('is TypeDoc, a devDependency only, over every entry point of the package, a warning failing it', () => {
    expect(pkg.devDependencies['typedoc']).toMatch(/^\d+\.\d+\.\d+$/);
    expect(pkg.dependencies['typedoc']).toBeUndefined();
    // The entry points are read from package.json's exports, not listed: a new one is documented too.
    expect(DOCS_JS).toMatch(/Object\.values\(pkg\.exports\)/);
    expect(Object.keys(pkg.exports).filter((subpath) => subpath !== './package.json').length).toBeGreaterThanOrEqual(5);
    expect(DOCS_JS).toMatch(/treatWarningsAsErrors: true/);
    expect(DOCS_JS).toMatch(/app\.validate\(project\)/);
    expect(DOCS_JS).toMatch(/invalidLink: true/);
  });

  it('is written where git does not keep it', () => {
    expect(readFileSync(join(ROOT, '.gitignore'), 'utf8').split('\n')).toContain('docs/api/');
    expect(DOCS_JS).toMatch(/join\(root, 'docs', 'api'\)/);
  });
});
