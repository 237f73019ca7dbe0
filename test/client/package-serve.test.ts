import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { cachedTemplate } from '../../local/template/cache.js';
import { sampleDay } from '../support/refund-harness.js';

/**
 * An application outside the repository, with savepoint installed from `npm pack` (its `exports`
 * are the public API), starts a run on `savepoint serve` with the public client and waits for it:
 * `connect({ stateDir })` finds the address and credential serve published. The package's CLI
 * runs serve; the template is handed over as `cdk synth` would write it, so the app needs no CDK.
 */
const exec = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'savepoint-serve-package-'));
const app = join(work, 'app');
const children = new Set<ChildProcess>();
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await rm(work, { recursive: true, force: true });
}, 60_000);

/** The version savepoint itself installs (npm's cache has it). */
const versionOf = (name: string) => (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies[name]!;

const APP = `
import { connect } from 'savepoint/client';
const [stateDir, date] = process.argv.slice(2);
const client = await connect({ stateDir });
const started = await client.start({ agent: 'refund-reconciler', input: { date }, runId: 'from-an-app', config: { approvalTimeoutSeconds: 1 } });
const run = await client.wait(started.runId);
const again = await client.start({ agent: 'refund-reconciler', input: { date }, runId: 'from-an-app' });
console.log(JSON.stringify({ started, again, lifecycle: run.lifecycle, status: run.report.status, listed: (await client.list()).runs.map((listed) => listed.runId) }));
`;

describe('an application from npm pack, on savepoint serve', () => {
  it('starts a run with the public client and waits for it to finish', async () => {
    const { stdout: packed } = await exec('npm', ['pack', '--silent', '--pack-destination', work], { cwd: ROOT, timeout: 180_000 });
    const tarball = join(work, packed.trim().split('\n').at(-1)!);
    mkdirSync(app);
    const dependencies = { savepoint: `file:${tarball}`, 'aws-local-stepfunctions': versionOf('aws-local-stepfunctions'), esbuild: versionOf('esbuild') };
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'serve-app', private: true, type: 'module', dependencies }, null, 2));
    await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, timeout: 300_000 });
    writeFileSync(join(app, 'app.mjs'), APP);
    writeFileSync(join(app, 'template.json'), JSON.stringify(await cachedTemplate('refund-reconciler')));
    copyFileSync(new URL('../../agents/refund-reconciler/sample-day.json', import.meta.url), join(app, 'day.json'));

    const serve = spawn(process.execPath, [join(app, 'node_modules/.bin/savepoint'), '--state-dir', '.savepoint', 'serve', '--agent', 'refund-reconciler', '--template', 'template.json', '--world-data', 'day.json'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(serve);
    let output = '';
    const exited = new Promise<number | null>((resolve) => serve.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      serve.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (/^savepoint: ready$/m.test(output)) resolve();
      });
      serve.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      void exited.then((code) => reject(new Error(`serve exited ${code}:\n${output}`)));
    });

    const { stdout } = await exec(process.execPath, ['app.mjs', '.savepoint', sampleDay.date], { cwd: app, timeout: 120_000 });
    const result = JSON.parse(stdout) as Record<string, any>;
    expect(result['started']).toMatchObject({ runId: 'from-an-app', agent: 'refund-reconciler', created: true, startedBy: expect.stringMatching(/^local:/) });
    expect(result['again']).toMatchObject({ runId: 'from-an-app', created: false, lifecycle: 'completed' });
    expect(result).toMatchObject({ lifecycle: 'completed', status: 'succeeded', listed: ['from-an-app'] });

    serve.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 600_000);
});
