/**
 * `npm run bench -- --cold-start`: what each Lambda function of an agent pays on a cold start.
 * Synthesizes the agent's stack with bundling on — the bundles `cdk deploy` uploads, built by the
 * construct itself — and reports per function the bundle's size, its source map's size (beside
 * it, not inlined), whether any simulator, scripted model or local-engine file is in it (from the
 * map's `sources`), and the CPU time a fresh Node process spends importing it (median of runs, with
 * the function's `NODE_OPTIONS`), and what each chunk it loads only on first use adds then.
 * Each import's CPU is also taken over the CPU the same process spent starting Node before it
 * (`startCpuMs`: V8's snapshot, Node's bootstrap, the `-e` script — a bare `node -e` in all but
 * name), measured in the same process a moment before: a machine loaded by other work slows both,
 * so `importCpuRatio` (the median of the processes' ratios) is what bench/check.ts holds to the
 * target, and a loaded machine does not fail it.
 * `--agent <module>` measures another agent (default: the refund reconciler); `--runs <n>`
 * (default 5); `--json` prints the report bench/check.ts checks against COLD_START_TARGETS.
 */
import { App } from 'aws-cdk-lib';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SavepointStack } from '../infra/stack.js';
import { COLD_START_TARGETS } from './check.js';
import { median } from './stats.js';

export interface FunctionCost {
  readonly step: string;
  /** What a cold start loads: the entry file and every chunk it imports statically. */
  readonly bundleBytes: number;
  /** Their source maps (beside them, not inlined). */
  readonly mapBytes: number;
  /** The files a cold start loads, relative to the bundle's directory. */
  readonly files: readonly string[];
  /** Source files in the bundle (any file of it) that no Lambda needs (sim/, local/, an agent's dev module or sim). */
  readonly devSources: readonly string[];
  /** Median CPU (user + system) of importing the bundle, in ms. */
  readonly importCpuMs: number;
  /** Median CPU the same processes spent starting Node before the import, in ms: the same-process floor. */
  readonly startCpuMs: number;
  /** The median over the processes of each one's import CPU over its start CPU. */
  readonly importCpuRatio: number;
  /**
   * The chunks loaded only when the step first needs them (a model provider's SDK, on the first
   * call to that provider): each with what it adds then, in bytes and (chunks of TIMED_CHUNK_BYTES
   * or more) import CPU after the entry.
   */
  readonly lazyChunks: readonly { readonly file: string; readonly holds: string; readonly bytes: number; readonly importCpuMs?: number }[];
}

/** A lazy chunk this big is timed too (a provider's SDK, the span exporter); the SDK's small credential-provider chunks are not. */
const TIMED_CHUNK_BYTES = 30_000;

/** What a chunk mostly holds: the package most of its sources come from, else its own name. */
function holds(dir: string, file: string): string {
  const { sources } = JSON.parse(readFileSync(join(dir, `${file}.map`), 'utf8')) as { sources: string[] };
  const counts = new Map<string, number>();
  for (const source of sources) {
    const name = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1];
    if (name) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].sort((x, y) => y[1] - x[1])[0]?.[0] ?? file.replace(/^chunks\/|-[A-Z0-9]+\.mjs$/g, '');
}

/** Files that a Lambda bundle must never hold. */
const DEV_ONLY = /(^|\/)(sim|local|testing|cli|console)\/|\.dev\.[cm]?[jt]s$|aws-local-stepfunctions|dynalite/;

