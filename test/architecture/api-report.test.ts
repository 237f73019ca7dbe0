import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The checked API surface (issue 39, item 1): a report per entry point in api/, which `npm run api`
 * (bin/api.js, run by .ci/run) compares with the build's declarations and which fails on an
 * undocumented export. This keeps the parts around it whole: a report for every entry point and
 * none for a gone one, the check in CI, and an `@example` where users meet each entry point.
 */
const ROOT = new URL('../../', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; scripts: Record<string, string>; exports: Record<string, string | { 'savepoint-source'?: string; types?: string }> };
const entryPoints = Object.entries(pkg.exports).flatMap(([subpath, target]) => (typeof target === 'object' && target.types ? [{ subpath, source: target['savepoint-source']! }] : []));

describe('the API report', () => {
  it('has one report per entry point in api/, and none for an entry point that is gone', () => {
    const reports = readdirSync(join(ROOT, 'api')).filter((file) => file.endsWith('.api.md'));
    const expected = entryPoints.map(({ subpath }) => `${subpath === '.' ? pkg.name : `${pkg.name}-${subpath.slice(2)}`}.api.md`);
    expect(reports.sort()).toEqual(expected.sort());
    expect(expected).toHaveLength(6);
  });

  it('is checked by npm run api, which .ci/run runs after the tests', () => {
    expect(pkg.scripts['api']).toBe('node bin/api.js');
    const ciRun = readFileSync(join(ROOT, '.ci/run'), 'utf8').split('\n');
    expect(ciRun).toContain('npm run api');
    expect(ciRun.indexOf('npm run api')).toBeGreaterThan(ciRun.indexOf('npm test'));
    // An undocumented export is an error, not a line of the report.
    expect(readFileSync(join(ROOT, 'bin/api.js'), 'utf8')).toMatch(/'ae-undocumented': \{ logLevel: 'error'/);
  });

  it.each(entryPoints.map(({ subpath, source }) => [subpath, source] as const))('documents entry point %s with an @example in its module comment', (_, source) => {
    const moduleComment = /^\/\*\*([\s\S]*?)\*\//.exec(readFileSync(join(ROOT, source), 'utf8'))?.[1] ?? '';
    expect(moduleComment).toMatch(/@example\n \* ```ts\n/);
  });
});
