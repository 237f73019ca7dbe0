import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from './import-graph.js';

/**
 * The harness knows no agent: nothing in the steps, ledger, guards, approvals, recovery, engines,
 * CLI or constructs imports an agent's module or names one of its tools. Agents reach the harness
 * through the public API only. (`infra/example.ts` is the example app: it names the shipped agents.)
 */
const ROOT = new URL('../..', import.meta.url).pathname;
const HARNESS = ['lambdas', 'local', 'infra', 'cli', 'sim'];
const EXAMPLE_APP = new Set(['infra/example.ts', 'infra/app.ts']);

const sources = (dir: string) => sourceFiles(ROOT, [dir]);

const harnessFiles = HARNESS.flatMap(sources).filter((file) => !EXAMPLE_APP.has(file));

/** Every tool name the shipped agents declare, read from their modules' source. */
function agentToolNames(): string[] {
  return readdirSync(join(ROOT, 'agents')).flatMap((agent) =>
    sources(join('agents', agent)).flatMap((file) => [...readFileSync(join(ROOT, file), 'utf8').matchAll(/defineTool\(\{\s*name: '([a-z_]+)'/g)].map((match) => match[1]!)),
  );
}

describe('the harness', () => {
  it('has sources to check (the scan is not vacuous)', () => {
    expect(harnessFiles.length).toBeGreaterThan(40);
    expect(agentToolNames()).toEqual(expect.arrayContaining(['issue_refund', 'get_order']));
  });

  it.each(harnessFiles)('%s imports no agent', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const imports = [...text.matchAll(/from '([^']+)'|import\('([^']+)'\)/g)].map((match) => match[1] ?? match[2]!);
    expect(imports.filter((path) => /(^|\/)agents\//.test(path)), `${relative(ROOT, file)} imports an agent`).toEqual([]);
  });

  it('names none of the shipped agents\' tools in code', () => {
    const tools = agentToolNames();
    const offenders = harnessFiles.flatMap((file) => {
      // Comments may use an example; code may not depend on one.
      const code = readFileSync(join(ROOT, file), 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      return tools.filter((tool) => code.includes(`'${tool}'`) || code.includes(`"${tool}"`)).map((tool) => `${file}: ${tool}`);
    });
    expect(offenders).toEqual([]);
  });
});
