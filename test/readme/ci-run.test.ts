import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config.js';
import { SUITE_COMMAND } from '../../bench/suite.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const CI_RUN = readFileSync(join(ROOT, '.ci/run'), 'utf8');

/** Commands every machine that runs the suite has: Node's own, and coreutils. */
const ALWAYS_THERE = new Set(['node', 'npm', 'npx', 'cp', 'id']);

/** The system commands the tests start by name (`execFile('ss', …)`, `exec('npx', …)`), and the browser they drive by path. */
function commandsTheTestsRun(): Map<string, string> {
  const found = new Map<string, string>();
  // This file names commands in its own text: not one it runs.
  const files = (readdirSync(join(ROOT, 'test'), { recursive: true }) as string[]).filter((file) => file.endsWith('.ts') && file !== join('readme', 'ci-run.test.ts'));
  for (const file of files) {
    const source = readFileSync(join(ROOT, 'test', file), 'utf8');
    for (const match of source.matchAll(/\b(?:execFileSync|execFile|execSync|exec|spawnSync|spawn)\(\s*'([\w.-]+)'/g)) found.set(match[1]!, `test/${file}`);
    if (source.includes("'/usr/bin/chromium'")) found.set('chromium', `test/${file}`);
  }
  return found;
}

describe('.ci/run', () => {
  it('installs every command the tests run (a test whose command is missing skips itself, green)', () => {
    const installed = new Set(/^for pair in (.*); do$/m.exec(CI_RUN)?.[1]?.split(' ').map((pair) => pair.split(':')[0]!));
    const needed = [...commandsTheTestsRun()].filter(([command]) => !ALWAYS_THERE.has(command));
    // The scan finds what it should: the commands of the private-state, history-log and browser tests.
    expect(needed.map(([command]) => command)).toEqual(expect.arrayContaining(['ss', 'useradd', 'prlimit', 'chromium']));
    expect(needed.filter(([command]) => !installed.has(command)).map(([command, file]) => `${command} (${file})`)).toEqual([]);
  });

  it("runs the README's test command, through the suite benchmark that holds its CPU, whose vitest refuses a stray .only", () => {
    expect(CI_RUN.split('\n')).toContain('node --import tsx bench/main.ts --suite --json | node --import tsx bench/check.ts suite');
    expect(SUITE_COMMAND).toBe('npm test');
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.test).toMatch(/vitest run$/);
    expect(config.test?.allowOnly).toBe(false);
  });
});
