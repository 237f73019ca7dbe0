import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLD_START_TARGETS } from '../../bench/check.js';
import { staticImports } from '../../bench/cold-start.js';
import { startOpenAIServer } from '../../sim/wire/openai-server.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';

/**
 * savepoint as a user gets it: the files of the README's "Write your own agent" are copied out
 * into a package of its own, outside the repository, that installs savepoint from `npm pack` (the
 * package's `exports` are the public API) with the optional peers a team that runs, tests and
 * deploys adds. The docs cannot drift from the API, and the API is usable without a fork.
 */
const exec = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
const work = mkdtempSync(join(tmpdir(), 'savepoint-own-agent-'));
const app = join(work, 'app');
// A whole project's node_modules (the CDK's among them), on a loaded machine: minutes at worst.
afterAll(() => rm(work, { recursive: true, force: true }), 300_000);

/** The files the README shows under `<!-- readme-file: name -->`, by name. */
function readmeFiles(): Record<string, string> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const files = Object.fromEntries([...readme.matchAll(/<!-- readme-file: ([\w.-]+) -->\n```ts\n([\s\S]*?)\n```/g)].map((match) => [match[1]!, match[2]!]));
  for (const name of ['my-agent.ts', 'my-agent.dev.ts', 'my-agent.test.ts', 'my-agent.node-test.ts', 'app.ts']) if (!files[name]) throw new Error(`README.md has no <!-- readme-file: ${name} --> block`);
  return files;
}

/** The README's text, for the blocks it shows inline (a command, a file's contents) rather than as a file. */
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The one match of `pattern`'s first group in the README, or a failure naming what is missing. */
function readmeInline(pattern: RegExp, what: string): string {
  const found = pattern.exec(README)?.[1];
  if (found === undefined) throw new Error(`README.md has no ${what} (${pattern})`);
  return found;
}

/** A strict TypeScript consumer of every entry point: type-checked against the .d.ts files alone. */
const CONSUMER = `
import { defineAgent, defineTool, withDev, type AgentDefinition, type ToolContext } from 'savepoint';
import { createClient, type Lifecycle } from 'savepoint/client';
import { DurableAgent, SavepointStack, type DurableAgentProps } from 'savepoint/cdk';
import { createTestEnvironment, forEachCrashPoint, TestClock, type TestEnvironment, type TestRun } from 'savepoint/testing';
import { faultInjector, seededRandom } from 'savepoint/sim';
import agent from './my-agent.js';

const props: DurableAgentProps = { agentName: agent.name, entry: './my-agent.ts' };
const defined: AgentDefinition = agent;
const clock = new TestClock('2026-01-01T00:00:00Z');
const lifecycle: Lifecycle = 'working';
export const used = [defineAgent, defineTool, withDev, createClient, DurableAgent, SavepointStack, createTestEnvironment, forEachCrashPoint, faultInjector, seededRandom, props, defined, clock.now(), lifecycle];
export type Used = [ToolContext, TestEnvironment, TestRun];
// @ts-expect-error: a tool's effect is 'read' or 'write'
defineTool({ name: 'x', description: 'x', input: agent.tools[0]!.input, effect: 'maybe', execute: async () => 1 });
`;

const versions = (() => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
  return { ...pkg['devDependencies'], ...pkg['dependencies'] } as Record<string, string>;
})();
const pinned = (...names: string[]) => Object.fromEntries(names.map((name) => [name, versions[name]!]));

