import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The README's "Write your own agent" is copied out into a package of its own, outside the
 * repository, that depends on savepoint through `npm pack` (the package's `exports` are the public
 * API), and run with `npx savepoint run --agent <its file>`: the docs cannot drift from the API,
 * and the API is usable without a fork.
 */
const exec = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'savepoint-own-agent-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function readmeAgent(): { file: string; code: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const match = /<!-- readme-agent: ([\w.-]+) -->\n```ts\n([\s\S]*?)\n```/.exec(readme);
  if (!match) throw new Error('README.md has no <!-- readme-agent: … --> block');
  return { file: match[1]!, code: match[2]! };
}

describe('the README agent, in a package outside the repository', () => {
  it('installs savepoint from npm pack and runs the agent to the end', async () => {
    const { stdout: packed } = await exec('npm', ['pack', '--silent', '--pack-destination', work], { cwd: ROOT });
    const tarball = join(work, packed.trim().split('\n').at(-1)!);
    const app = join(work, 'app');
    mkdirSync(app);
    const zod = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies['zod'];
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'my-agents', private: true, type: 'module', dependencies: { savepoint: `file:${tarball}`, zod } }));
    const { file, code } = readmeAgent();
    writeFileSync(join(app, file), code);
    // Everything savepoint depends on is in npm's cache already (the project's own install).
    await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, timeout: 240_000 });

    const { stdout } = await exec('npx', ['savepoint', 'run', '--agent', `./${file}`, '--input', '{"inbox":"team"}', '--memory', '--approve', 'approve', '--json'], {
      cwd: app,
      timeout: 120_000,
    });
    const report = JSON.parse(stdout) as Record<string, any>;
    expect(report).toMatchObject({
      agent: 'inbox-notes',
      input: { inbox: 'team' },
      status: 'succeeded',
      approvals: { approved: 1 },
      tools: { read_inbox: { ok: 1, guarantee: 'read' }, save_note: { ok: 1, guarantee: 'exactly-once' } },
    });
    // The agent's own budgets are its runs' defaults.
    expect(report.guards.steps.limit).toBe(20);
  }, 400_000);
});
