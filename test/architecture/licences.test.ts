import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from './import-graph.js';

/**
 * What a user installs carries no licence a company cannot ship: `@cloud-copilot/iam-simulate`
 * (AGPL-3.0) is a devDependency that only the twin's differential IAM test uses as its oracle
 * (test/support/iam-oracle.ts, used by test/local/iam-oracle.test.ts and iam-requests.test.ts); no
 * shipped source imports it, and it is not a dependency.
 */
const ROOT = new URL('../..', import.meta.url).pathname;
const SHIPPED = ['lambdas', 'local', 'infra', 'cli', 'sim', 'console', 'bench', 'agents'];
const ORACLE = '@cloud-copilot/';
/** An import or require of the oracle's packages (a comment may name them). */
const IMPORTS_ORACLE = /(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]@cloud-copilot\//;

describe('the AGPL IAM oracle', () => {
  it('is imported by no shipped source', () => {
    expect(IMPORTS_ORACLE.test(readFileSync(join(ROOT, 'test/support/iam-oracle.ts'), 'utf8'))).toBe(true); // the check sees an import
    const files = sourceFiles(ROOT, SHIPPED);
    expect(files.length).toBeGreaterThan(40);
    expect(files.filter((file) => IMPORTS_ORACLE.test(readFileSync(join(ROOT, file), 'utf8')))).toEqual([]);
  });

  it('is a devDependency only', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith(ORACLE))).toEqual([]);
    expect(Object.keys(manifest.devDependencies)).toContain('@cloud-copilot/iam-simulate');
  });
});
