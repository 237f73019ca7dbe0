import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { missingPeer, missingPeerMessage, OPTIONAL_PEERS, peerVersion, requirePeer } from '../../local/packages/optional-peers.js';
import { isMissingCdk } from '../../local/template/synthesize.js';

/**
 * A command that needs an optional peer the project has not installed names it and its install
 * command (local/packages/optional-peers.ts). Node says a package is missing in two ways, both
 * taken here from Node itself, in a directory no node_modules is above: an ES module's import (the
 * installed package's dist/ and its CLI bundle) and a require (the CLI bundle of a checkout loads
 * CommonJS packages with require: bin/bundle.js).
 */
const dir = mkdtempSync(join(tmpdir(), 'savepoint-optional-peers-'));
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

describe('an optional peer that is not installed', () => {
  it("is each of package.json's optional peers, and no other package", () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { peerDependenciesMeta: Record<string, { optional?: boolean }> };
    const optional = Object.entries(manifest.peerDependenciesMeta).filter(([, meta]) => meta.optional).map(([name]) => name);
    expect(Object.keys(OPTIONAL_PEERS).sort()).toEqual(optional.sort());
  });

  it("is told by an import's ERR_MODULE_NOT_FOUND naming the package or one of its modules", async () => {
    for (const name of [...Object.keys(OPTIONAL_PEERS), 'aws-cdk-lib/aws-iam']) {
      const error = await importing(name);
      expect(error).toMatchObject({ code: 'ERR_MODULE_NOT_FOUND' });
      expect(missingPeer(error), name).toBe(name.split('/')[0]);
    }
    expect(isMissingCdk(await importing('constructs'))).toBe(true);
  });

  it("is told by a require's MODULE_NOT_FOUND naming the package or one of its modules", () => {
    for (const name of [...Object.keys(OPTIONAL_PEERS), 'aws-cdk-lib/aws-iam']) {
      const error = requiring(name);
      expect(error).toMatchObject({ code: 'MODULE_NOT_FOUND' });
      expect(missingPeer(error), name).toBe(name.split('/')[0]);
    }
    expect(isMissingCdk(requiring('aws-cdk-lib/aws-iam'))).toBe(true);
  });

  it('is not another missing package, nor another error', async () => {
    expect(missingPeer(await importing('aws-cdk-lib-extras'))).toBeUndefined();
    expect(missingPeer(requiring('dynalite-extras'))).toBeUndefined();
    expect(missingPeer(requiring('not-the-cdk/aws-cdk-lib'))).toBeUndefined();
    expect(missingPeer(new Error("Cannot find module 'aws-cdk-lib'"))).toBeUndefined();
    expect(missingPeer(undefined)).toBeUndefined();
    expect(isMissingCdk(await importing('dynalite'))).toBe(false);
  });

  it('is named with what needs it and the command that installs it', () => {
    expect(missingPeerMessage('aws-local-stepfunctions')).toBe(
      'the local engine runs the state machine with aws-local-stepfunctions, an optional peer dependency of savepoint: npm install -D aws-local-stepfunctions',
    );
    expect(missingPeerMessage('constructs')).toMatch(/: npm install -D aws-cdk-lib constructs$/);
  });

  it('is refused before use by requirePeer, where an installed one passes', () => {
    expect(() => requirePeer('dynalite', pathToFileURL(join(dir, 'here.js')).href)).toThrow(missingPeerMessage('dynalite'));
    expect(() => requirePeer('dynalite')).not.toThrow();
  });
});

describe("an optional peer's version", () => {
  it('is read from the peer installed beside savepoint, whose exports do not expose its package.json', () => {
    // An application's node_modules: savepoint's dist/ (no node_modules of its own), and the peer beside it.
    const app = join(dir, 'app', 'node_modules');
    const from = join(app, 'savepoint', 'dist', 'local', 'packages', 'optional-peers.js');
    const peer = join(app, 'aws-local-stepfunctions');
    mkdirSync(dirname(from), { recursive: true });
    mkdirSync(join(peer, 'build'), { recursive: true });
    writeFileSync(from, '');
    writeFileSync(join(peer, 'package.json'), JSON.stringify({ name: 'aws-local-stepfunctions', version: '3.9.1', exports: { import: './build/main.mjs', require: './build/main.cjs' } }));
    writeFileSync(join(peer, 'build', 'package.json'), JSON.stringify({ type: 'commonjs' }));
    writeFileSync(join(peer, 'build', 'main.cjs'), '');
    expect(() => createRequire(from).resolve('aws-local-stepfunctions/package.json')).toThrow(/not defined by "exports"/);
    expect(peerVersion('aws-local-stepfunctions', pathToFileURL(from).href)).toBe('3.9.1');
    expect(peerVersion('dynalite', pathToFileURL(from).href)).toBeUndefined();
  });

  it("is this checkout's installed one by default", () => {
    const installed = JSON.parse(readFileSync(new URL('../../node_modules/aws-local-stepfunctions/package.json', import.meta.url), 'utf8')) as { version: string };
    expect(peerVersion('aws-local-stepfunctions')).toBe(installed.version);
  });
});