/** The bundle of every function of the agent's stack, synthesized into a temporary directory. */
export function synthesizeBundles(agentModule: string): { outdir: string; bundles: { step: string; dir: string; env: Record<string, string> }[] } {
  const outdir = mkdtempSync(join(tmpdir(), 'savepoint-cold-start-'));
  // The bundles leave `@aws-sdk/*` to the Lambda runtime (the construct's default): here they
  // resolve to this project's copies, whose import is part of the cost measured.
  symlinkSync(fileURLToPath(new URL('../node_modules', import.meta.url)), join(outdir, 'node_modules'), 'dir');
  const app = new App({ outdir, context: { 'aws:cdk:enable-asset-metadata': true } });
  const stack = new SavepointStack(app, 'ColdStart');
  stack.addAgent('Agent', { agentName: 'cold-start', entry: agentModule });
  const template = app.synth().getStackArtifact(stack.artifactId).template as { Resources: Record<string, { Type: string; Properties?: any; Metadata?: any }> };
  const bundles = Object.values(template.Resources)
    .filter((resource) => resource.Type === 'AWS::Lambda::Function' && resource.Metadata?.['aws:asset:path'])
    .map((resource) => {
      const variables = (resource.Properties?.Environment?.Variables ?? {}) as Record<string, unknown>;
      return { step: String(variables['SAVEPOINT_STEP'] ?? 'approval-api'), dir: join(outdir, resource.Metadata['aws:asset:path']), env: plausibleEnv(variables) };
    })
    .filter((bundle, index, all) => all.findIndex((other) => other.step === bundle.step) === index);
  return { outdir, bundles };
}

/** The function's environment with every CloudFormation reference replaced by a well-formed value. */
function plausibleEnv(variables: Record<string, unknown>): Record<string, string> {
  const fake: Record<string, string> = {
    TABLE_NAME: 'ledger',
    APPROVAL_PAGE_URL: 'https://example.com/decide',
    APPROVERS: 'a@example.com',
    DECISION_KEY_ID: 'key',
    APPROVAL_EVENT_BUS: 'default',
  };
  return Object.fromEntries(
    Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : (fake[name] ?? (/ARN$/.test(name) ? 'arn:aws:x:us-east-1:123456789012:x' : 'x'))]),
  );
}

/** The files of a bundle that `file` imports statically, itself included, and those it imports only dynamically. */
export function staticImports(dir: string, file: string): { loaded: string[]; lazy: string[] } {
  const loaded = new Set<string>();
  const dynamic = new Set<string>();
  const visit = (at: string) => {
    if (loaded.has(at)) return;
    loaded.add(at);
    const code = readFileSync(join(dir, at), 'utf8');
    // esbuild writes a chunk's imports as `import … from"./x.mjs"`, `import"./x.mjs"` or `export … from"./x.mjs"`, and a lazy one as `import("./x.mjs")`.
    for (const match of code.matchAll(/\b(?:from\s*|import\s*(\()?\s*)"(\.\.?\/[^"]+\.mjs)"/g)) {
      const target = join(dirname(at), match[2]!);
      if (match[1]) dynamic.add(target);
      else visit(target);
    }
  };
  visit(file);
  return { loaded: [...loaded], lazy: [...dynamic].filter((chunk) => !loaded.has(chunk)) };
}

