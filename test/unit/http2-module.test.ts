/**
 * A step's bundle loads `node:http2` when it is first used, not at the cold start (issue 38, item
 * 7): the SDK's HTTP/2 handler, bundled as infra/step-bundle.ts bundles a step (`http2` aliased
 * to lambdas/adapters/http2-module.ts), imports without loading the module, and still makes its
 * requests — here to an HTTP/2 server over loopback, in a fresh process.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const shim = join(root, 'lambdas/adapters/http2-module.ts');
const dir = mkdtempSync(join(tmpdir(), 'savepoint-http2-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const entry = `
import { NodeHttp2Handler } from '@smithy/node-http-handler';
import { HttpRequest } from '@smithy/core/transport';
export const http2Loaded = () => process.moduleLoadList.includes('NativeModule http2');
export async function get(port) {
  const handler = new NodeHttp2Handler();
  const { response } = await handler.handle(new HttpRequest({ protocol: 'http:', hostname: '127.0.0.1', port, method: 'GET', path: '/ping', headers: {} }));
  let body = '';
  for await (const chunk of response.body) body += chunk;
  handler.destroy();
  return { status: response.statusCode, body };
}`;

function bundle(alias: boolean): string {
  const outdir = join(dir, alias ? 'aliased' : 'plain');
  buildSync({
    stdin: { contents: entry, resolveDir: root, sourcefile: 'entry.mjs' },
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'node',
    outExtension: { '.js': '.mjs' },
    mainFields: ['module', 'main'],
    conditions: ['module'],
    ...(alias && { alias: { http2: shim, 'node:http2': shim } }),
    logLevel: 'silent',
  });
  return join(outdir, 'stdin.mjs');
}

/** In a fresh process: whether importing the bundle loaded node:http2, then a GET through the SDK's HTTP/2 handler to a loopback HTTP/2 server. */
function run(file: string): { loadedAtImport: boolean; answer: { status: number; body: string } } {
  const script = `
    const bundle = await import(${JSON.stringify(`file://${file}`)});
    const loadedAtImport = bundle.http2Loaded();
    const server = process.getBuiltinModule('node:http2').createServer((request, response) => response.end('pong ' + request.url));
    await new Promise((listening) => server.listen(0, '127.0.0.1', listening));
    const answer = await bundle.get(server.address().port);
    server.close();
    process.stdout.write(JSON.stringify({ loadedAtImport, answer }));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' })) as never;
}

describe('node:http2 in a step bundle', () => {
  it('is not loaded when the bundle is imported, and serves the HTTP/2 handler when it is used', () => {
    expect(run(bundle(true))).toEqual({ loadedAtImport: false, answer: { status: 200, body: 'pong /ping' } });
  });

  it('is loaded at import without the alias (the control)', () => {
    expect(run(bundle(false))).toEqual({ loadedAtImport: true, answer: { status: 200, body: 'pong /ping' } });
  });

  it("gives an agent's code that imports its names the module's own, and its constants in full", () => {
    const outdir = join(dir, 'named');
    buildSync({
      stdin: { contents: "import http2, { constants, sensitiveHeaders, connect } from 'node:http2'; export default { http2, constants, sensitiveHeaders, connect };", resolveDir: root, sourcefile: 'named.mjs' },
      outdir,
      bundle: true,
      format: 'esm',
      platform: 'node',
      outExtension: { '.js': '.mjs' },
      alias: { http2: shim, 'node:http2': shim },
      logLevel: 'silent',
    });
    const script = `
      const { default: named } = await import(${JSON.stringify(`file://${join(outdir, 'stdin.mjs')}`)});
      const real = process.getBuiltinModule('node:http2');
      process.stdout.write(JSON.stringify({
        sensitiveHeaders: named.sensitiveHeaders === real.sensitiveHeaders,
        connect: named.connect === real.connect && named.http2.connect === real.connect,
        constants: JSON.stringify({ ...named.constants }) === JSON.stringify({ ...real.constants }) && named.http2.constants.HTTP2_HEADER_PATH === ':path',
      }));`;
    expect(JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' }))).toEqual({ sensitiveHeaders: true, connect: true, constants: true });
  });
});
