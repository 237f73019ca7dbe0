/**
 * What every `savepoint` command loads before it runs: the CLI's static imports (cli/savepoint.ts
 * sets zod's mode and loads cli/main.ts, which loads the module of the command named, or of every
 * command, to register it: cli/register-commands.ts; each is traced). The local engine, the Step Functions and DynamoDB SDKs and dynalite
 * are loaded by the commands that need them, when they run (a dynamic import()): `status`, `runs`
 * and `approvals` on a small state directory are held to 200 ms of CPU (issue 38, item 7;
 * bench/check.ts SPEED_LIMITS.cli), and loading the engine for them cost about 270 ms more.
 */
import { buildSync } from 'esbuild';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPTIONAL_PEERS } from '../../local/packages/optional-peers.js';

/** Packages no command needs at start: each chain of static imports from the CLI's entry that reaches one. */
const HEAVY = ['aws-local-stepfunctions', '@aws-sdk/client-sfn', '@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', 'dynalite', 'aws-cdk-lib'];

/** Each chain of static imports from one of `entries` that reaches one of `packages` (one build of them all). */
function staticChains(entries: string[], packages: readonly string[] = HEAVY): Map<string, string[]> {
  const { metafile } = buildSync({ entryPoints: entries, bundle: true, write: false, metafile: true, platform: 'node', format: 'esm', packages: 'external', outdir: 'unused', splitting: true, logLevel: 'silent' });
  const from = new Map<string, string | null>(entries.map((entry) => [entry, null]));
  const queue = [...entries];
  const reached = new Map<string, string[]>();
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const imported of metafile.inputs[file]?.imports ?? []) {
      if (imported.kind !== 'import-statement' || from.has(imported.path)) continue;
      from.set(imported.path, file);
      if (imported.external) {
        const name = packages.find((heavy) => imported.path === heavy || imported.path.startsWith(`${heavy}/`));
        if (name) {
          const chain: string[] = [];
          for (let at: string | null | undefined = imported.path; at; at = from.get(at)) chain.unshift(at);
          reached.set(name, chain);
        }
      } else queue.push(imported.path);
    }
  }
  return reached;
}

describe("the CLI's start", () => {
  it('loads no engine, Step Functions or DynamoDB SDK, dynalite or CDK before a command runs', () => {
    const commands = readdirSync('cli/commands').filter((file) => file.endsWith('.ts')).map((file) => `cli/commands/${file}`);
    const chains = [...staticChains(['cli/savepoint.ts', 'cli/main.ts', ...commands])];
    expect(Object.fromEntries(chains.map(([name, chain]) => [name, chain.join(' → ')]))).toEqual({});
  });

  it('replays with no engine: `savepoint replay` loads no local engine, Step Functions SDK, dynalite or CDK (local/replay/loop.ts walks the loop)', () => {
    const engine = ['aws-local-stepfunctions', '@aws-sdk/client-sfn', 'dynalite', 'aws-cdk-lib'];
    const chains = [...staticChains(['local/replay/index.ts'])].filter(([name]) => engine.includes(name));
    expect(Object.fromEntries(chains.map(([name, chain]) => [name, chain.join(' → ')]))).toEqual({});
  });
});

/**
 * An optional peer the project has not installed is named, with its install command, by what needs
 * it when that runs (local/packages/optional-peers.ts); a static import of it would instead fail the
 * entry point's import with Node's bare "Cannot find package … imported from dist/…".
 */
describe("the package's entry points", () => {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, { 'savepoint-source'?: string }> };
  const entries = Object.entries(manifest.exports).flatMap(([path, target]) => (typeof target === 'object' && target['savepoint-source'] ? [[`savepoint${path.slice(1)}`, target['savepoint-source'].slice(2)] as const] : []));
  const peersOnImport = (source: string) => [...staticChains([source], Object.keys(OPTIONAL_PEERS)).keys()].sort();

  it('load no optional peer on import but the CDK of savepoint/cdk (savepoint/testing loads the local engine when an environment opens)', () => {
    expect(entries.length).toBe(6);
    const loaded = entries.flatMap(([name, source]) => {
      const peers = peersOnImport(source);
      return peers.length > 0 ? [[name, peers] as const] : [];
    });
    expect(Object.fromEntries(loaded)).toEqual({ 'savepoint/cdk': ['aws-cdk-lib', 'constructs'] });
  });

  it("load only optional peers that docs/package.md's table says they need", () => {
    const table = readFileSync('docs/package.md', 'utf8');
    for (const [name, source] of entries) {
      const row = new RegExp(`^\\| \`${name.replace('/', '\\/')}\` \\|.*\\|(.*)\\|$`, 'm').exec(table);
      expect(row, name).not.toBeNull();
      for (const peer of peersOnImport(source)) expect(row![1], `${name} needs ${peer}`).toContain(`\`${peer}\``);
    }
  });
});