export function measure(bundle: { step: string; dir: string; env: Record<string, string> }, runs = 5): FunctionCost {
  const file = readdirSync(bundle.dir).find((name) => /^index\.m?js$/.test(name));
  if (!file) throw new Error(`${bundle.dir}: no index.mjs`);
  const everyFile = (readdirSync(bundle.dir, { recursive: true }) as string[]).filter((name) => /\.m?js$/.test(name));
  const sources = everyFile.flatMap((name) => (JSON.parse(readFileSync(join(bundle.dir, `${name}.map`), 'utf8')) as { sources: string[] }).sources);
  const { loaded, lazy } = staticImports(bundle.dir, file);
  const url = (name: string) => JSON.stringify(pathToFileURL(join(bundle.dir, name)).href);
  const env = { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', AWS_LAMBDA_FUNCTION_NAME: bundle.step, ...bundle.env };
  /**
   * CPU of importing `then` in fresh processes, after `first` (not counted) when given: the
   * median, and the median of the processes' start CPU (read first thing, before any import) and
   * of each process's import over its start.
   */
  const cpuFigures = (then: string, first?: string) => {
    // Lambda's Node.js runtime defines `awslambda` before it loads a handler (a streaming one, RunEvents, wraps itself with it at import).
    const script = `globalThis.awslambda ??= { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } }; const s = process.cpuUsage(); ${first ? `await import(${url(first)}); ` : ''}const t = process.cpuUsage(); await import(${url(then)}); const u = process.cpuUsage(t); console.log((s.user + s.system) / 1000, (u.user + u.system) / 1000);`;
    const samples = Array.from({ length: runs }, () => execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' }).trim().split(' ').map(Number) as [number, number]);
    return { importCpuMs: median(samples.map(([, cpu]) => cpu)), startCpuMs: median(samples.map(([start]) => start)), importCpuRatio: median(samples.map(([start, cpu]) => cpu / start)) };
  };
  const cpu = (then: string, first?: string) => cpuFigures(then, first).importCpuMs;
  const size = (name: string) => statSync(join(bundle.dir, name)).size;
  return {
    step: bundle.step,
    bundleBytes: loaded.reduce((sum, name) => sum + size(name), 0),
    mapBytes: loaded.reduce((sum, name) => sum + size(`${name}.map`), 0),
    files: loaded,
    devSources: [...new Set(sources.filter((source) => DEV_ONLY.test(source.replace(/\\/g, '/'))))],
    ...cpuFigures(file),
    lazyChunks: lazy.map((chunk) => {
      const bytes = staticImports(bundle.dir, chunk).loaded.filter((name) => !loaded.includes(name)).reduce((sum, name) => sum + size(name), 0);
      return { file: chunk, holds: holds(bundle.dir, chunk), bytes, ...(bytes >= TIMED_CHUNK_BYTES && { importCpuMs: cpu(chunk, file) }) };
    }),
  };
}

export interface ColdStartReport {
  readonly agent: string;
  readonly node: string;
  readonly runs: number;
  readonly targets: typeof COLD_START_TARGETS;
  readonly functions: readonly FunctionCost[];
}

async function main(): Promise<void> {
  const option = (name: string) => {
    const index = process.argv.indexOf(name);
    return index === -1 ? undefined : process.argv[index + 1];
  };
  const agent = resolve(option('--agent') ?? new URL('../agents/refund-reconciler/agent.ts', import.meta.url).pathname);
  const runs = Number(option('--runs') ?? 5);
  const json = process.argv.includes('--json');
  const { outdir, bundles } = synthesizeBundles(agent);
  try {
    if (!json) {
      console.log(`cold start per function of ${agent} (node ${process.version}, median of ${runs} imports, NODE_OPTIONS as deployed)`);
      console.log('step                 bundle      map   import CPU  × start  dev files  (then, on first use: lazy chunks)');
    }
    const functions: FunctionCost[] = [];
    for (const bundle of bundles) {
      const cost = measure(bundle, runs);
      functions.push(cost);
      if (json) continue;
      const kb = (bytes: number) => `${(bytes / 1000).toFixed(0)} kB`.padStart(8);
      const lazy = cost.lazyChunks.map((chunk) => `${chunk.holds} +${(chunk.bytes / 1000).toFixed(0)} kB${chunk.importCpuMs === undefined ? '' : ` ${chunk.importCpuMs.toFixed(0)} ms`}`).join(', ');
      console.log(`${cost.step.padEnd(18)} ${kb(cost.bundleBytes)} ${kb(cost.mapBytes)} ${`${cost.importCpuMs.toFixed(0)} ms`.padStart(11)}  ${cost.importCpuRatio.toFixed(2).padStart(7)}  ${cost.devSources.length === 0 ? 'none' : cost.devSources.join(', ')}${lazy ? `  (${lazy})` : ''}`);
    }
    if (json) console.log(JSON.stringify({ agent, node: process.version, runs, targets: COLD_START_TARGETS, functions } satisfies ColdStartReport, null, 2));
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href || process.argv.includes('--cold-start')) await main();
