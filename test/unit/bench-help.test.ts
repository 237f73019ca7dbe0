import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BENCH_HELP } from '../../bench/help.js';

const exec = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

/** The module of each mode of bench/main.ts. */
const MODULES: Record<string, string> = {
  '(no mode)': 'waste.ts',
  '--overhead': 'overhead.ts',
  '--cost': 'cost.ts',
  '--longruns': 'longruns.ts',
  '--ledger': 'ledger.ts',
  '--fleet <n>': 'fleet.ts',
  '--growth': 'growth.ts',
  '--replay': 'replay.ts',
  '--tracing': 'tracing.ts',
  '--events': 'events.ts',
  '--cold-start': 'cold-start.ts',
  '--deploy': 'deploy.ts',
  '--suite': 'suite.ts',
};

/** The options a mode's module reads: the keys of its parseArgs options, or the names it looks up in argv. */
function optionsRead(file: string): string[] {
  const source = readFileSync(join(ROOT, 'bench', file), 'utf8');
  const block = /parseArgs\(\{[\s\S]*?options: \{([\s\S]*?)\}\s*,?\s*(?:strict: \w+,?\s*)?\}\)/.exec(source)?.[1] ?? '';
  const keys = [...block.matchAll(/'?([a-z][a-z-]*)'?: \{ type/g)].map((match) => match[1]!);
  const looked = [...source.matchAll(/option\('--([a-z-]+)'\)/g)].map((match) => match[1]!);
  return [...keys, ...looked].filter((name) => name !== 'json' && !MODULES[`--${name}`] && name !== 'fleet');
}

describe('npm run bench -- --help', () => {
  it('prints the usage and exits 0, running no benchmark', async () => {
    const { stdout } = await exec('npm', ['run', '--silent', 'bench', '--', '--help'], { cwd: ROOT, timeout: 60_000 });
    expect(stdout).toMatch(/^Usage: npm run bench -- \[<mode>\] \[options\] \[--json\]$/m);
    for (const { mode } of BENCH_HELP) expect(stdout).toContain(`${mode}  `);
  });

  it("names every mode of bench/main.ts and every option each mode's module reads", () => {
    const main = readFileSync(join(ROOT, 'bench/main.ts'), 'utf8');
    const modes = /const MODES = \[([^\]]*)\]/.exec(main)![1]!.match(/'([a-z-]+)'/g)!.map((mode) => mode.slice(1, -1));
    expect(BENCH_HELP.map(({ mode }) => mode.split(' ')[0]).sort()).toEqual(['(no', ...modes.map((mode) => `--${mode}`), '--cold-start'].sort());
    for (const { mode, options } of BENCH_HELP) {
      const listed = options.map(([option]) => option.split(' ')[0]!.slice(2));
      expect(listed.sort(), mode).toEqual(optionsRead(MODULES[mode]!).sort());
    }
  });
});
