import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { isMissingCdk } from '../../local/template/synthesize.js';

/**
 * The local engine names the install command when the CDK it would synthesize with is missing
 * (local/template/synthesize.ts). Node says so in two ways, both taken here from Node itself, in a
 * directory no node_modules is above: an ES module's import (the installed package's dist/) and a
 * require (the CLI bundle of a checkout loads CommonJS packages with require: bin/bundle.js).
 */
const dir = mkdtempSync(join(tmpdir(), 'savepoint-missing-cdk-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What Node's own loader throws for a module that imports `specifier` (in a process of its own: vitest resolves a test's imports itself). */
const importing = async (specifier: string): Promise<unknown> => {
  const file = join(dir, `${specifier.replace(/\W/g, '-')}.mjs`);
  writeFileSync(file, `import ${JSON.stringify(specifier)};\n`);
  const script = `import(${JSON.stringify(pathToFileURL(file).href)}).then(() => console.log('"loaded"'), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`;
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { cwd: dir, timeout: 30_000 });
  return JSON.parse(stdout) as unknown;
};
const requiring = (specifier: string): unknown => {
  try {
    createRequire(join(dir, 'here.js'))(specifier);
    return 'loaded';
  } catch (error) {
    return error;
  }
};

describe('a CDK that is not installed', () => {
  it("is told by an import's ERR_MODULE_NOT_FOUND naming aws-cdk-lib or constructs", async () => {
    for (const name of ['aws-cdk-lib', 'constructs', 'aws-cdk-lib/aws-iam']) {
      const error = await importing(name);
      expect(error).toMatchObject({ code: 'ERR_MODULE_NOT_FOUND' });
      expect(isMissingCdk(error), name).toBe(true);
    }
  });

  it("is told by a require's MODULE_NOT_FOUND naming aws-cdk-lib, one of its modules, or constructs", () => {
    for (const name of ['aws-cdk-lib', 'aws-cdk-lib/aws-iam', 'constructs']) {
      const error = requiring(name);
      expect(error).toMatchObject({ code: 'MODULE_NOT_FOUND' });
      expect(isMissingCdk(error), name).toBe(true);
    }
  });

  it('is not another missing package, nor another error', async () => {
    expect(isMissingCdk(await importing('aws-cdk-lib-extras'))).toBe(false);
    expect(isMissingCdk(requiring('constructs-extras'))).toBe(false);
    expect(isMissingCdk(requiring('not-the-cdk/aws-cdk-lib'))).toBe(false);
    expect(isMissingCdk(new Error("Cannot find module 'aws-cdk-lib'"))).toBe(false);
    expect(isMissingCdk(undefined)).toBe(false);
  });
});
