/**
 * `npm run bench -- --cold-start`: what each Lambda function of an agent pays on a cold start.
 * Synthesizes the agent's stack with bundling on — the bundles `cdk deploy` uploads, built by the
 * construct itself — and reports per function the bundle's size, its source map's size (beside
 * it, not inlined), whether any simulator, scripted model or local-engine file is in it (from the
 * map's `sources`), and the CPU time a fresh Node process spends importing it (median of runs, with
 * the function's `NODE_OPTIONS`). `--agent <module>` measures another agent (default: the refund
 * reconciler); `--runs <n>` (default 5).
 */
import { App } from 'aws-cdk-lib';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { SavepointStack } from '../infra/stack.js';

export interface FunctionCost {
  readonly step: string;
  readonly bundleBytes: number;
  readonly mapBytes: number;
  /** Source files in the bundle that no Lambda needs (sim/, local/, an agent's dev module or sim). */
  readonly devSources: readonly string[];
  /** Median CPU (user + system) of importing the bundle, in ms. */
  readonly importCpuMs: number;
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

export function measure(bundle: { step: string; dir: string; env: Record<string, string> }, runs = 5): FunctionCost {
  const file = readdirSync(bundle.dir).find((name) => /^index\.m?js$/.test(name));
  if (!file) throw new Error(`${bundle.dir}: no index.mjs`);
  const map = JSON.parse(readFileSync(join(bundle.dir, `${file}.map`), 'utf8')) as { sources: string[] };
  const script = `const t = process.cpuUsage(); await import(${JSON.stringify(pathToFileURL(join(bundle.dir, file)).href)}); const u = process.cpuUsage(t); console.log((u.user + u.system) / 1000);`;
  const env = { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', AWS_LAMBDA_FUNCTION_NAME: bundle.step, ...bundle.env };
  const samples = Array.from({ length: runs }, () => Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' }).trim())).sort((a, b) => a - b);
  return {
    step: bundle.step,
    bundleBytes: statSync(join(bundle.dir, file)).size,
    mapBytes: statSync(join(bundle.dir, `${file}.map`)).size,
    devSources: map.sources.filter((source) => DEV_ONLY.test(source.replace(/\\/g, '/'))),
    importCpuMs: samples[Math.floor(samples.length / 2)]!,
  };
}

async function main(): Promise<void> {
  const option = (name: string) => {
    const index = process.argv.indexOf(name);
    return index === -1 ? undefined : process.argv[index + 1];
  };
  const agent = resolve(option('--agent') ?? new URL('../agents/refund-reconciler/agent.ts', import.meta.url).pathname);
  const runs = Number(option('--runs') ?? 5);
  const { outdir, bundles } = synthesizeBundles(agent);
  try {
    console.log(`cold start per function of ${agent} (node ${process.version}, median of ${runs} imports, NODE_OPTIONS as deployed)`);
    console.log('step                 bundle      map   import CPU  dev files');
    for (const bundle of bundles) {
      const cost = measure(bundle, runs);
      const kb = (bytes: number) => `${(bytes / 1000).toFixed(0)} kB`.padStart(8);
      console.log(`${cost.step.padEnd(18)} ${kb(cost.bundleBytes)} ${kb(cost.mapBytes)} ${`${cost.importCpuMs.toFixed(0)} ms`.padStart(11)}  ${cost.devSources.length === 0 ? 'none' : cost.devSources.join(', ')}`);
    }
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href || process.argv.includes('--cold-start')) await main();
