/**
 * What every `savepoint` command loads before it runs: the CLI's static imports (cli/savepoint.ts
 * sets zod's mode and loads cli/main.ts, which loads the module of the command named, or of every
 * command, to register it: cli/register-commands.ts; each is traced). The local engine, the Step Functions and DynamoDB SDKs and dynalite
 * are loaded by the commands that need them, when they run (a dynamic import()): `status`, `runs`
 * and `approvals` on a small state directory are held to 200 ms of CPU (issue 38, item 7;
 * bench/check.ts SPEED_LIMITS.cli), and loading the engine for them cost about 270 ms more.
 */
import { buildSync } from 'esbuild';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** Packages no command needs at start: each chain of static imports from the CLI's entry that reaches one. */
const HEAVY = ['aws-local-stepfunctions', '@aws-sdk/client-sfn', '@aws-sdk/client-dynamodb', '@aws-sdk/lib-dynamodb', 'dynalite', 'aws-cdk-lib'];

/** Each chain of static imports from one of `entries` that reaches a HEAVY package (one build of them all). */
function staticChains(...entries: string[]): Map<string, string[]> {
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
        const name = HEAVY.find((heavy) => imported.path === heavy || imported.path.startsWith(`${heavy}/`));
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
    const chains = [...staticChains('cli/savepoint.ts', 'cli/main.ts', ...commands)];
    expect(Object.fromEntries(chains.map(([name, chain]) => [name, chain.join(' → ')]))).toEqual({});
  });

  it('replays with no engine: `savepoint replay` loads no local engine, Step Functions SDK, dynalite or CDK (local/replay/loop.ts walks the loop)', () => {
    const engine = ['aws-local-stepfunctions', '@aws-sdk/client-sfn', 'dynalite', 'aws-cdk-lib'];
    const chains = [...staticChains('local/replay/index.ts')].filter(([name]) => engine.includes(name));
    expect(Object.fromEntries(chains.map(([name, chain]) => [name, chain.join(' → ')]))).toEqual({});
  });
});