describe('savepoint from npm pack, in a package outside the repository', () => {
  beforeAll(async () => {
    const { stdout: packed } = await exec('npm', ['pack', '--silent', '--pack-destination', work], { cwd: ROOT, timeout: 120_000 });
    const tarball = join(work, packed.trim().split('\n').at(-1)!);
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({
        name: 'my-agents',
        private: true,
        type: 'module',
        dependencies: { savepoint: `file:${tarball}`, ...pinned('zod') },
        // What a team that runs locally, tests and deploys adds: the optional peers, its cdk, its test runner.
        devDependencies: pinned('aws-local-stepfunctions', 'aws-cdk-lib', 'constructs', 'aws-cdk', 'esbuild', 'vitest', 'typescript', 'tsx', '@types/node'),
      }),
    );
    for (const [name, code] of Object.entries(readmeFiles())) writeFileSync(join(app, name), code);
    writeFileSync(join(app, 'cdk.json'), JSON.stringify({ app: 'npx tsx app.ts' }));
    writeFileSync(join(app, 'consumer.ts'), CONSUMER);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['consumer.ts', 'traced-app.ts', 'settings-app.ts'] }),
    );
    // Everything is in npm's cache already (the project's own install).
    await exec('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, timeout: 300_000 });
  }, 400_000);

  it('ships compiled JavaScript, declarations and source maps, and no TypeScript source but the examples', () => {
    const shipped = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? shipped(join(dir, name)) : [join(dir, name)]));
    const files = shipped(join(app, 'node_modules/savepoint')).map((file) => file.slice(join(app, 'node_modules/savepoint/').length));
    expect(files).toContain('dist/lambdas/index.js');
    expect(files).toContain('dist/lambdas/index.d.ts');
    expect(files).toContain('dist/lambdas/index.js.map');
    expect(files).toContain('LICENSE');
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.startsWith('agents/'))).toEqual([]);
  });

  it.concurrent('imports every entry point from plain JavaScript, without a TypeScript loader', async () => {
    const script = `for (const entry of ['savepoint', 'savepoint/client', 'savepoint/cdk', 'savepoint/testing', 'savepoint/sim']) console.log(entry, Object.keys(await import(entry)).length);`;
    const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], { cwd: app, timeout: 60_000 });
    for (const entry of ['savepoint', 'savepoint/client', 'savepoint/cdk', 'savepoint/testing', 'savepoint/sim']) expect(stdout).toMatch(new RegExp(`^${entry} [1-9]`, 'm'));
  }, 120_000);

  it.concurrent('type-checks a strict TypeScript consumer against the .d.ts files (module NodeNext, libraries checked too)', async () => {
    const checked = await exec('npx', ['tsc', '-p', '.'], { cwd: app, timeout: 120_000 }).then(
      () => 'no errors',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(checked).toBe('no errors');
  }, 180_000);

  it.concurrent('runs the README agent with the CLI, its dev module found beside it', async () => {
    const { stdout } = await exec('npx', ['savepoint', 'run', '--agent', './my-agent.ts', '--input', '{"inbox":"team"}', '--memory', '--approve', 'approve', '--json'], {
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
  }, 120_000);

  it.concurrent("runs the README's test of the agent with savepoint/testing", async () => {
    // This machine runs the other checks beside it: a slower test than a user's own.
    const { stdout } = await exec('npx', ['vitest', 'run', 'my-agent.test.ts', '--reporter', 'verbose', '--testTimeout', '120000'], { cwd: app, timeout: 240_000 });
    expect(stdout).toMatch(/3 passed/);
  }, 240_000);

  it.concurrent("runs the README's node:test file of the agent with savepoint/testing", async () => {
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', '--test', 'my-agent.node-test.ts'], { cwd: app, timeout: 240_000 });
    expect(stdout).toMatch(/^# pass 3$/m);
    expect(stdout).toMatch(/^# fail 0$/m);
  }, 240_000);

  // The slowest (the CDK bundles every function): run beside the others.
  it.concurrent("synthesizes the README's CDK app with the package's own cdk, each function bundled without the dev module", async () => {
    await exec('npx', ['cdk', 'synth', '--quiet', '--output', 'cdk.out'], { cwd: app, timeout: 240_000 });
    const out = join(app, 'cdk.out');
    const template = JSON.parse(readFileSync(join(out, 'Agents.template.json'), 'utf8')) as { Resources: Record<string, { Type: string }>; Parameters: Record<string, unknown> };
    // The README's deploy command for this app names every parameter there is (the CDK's own aside).
    const command = /<!-- readme-deploy -->`([^`]*)`/.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))?.[1] ?? '';
    const named = [...command.matchAll(/--parameters\s+([A-Za-z0-9]+)=/g)].map((match) => match[1]);
    expect(named).toEqual(Object.keys(template.Parameters).filter((name) => name !== 'BootstrapVersion'));
    expect(named).toEqual(['ModelApiUrl']);
    expect(Object.values(template.Resources).filter((resource) => resource.Type === 'AWS::StepFunctions::StateMachine')).toHaveLength(1);
    const assets = readdirSync(out).filter((name) => name.startsWith('asset.') && readdirSync(join(out, name)).includes('index.mjs'));
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      const dir = join(out, asset);
      const sourcesOf = (file: string) => (JSON.parse(readFileSync(join(dir, `${file}.map`), 'utf8')) as { sources: string[] }).sources;
      expect(sourcesOf('index.mjs').some((source) => source.endsWith('my-agent.ts'))).toBe(true);
      // Every file of the bundle, the chunks loaded on first use (a provider's SDK) included, has its map beside it.
      const files = (readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.endsWith('.mjs'));
      expect(files.flatMap(sourcesOf).filter((source) => /my-agent\.dev|\/sim\/|\/local\/|\/testing\//.test(source))).toEqual([]);
      // Issue 21's target: what a cold start loads (the entry and the chunks it imports statically) is at most 1 MB.
      const { loaded } = staticImports(dir, 'index.mjs');
      expect(loaded.reduce((sum, file) => sum + statSync(join(dir, file)).size, 0)).toBeLessThanOrEqual(COLD_START_TARGETS.bundleBytes);
    }
  }, 240_000);

  it.concurrent("prices a run with the README's --prices file: a model the built-in table lacks is refused without it, and priced by it", async () => {
    // The file the options table of `savepoint run` shows, as it shows it.
    const prices = JSON.parse(readmeInline(/\| `--prices <file>` \|[^|]*\|[^`]*`(\{[^`]*\})`/, 'JSON of --prices <file>')) as Record<string, { inputPerMTok: number; outputPerMTok: number; cacheReadPerMTok: number }>;
    writeFileSync(join(app, 'prices.json'), JSON.stringify(prices));
    const [spec, price] = Object.entries(prices)[0]!;
    const [provider, model] = spec.split(/:(.*)/s) as [string, string];
    expect(provider).toBe('openai');
    // The provider is outside: its API served here (sim/wire's strict OpenAI server), reached by OPENAI_BASE_URL.
    const server = await startOpenAIServer({ apiKey: 'sk-test', models: [model], policy: () => ({ content: [{ type: 'text', text: 'Nothing to note.' }], stop_reason: 'end_turn' }) });
    try {
      const env = { ...process.env, OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${server.url}/v1` };
      const args = ['savepoint', 'run', '--agent', './my-agent.ts', '--input', '{"inbox":"team"}', '--memory', '--json', '--model', spec];
      const unpriced = await exec('npx', args, { cwd: app, env, timeout: 120_000 }).then(
        () => 'succeeded',
        (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
      );
      expect(unpriced).toMatch(new RegExp(`model ${spec} has no price in price table`));
      expect(server.requestCount()).toBe(0);
      const { stdout } = await exec('npx', [...args, '--prices', 'prices.json'], { cwd: app, env, timeout: 120_000 });
      const report = JSON.parse(stdout) as { status: string; model: string; dollars: number; tokens: { input: number; output: number; cachedInput: number } };
      expect(report).toMatchObject({ status: 'succeeded', model: spec });
      expect(server.requestCount()).toBe(1);
      const { input, output, cachedInput } = report.tokens;
      expect(input).toBeGreaterThan(0);
      expect(report.dollars).toBeCloseTo((input * price.inputPerMTok + output * price.outputPerMTok + cachedInput * price.cacheReadPerMTok) / 1_000_000, 6);
    } finally {
      await server.close();
    }
  }, 240_000);

  it.concurrent("removes a finished run with the README's savepoint prune --finished-before", async () => {
    // The command the Growth paragraph names, on the state directory a run left here (./.savepoint).
    const [command, ...options] = readmeInline(/`(savepoint prune --finished-before) <date>`/, 'savepoint prune command').split(' ');
    expect(command).toBe('savepoint');
    const { stdout } = await exec('npx', ['savepoint', 'run', '--agent', './my-agent.ts', '--input', '{"inbox":"team"}', '--approve', 'approve', '--json'], { cwd: app, timeout: 120_000 });
    const { runId, status } = JSON.parse(stdout) as { runId: string; status: string };
    expect(status).toBe('succeeded');
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const pruned = await exec('npx', [command!, ...options, tomorrow], { cwd: app, timeout: 120_000 });
    expect(pruned.stdout).toMatch(new RegExp(`^pruned 1 runs \\(\\d+ records, sha256:[0-9a-f]{64}\\) that finished before ${tomorrow}T00:00:00.000Z$`, 'm'));
    const gone = await exec('npx', ['savepoint', 'status', runId], { cwd: app, timeout: 60_000 }).then(
      () => 'still there',
      (error: { stderr?: string }) => error.stderr ?? '',
    );
    expect(gone).toMatch(`no run ${runId}`);
    const verified = await exec('npx', ['savepoint', 'verify', runId], { cwd: app, timeout: 60_000 });
    expect(verified.stdout).toMatch(new RegExp(`^${runId}: pruned, its records removed by pruned at `));
  }, 240_000);

  it.concurrent("runs the README's local tracing command: the installed package's traced template lets the run's end read its conversation for the budget-check spans", async () => {
    // The command of "Traces" (Locally), its collector this test's receiver, which reads OTLP/JSON.
    const line = readmeInline(/```bash\n(OTEL_EXPORTER_OTLP_ENDPOINT=\S+ .*npx savepoint run .*)\n```/, 'local tracing command');
    const words = line.split(/\s+/);
    const settings = words.filter((word) => /^[A-Z_]+=/.test(word)).map((word) => word.split(/=(.*)/s) as [string, string]);
    const [npx, ...args] = words.filter((word) => !/^[A-Z_]+=/.test(word));
    expect(npx).toBe('npx');
    const receiver = await startOtlpReceiver();
    try {
      const own = Object.fromEntries(settings.map(([name, value]) => [name, name === 'OTEL_EXPORTER_OTLP_ENDPOINT' ? receiver.url : value]));
      // Its own directory (and so its own state directory, ./.savepoint): the prune test's is beside it.
      const cwd = join(app, 'traced-run');
      mkdirSync(cwd);
      const env = { ...process.env, ...own, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
      const { stdout, stderr } = await exec('npx', args, { cwd, env, timeout: 180_000 });
      expect(`${stdout}${stderr}`).toMatch(/done {2}succeeded/);
      const names = receiver.spans.map((span) => span.name);
      expect(receiver.spans[0]?.resource['service.name']).toBe(own['OTEL_SERVICE_NAME']);
      expect(names.filter((name) => name.startsWith('chat ')).length).toBeGreaterThan(5);
      // One per model turn and the one that ended the run: the read the traceRunEnd grant allows.
      expect(names.filter((name) => name === 'savepoint.budget_check')).toHaveLength(names.filter((name) => name.startsWith('chat ')).length + 1);
    } finally {
      await receiver.close();
    }
  }, 240_000);

  // After the others (not beside the bundling synth above, which it would slow down on a busy machine).
  it("synthesizes the README's tracing app (Traces): the OTEL variables on every function, the collector layer on each", async () => {
    // Bundling off (the test above bundles): what is checked is the template the `tracing` prop makes.
    const out = join(app, 'traced.out');
    const env = { ...process.env, CDK_OUTDIR: out, CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [] }) };
    await exec('npx', ['tsx', 'traced-app.ts'], { cwd: app, env, timeout: 180_000 });
    type Fn = { Type: string; Properties: { Environment?: { Variables?: Record<string, unknown> }; Layers?: unknown[] } };
    const functions = (stack: string) =>
      Object.entries((JSON.parse(readFileSync(join(out, `${stack}.template.json`), 'utf8')) as { Resources: Record<string, Fn> }).Resources).filter(
        ([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Environment?.Variables?.['POWERTOOLS_SERVICE_NAME'] === 'inbox-notes',
      );
    expect(functions('TracedDirect').length).toBeGreaterThanOrEqual(10);
    for (const [id, fn] of functions('TracedDirect')) {
      expect(fn.Properties.Environment!.Variables, id).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com', OTEL_SERVICE_NAME: 'inbox-notes' });
      expect(fn.Properties.Layers, id).toBeUndefined();
    }
    expect(functions('TracedViaCollector').length).toBeGreaterThanOrEqual(10);
    for (const [id, fn] of functions('TracedViaCollector')) {
      expect(fn.Properties.Environment!.Variables, id).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318', OPENTELEMETRY_COLLECTOR_CONFIG_URI: '/var/task/collector.yaml', OTEL_METRICS_EXPORTER: 'none' });
      expect(fn.Properties.Layers, id).toEqual([expect.stringContaining('layer:aws-otel-collector')]);
    }
  }, 240_000);

  it("synthesizes the README's settings app: toolConcurrency as the Map's MaxConcurrency, keepVersions as the pruner's, prices as every function's PRICES", async () => {
    const code = readmeFiles()['settings-app.ts']!;
    const setting = (name: string) => {
      const value = Number(new RegExp(`^ +${name}: (\\d+),`, 'm').exec(code)?.[1]);
      expect(value, name).toBeGreaterThan(0);
      return value;
    };
    const out = join(app, 'settings.out');
    const env = { ...process.env, CDK_OUTDIR: out, CDK_CONTEXT_JSON: JSON.stringify({ 'aws:cdk:bundling-stacks': [] }) };
    await exec('npx', ['tsx', 'settings-app.ts'], { cwd: app, env, timeout: 180_000 });
    type Resource = { Type: string; Properties: { Environment?: { Variables?: Record<string, string> }; DefinitionString?: unknown } };
    const resources = Object.values((JSON.parse(readFileSync(join(out, 'Settings.template.json'), 'utf8')) as { Resources: Record<string, Resource> }).Resources);
    const [machine, ...others] = resources.filter((resource) => resource.Type === 'AWS::StepFunctions::StateMachine');
    expect(others).toEqual([]);
    const maps = [...JSON.stringify(machine!.Properties.DefinitionString).matchAll(/\\"MaxConcurrency\\":(\d+)/g)].map((match) => Number(match[1]));
    expect(maps).toEqual([setting('toolConcurrency')]);
    const variables = resources.filter((resource) => resource.Type === 'AWS::Lambda::Function').map((fn) => fn.Properties.Environment?.Variables ?? {});
    expect(variables.filter((vars) => 'KEEP_VERSIONS' in vars).map((vars) => vars['KEEP_VERSIONS'])).toEqual([String(setting('keepVersions'))]);
    // The stack's prices and the agent's over them, on every function of the agent.
    const agentFunctions = variables.filter((vars) => vars['POWERTOOLS_SERVICE_NAME'] === 'inbox-notes');
    expect(agentFunctions.length).toBeGreaterThanOrEqual(10);
    const priced = new Set(agentFunctions.map((vars) => vars['PRICES']));
    expect(priced.size).toBe(1);
    const specs = [...code.matchAll(/'(\w+:[\w.-]+)': \{/g)].map((match) => match[1]);
    expect(specs).toHaveLength(2);
    expect(Object.keys(JSON.parse([...priced][0]!) as object).sort()).toEqual(specs.sort());
  }, 240_000);
});
