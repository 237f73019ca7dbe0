import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { installApp, pinned } from '../support/pack.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLD_START_TARGETS } from '../../bench/check.js';
import { staticImports } from '../../bench/cold-start.js';
import { connect } from '../../client/index.js';
import { principalArnsOf } from '../../infra/approval-api-policy.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { roleStatements } from '../support/role-policies.js';
import { LEDGER_PATHS } from '../../local/state/ledger-files.js';
import { inProcessAppProps } from '../../local/template/synthesize.js';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { supportTriage } from '../../agents/support-triage/agent.dev.js';
import { startAnthropicServer } from '../../sim/wire/anthropic-server.js';
import { startBedrockServer } from '../../sim/wire/bedrock-server.js';
import { startOpenAIServer } from '../../sim/wire/openai-server.js';
import { postDecision } from '../support/agent-harness.js';
import { startOtlpReceiver } from '../support/otlp-receiver.js';
import { duplicatePayments, sampleInput, startHarness, type Harness } from '../support/refund-harness.js';
import { serveStack, stackSealer, type ServedStack } from '../support/served-stack.js';
import { brokenLinks } from './markdown.js';
import { DOC_FILES, installedBy, readmeFiles, readmeInline, shapeOf, shellWords, snippet } from './readme-text.js';

/**
 * savepoint as a user gets it: the files of the README's "Write your own agent" are copied out
 * into a package of its own, outside the repository, that installs savepoint from `npm pack` (the
 * package's `exports` are the public API) with the optional peers a team that runs, tests and
 * deploys adds. The docs cannot drift from the API, and the API is usable without a fork. The
 * README's other snippets a user runs (commands, the fork request, the shown output of a command)
 * run here too, from the same package, each taken from the README (readme-text.ts).
 */
const exec = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'savepoint-own-agent-'));
const app = join(work, 'app');
// A whole project's node_modules (the CDK's among them), on a loaded machine: minutes at worst.
afterAll(() => rm(work, { recursive: true, force: true }), 300_000);

/**
 * `npx savepoint …` as npx runs it, without npm's own start-up (npm exec's process: about a quarter
 * of a second of CPU a call, and this file makes dozens): the bin npx resolves in the app
 * (node_modules/.bin/savepoint), run by this Node. The CLI reads none of the variables npm sets.
 * That npx itself resolves the installed CLI is the README command's test ("runs the README's
 * command as written"), the serve test's (which spawns npx) and the `npx cdk synth` and `npx vitest`
 * tests', which run npx as the guides write them.
 */
function npxBin([command, ...args]: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeout: number }) {
  if (command === 'savepoint') return exec(process.execPath, [join(app, 'node_modules/.bin/savepoint'), ...args], options);
  throw new Error(`npx ${command}: run it with npx itself`);
}

/**
 * The command the README's Retention paragraph names, on the state directory of `cwd` after a run
 * finished there: the run is gone, and `verify` says it was pruned.
 */
async function pruneWithReadme(cwd: string, runId: string): Promise<void> {
  const [command, ...options] = readmeInline(/`(savepoint prune --finished-before) <date>`/, 'savepoint prune command').split(' ');
  expect(command).toBe('savepoint');
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  const pruned = await npxBin([command!, ...options, tomorrow], { cwd, timeout: 120_000 });
  expect(pruned.stdout).toMatch(new RegExp(`^pruned 1 run \\(\\d+ records, sha256:[0-9a-f]{64}\\) that finished before ${tomorrow}T00:00:00.000Z$`, 'm'));
  const gone = await npxBin(['savepoint', 'status', runId], { cwd, timeout: 60_000 }).then(
    () => 'still there',
    (error: { stderr?: string }) => error.stderr ?? '',
  );
  expect(gone).toMatch(`no run ${runId}`);
  const verified = await npxBin(['savepoint', 'verify', runId], { cwd, timeout: 60_000 });
  expect(verified.stdout).toMatch(new RegExp(`^${runId}: pruned, its records removed by pruned at `));
}

/**
 * The environment of a synthesis here: without the CDK's built-in CloudFormation validation
 * (`CDK_VALIDATION=false`, as aws-cdk-lib's README documents), whose engine is most of a
 * synthesis' CPU (4 of the 9.5 s of the guide's bundling `npx cdk synth`) and whose findings are
 * warnings (the CDK's default) that no test here reads: it could not fail these tests.
 * test/infra/nag.test.ts holds the example app's templates to the validation's rules as errors.
 */
const unvalidated = () => ({ ...process.env, CDK_VALIDATION: 'false' });

/**
 * The environment of an app of the README synthesized for its template alone, into `out`: no
 * validation (above), and the context of the runtime's own in-process synthesis (no bundling, no
 * stack traces in the assembly's metadata, which no test here reads: about 7% of these apps' CPU).
 */
const templateOnly = (out: string) => ({ ...unvalidated(), CDK_OUTDIR: out, CDK_CONTEXT_JSON: JSON.stringify(inProcessAppProps().context) });

/** The README's apps synthesized for their templates alone (templateOnly), each as `npx tsx <name>-app.ts` writes it into <name>.out. */
const TEMPLATE_APPS = ['models', 'traced', 'settings', 'approvals'] as const;
/** The README's app with the refund example the package ships as its agent (refund-app.ts): an app whose synth must fail. */
const FAILING_APP = 'refund';
/**
 * Imports each app in turn, its CDK_OUTDIR set first: an App reads it as it is made, and
 * synthesizes as the process ends. Then the app that must fail (its first word), without
 * CDK_OUTDIR (an App it made before it threw is not synthesized as the process ends), and prints
 * what its import threw: `<name>: <message>`, or `<name>: synthesized`.
 */
const SYNTH_APPS = `
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
const appUrl = (name) => pathToFileURL(join(process.cwd(), name + '-app.ts')).href;
const [failing, ...names] = process.argv.slice(1);
for (const name of names) {
  process.env.CDK_OUTDIR = join(process.cwd(), name + '.out');
  await import(appUrl(name));
}
delete process.env.CDK_OUTDIR;
await import(appUrl(failing)).then(
  () => console.log(failing + ': synthesized'),
  (error) => console.log(failing + ': ' + error.message),
);
`;
/**
 * Imports each file it is given in turn, each to its end (its top-level awaits), and prints `<file> ran`
 * after it: programs of the README run in one process, tsx and Node loaded once (about 0.4 s of CPU a
 * process), not once a program.
 */
const IN_TURN = `
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
for (const file of process.argv.slice(1)) {
  await import(pathToFileURL(join(process.cwd(), file)).href);
  console.log(file + ' ran');
}
`;
let templateApps: Promise<{ stdout: string }> | undefined;
/**
 * What the process that synthesizes the README's apps printed: TEMPLATE_APPS and FAILING_APP, all
 * under one tsx (the first test that reads one starts it; the others wait for it), not one
 * process each, which loaded tsx and the CDK five times (about 1.2 s of CPU a process).
 */
function synthesizedApps(): Promise<{ stdout: string }> {
  templateApps ??= exec(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', SYNTH_APPS, FAILING_APP, ...TEMPLATE_APPS], { cwd: app, env: templateOnly(''), timeout: 240_000 });
  return templateApps;
}

/** The out directory of one of TEMPLATE_APPS (synthesizedApps). */
async function synthesizedApp(name: (typeof TEMPLATE_APPS)[number]): Promise<string> {
  await synthesizedApps();
  return join(app, `${name}.out`);
}

/** refund-app.ts: the README's app, its agent the refund example the package ships (its deps read PAYMENTS_API_URL), the stack setting none. */
const refundApp = (readmeApp: string) =>
  readmeApp
    .replace("import agent from './my-agent.js';", "import agent from './node_modules/savepoint/agents/refund-reconciler/agent.js';")
    .replace("entry: 'my-agent.ts'", "entry: 'node_modules/savepoint/agents/refund-reconciler/agent.ts'");

/** The `sources` of a source map, which carries no `sourcesContent`: the deployed maps hold positions and names only (infra/step-bundle.ts). */
function mapSources(path: string): string[] {
  const map = JSON.parse(readFileSync(path, 'utf8')) as { sources: string[]; sourcesContent?: unknown };
  expect(map.sourcesContent, path).toBeUndefined();
  return map.sources;
}

/** A strict TypeScript consumer of every entry point: type-checked against the .d.ts files alone. */
const CONSUMER = `
import { defineAgent, defineTool, withDev, type AgentDefinition, type ToolContext } from 'savepoint';
import { connect, RunsApiError, type ConnectOptions, type Lifecycle, type RunsClient, type StartFork, type StartOptions } from 'savepoint/client';
import { DurableAgent, SavepointStack, type DurableAgentProps } from 'savepoint/cdk';
import { createTestEnvironment, forEachCrashPoint, TestClock, type TestEnvironment, type TestRun } from 'savepoint/testing';
import { faultInjector, seededRandom, startAnthropicServer, startBedrockServer, startOpenAIServer, FAULT_KINDS, type Policy, type WireServer, type AnthropicServerOptions } from 'savepoint/sim';
import agent from './my-agent.js';

const props: DurableAgentProps = { agentName: agent.name, entry: './my-agent.ts' };
const defined: AgentDefinition = agent;
const clock = new TestClock('2026-01-01T00:00:00Z');
const lifecycle: Lifecycle = 'working';
const policy: Policy = () => ({ content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn' });
const anthropicOptions: AnthropicServerOptions = { apiKey: 'k', models: ['m'], policy };
const runs: (options: ConnectOptions) => Promise<RunsClient> = connect;
const fork: StartFork = { from: 'day1', at: 5, effects: 'dry' };
const forkStart: StartOptions = { input: { date: '2026-11-28' }, runId: 'day1-fork-5', fork };
// @ts-expect-error: a fork's effects are 'reuse' or 'dry'
const badFork: StartFork = { from: 'day1', at: 5, effects: 'maybe' };
export const used = [defineAgent, defineTool, withDev, RunsApiError, runs, DurableAgent, SavepointStack, createTestEnvironment, forEachCrashPoint, faultInjector, seededRandom, props, defined, clock.now(), lifecycle, startAnthropicServer, startBedrockServer, startOpenAIServer, FAULT_KINDS, anthropicOptions, forkStart, badFork];
export type Used = [ToolContext, TestEnvironment, TestRun, WireServer];
// @ts-expect-error: a tool's effect is 'read' or 'write'
defineTool({ name: 'x', description: 'x', input: agent.tools[0]!.input, effect: 'maybe', execute: async () => 1 });
`;

/**
 * A user's own start of an execution with a run request from a file: what
 * `aws stepfunctions start-execution --state-machine-arn <arn> --input file://<file>` does, with the SDK.
 */
const START_EXECUTION = `
import { readFileSync } from 'node:fs';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
const [stateMachineArn, file] = process.argv.slice(2);
const { executionArn } = await new SFNClient({}).send(new StartExecutionCommand({ stateMachineArn, input: readFileSync(file, 'utf8') }));
console.log(executionArn);
`;

// In the README's order, as a user follows it: a later step reads what an earlier one made (a run, its
// trace, its fork), once, rather than each test making it again on the installed package.
describe('savepoint from npm pack, in a package outside the repository', { shuffle: false }, () => {
  beforeAll(async () => {
    const install = installedBy(snippet('install'));
    expect(install.dependencies).toEqual(['savepoint', 'zod']);
    // npm pack builds dist/ first (prepack; or an earlier run's tarball of the same inputs,
    // test/support/pack.ts), and npm installs from its cache (the project's own install, which
    // has every package): minutes on a loaded machine.
    await installApp(
      app,
      {
        name: 'my-agents',
        // What the README's install block installs: savepoint (from npm pack) and zod; the optional
        // peers, the cdk and the test runner a team that runs locally, tests and deploys adds.
        dependencies: pinned(...install.dependencies.filter((name) => name !== 'savepoint')),
        // And this test's own: the compiler of the strict consumer below; dynalite (the optional peer
        // of `--ledger dynalite`) and the Step Functions client, for the DynamoDB ledger's snippets.
        devDependencies: pinned(...install.devDependencies, 'typescript', '@types/node', 'dynalite', '@aws-sdk/client-sfn'),
      },
      300_000,
    );
    for (const [name, code] of Object.entries(readmeFiles())) writeFileSync(join(app, name), code);
    // The app the failing synth imports (FAILING_APP), written before any test starts the synthesis.
    writeFileSync(join(app, `${FAILING_APP}-app.ts`), refundApp(readmeFiles()['app.ts']!));
    // The README's cdk.json, as it shows it: it runs the README's app.
    const cdkJson = readmeInline(/with a `cdk\.json` of `(\{[^`]*\})`/, 'cdk.json');
    expect((JSON.parse(cdkJson) as { app: string }).app.split(' ').at(-1)).toBe('app.ts');
    writeFileSync(join(app, 'cdk.json'), cdkJson);
    writeFileSync(join(app, 'consumer.ts'), CONSUMER);
    // One checker (TypeScript 7's `checkers`; 4 by default, each checking a share of the files with
    // types of its own, so the types of aws-cdk-lib's ~2,600 declaration files, which every share
    // reaches, were built up to four times): the same check, errors and all, in about 7 s of CPU
    // instead of 10, on a machine whose cores the other tests keep busy anyway.
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, skipLibCheck: false, types: ['node'], checkers: 1 }, files: ['consumer.ts', 'digest.ts', 'traced-app.ts', 'settings-app.ts', 'models-app.ts', 'approvals-app.ts', 'refund-tool.ts', 'events-app.ts'] }),
    );
  }, 700_000);

  it('ships compiled JavaScript, declarations and source maps, and no TypeScript source but the examples', () => {
    const shipped = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? shipped(join(dir, name)) : [join(dir, name)]));
    const files = shipped(join(app, 'node_modules/savepoint')).map((file) => file.slice(join(app, 'node_modules/savepoint/').length));
    expect(files).toContain('dist/lambdas/index.js');
    expect(files).toContain('dist/lambdas/index.d.ts');
    expect(files).toContain('dist/lambdas/index.js.map');
    expect(files).toContain('LICENSE');
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.startsWith('agents/'))).toEqual([]);
  });

  it('ships the README and every guide of docs/, their links whole in the installed package (the alarms name their runbook there)', () => {
    const installed = join(app, 'node_modules/savepoint');
    const shippedDocs = new Map([...DOC_FILES.keys()].map((path) => [path, existsSync(join(installed, path)) ? readFileSync(join(installed, path), 'utf8') : '']));
    expect([...shippedDocs].filter(([, text]) => text === '').map(([path]) => path)).toEqual([]);
    expect(shippedDocs.get('docs/operating-on-aws.md')).toContain('#### ExecutionsFailed');
    expect(brokenLinks(installed, shippedDocs)).toEqual([]);
  });

  it("is installed as npm installs a package afresh: npm's record of the app's node_modules holds the integrity of every package but those bundled in another", () => {
    // The app's npm starts from the files of another install (test/support/pack.ts): it must have
    // taken that install's record as its own, not read the packages back from disk, which records
    // no integrity (and, through a hard link, rewrote the other install's record).
    const { packages } = JSON.parse(readFileSync(join(app, 'node_modules/.package-lock.json'), 'utf8')) as { packages: Record<string, { integrity?: string; inBundle?: boolean }> };
    expect(Object.keys(packages).length).toBeGreaterThan(100);
    expect(Object.entries(packages).filter(([, entry]) => entry.integrity === undefined && !entry.inBundle).map(([location]) => location)).toEqual([]);
  });

  it.concurrent('imports every entry point from plain JavaScript, without a TypeScript loader', async () => {
    const script = `for (const entry of ['savepoint', 'savepoint/client', 'savepoint/cdk', 'savepoint/testing', 'savepoint/sim', 'savepoint/mcp']) console.log(entry, Object.keys(await import(entry)).length);`;
    const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], { cwd: app, timeout: 60_000 });
    for (const entry of ['savepoint', 'savepoint/client', 'savepoint/cdk', 'savepoint/testing', 'savepoint/sim', 'savepoint/mcp']) expect(stdout).toMatch(new RegExp(`^${entry} [1-9]`, 'm'));
  }, 120_000);

  it.concurrent("runs the @example of each wire server savepoint/sim exports, as shipped in its .d.ts: the official SDK gets the policy's answer", async () => {
    // Each server's TSDoc is on its start function in sim/wire/servers.ts, which savepoint/sim exports.
    const declarations = readFileSync(join(app, 'node_modules/savepoint/dist/sim/wire/servers.d.ts'), 'utf8');
    const examples = (['anthropic', 'openai', 'bedrock'] as const).map((provider) => {
      const name = { anthropic: 'startAnthropicServer', openai: 'startOpenAIServer', bedrock: 'startBedrockServer' }[provider];
      const before = declarations.slice(0, declarations.indexOf(`export declare function ${name}(`));
      const code = /@example\n\s*\* ```ts\n([\s\S]*?)\n\s*\* ```/.exec(before.slice(before.lastIndexOf('@example')))?.[1];
      expect(code, `${provider}: @example`).toBeDefined();
      return [provider, code!.split('\n').map((line) => line.replace(/^\s*\* ?/, '')).join('\n')] as const;
    });
    for (const [provider, code] of examples) writeFileSync(join(app, `wire-${provider}.ts`), code);
    const files = examples.map(([provider]) => `wire-${provider}.ts`);
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', IN_TURN, ...files], { cwd: app, timeout: 120_000 });
    const printed = stdout.split(/^(\S+) ran$/m);
    expect(printed.filter((_, index) => index % 2 === 1)).toEqual(files);
    for (const [index, [provider]] of examples.entries()) {
      // What each example's comment says it prints.
      expect(printed[index * 2]!.trim(), provider).toBe(provider === 'openai' ? 'Hello.' : provider === 'anthropic' ? "[ { type: 'text', text: 'Hello.' } ]" : "[ { text: 'Hello.' } ]");
    }
  }, 180_000);

  it.concurrent('type-checks a strict TypeScript consumer against the .d.ts files (module NodeNext, libraries checked too)', async () => {
    // The compiler the app installed (no guide names a command for it: its bin, not npx).
    const checked = await exec(process.execPath, [join(app, 'node_modules/.bin/tsc'), '-p', '.'], { cwd: app, timeout: 300_000 }).then(
      () => 'no errors',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(checked).toBe('no errors');
  }, 360_000);

  it.concurrent('runs the README agent with the CLI, its dev module found beside it', async () => {
    const { stdout } = await npxBin(['savepoint', 'run', '--agent', './my-agent.ts', '--input', '{"inbox":"team"}', '--memory', '--approve', 'approve', '--json'], {
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
    // The calls are the ones the dev module's policy makes (the CLI found it beside the agent): read_inbox, then an urgent save_note.
    expect([...readmeFiles()['my-agent.dev.ts']!.matchAll(/name: '(\w+)'/g)].map((match) => match[1])).toEqual(Object.keys(report.tools));
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
  it.concurrent("synthesizes the README's CDK app with the package's own cdk, as Operating on AWS says (`npx cdk synth`), each function bundled without the dev module", async () => {
    // The first line of the guide's block, as written: the template in cdk.out/ (and on stdout).
    const [npx, ...synth] = shellWords(snippet('synth-and-deploy').split('\n')[0]!);
    expect([npx, ...synth]).toEqual(['npx', 'cdk', 'synth']);
    // Bundling, which this test reads; not the validation (unvalidated, above).
    // A test sends no usage data to AWS: the CDK CLI's telemetry, on by default since 2.1100.0, is off (its documented opt-out).
    await exec(npx!, synth, { cwd: app, env: { ...unvalidated(), CDK_DISABLE_CLI_TELEMETRY: 'true' }, timeout: 420_000, maxBuffer: 64 * 1024 * 1024 });
    const out = join(app, 'cdk.out');
    const template = JSON.parse(readFileSync(join(out, 'Agents.template.json'), 'utf8')) as { Resources: Record<string, { Type: string }>; Parameters: Record<string, unknown> };
    // The README's deploy command for this app names every parameter there is (the CDK's own aside).
    const command = readmeInline(/<!-- readme-deploy -->`([^`]*)`/, 'deploy command of the app');
    const named = [...command.matchAll(/--parameters\s+([A-Za-z0-9]+)=/g)].map((match) => match[1]);
    expect(named).toEqual(Object.keys(template.Parameters).filter((name) => name !== 'BootstrapVersion'));
    expect(named).toEqual(['ModelApiUrl']);
    // Its two agents' state machines, and the stack's batch state machine (the Notes agent's `batches`).
    expect(Object.values(template.Resources).filter((resource) => resource.Type === 'AWS::StepFunctions::StateMachine')).toHaveLength(3);
    const assets = readdirSync(out).filter((name) => name.startsWith('asset.') && readdirSync(join(out, name)).includes('index.mjs'));
    expect(assets.length).toBeGreaterThan(0);
    // Which file of each function holds the agent's module, and in how many functions it is that file.
    const agentHolders = new Map<string, number>();
    for (const asset of assets) {
      const dir = join(out, asset);
      const sourcesOf = (file: string) => mapSources(join(dir, `${file}.map`));
      // The function's files: its entry, the chunks it imports, and the chunks it loads on first use
      // (a provider's SDK), each there — from the one build its stack's like functions share (infra/step-bundle.ts).
      const { loaded, lazy } = staticImports(dir, 'index.mjs');
      expect(lazy.filter((chunk) => !existsSync(join(dir, chunk)))).toEqual([]);
      // An agent's function bundles its module, and so do the stack's API functions and its
      // ExecutionStopped (every agent's); a function the stack shares otherwise (infra/control-plane.ts) bundles none.
      const sources = loaded.flatMap(sourcesOf);
      const agentFree = sources.some((source) => source.endsWith('control-plane-handlers.ts')) && !sources.some((source) => source.endsWith('handlers/execution-stopped.ts'));
      expect(sources.some((source) => source.endsWith('my-agent.ts') || source.endsWith('digest.ts'))).toBe(!agentFree);
      const holder = loaded.find((file) => sourcesOf(file).some((source) => source.endsWith('my-agent.ts')));
      if (holder) agentHolders.set(holder, (agentHolders.get(holder) ?? 0) + 1);
      // Every file of the bundle, the chunks loaded on first use (a provider's SDK) included, has its map beside it.
      const files = (readdirSync(dir, { recursive: true }) as string[]).filter((name) => name.endsWith('.mjs'));
      expect(files.flatMap(sourcesOf).filter((source) => /my-agent\.dev|\/sim\/|\/local\/|\/testing\//.test(source))).toEqual([]);
      // `node:http` comes from process.getBuiltinModule (lambdas/adapters/http-module.ts): Node's ESM facade of it loads undici at each cold start;
      // `node:http2` likewise, on first use (lambdas/adapters/http2-module.ts): no step uses it, and loading it costs 6-12 ms.
      expect(files.filter((file) => /(?:from|import)\s*"(?:node:)?http2?"/.test(readFileSync(join(dir, file), 'utf8')))).toEqual([]);
      // Issue 21's target: what a cold start loads (the entry and the chunks it imports statically) is at most 1 MB.
      expect(loaded.reduce((sum, file) => sum + statSync(join(dir, file)).size, 0)).toBeLessThanOrEqual(COLD_START_TARGETS.bundleBytes);
    }
    // An agent's functions are bundled in one build, not one each (which parsed the SDK and the agent
    // again per function): its module is one chunk, the same file (named by its content's hash) in each.
    expect([...agentHolders].filter(([file, functions]) => file.startsWith('chunks/') && functions >= 8)).toHaveLength(1);
  }, 480_000);

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
      const unpriced = await npxBin(args, { cwd: app, env, timeout: 120_000 }).then(
        () => 'succeeded',
        (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
      );
      expect(unpriced).toMatch(new RegExp(`model ${spec} has no price in price table`));
      expect(server.requestCount()).toBe(0);
      const { stdout } = await npxBin([...args, '--prices', 'prices.json'], { cwd: app, env, timeout: 120_000 });
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

  it.concurrent("runs the README's command as written, then removes the run with the README's savepoint prune --finished-before (the embedded ledger)", async () => {
    // "Run it from your own package", as written: the run keeps its state in ./.savepoint, here.
    const [npx, ...run] = shellWords(snippet('run-own-agent'));
    expect(npx).toBe('npx');
    const ran = await exec('npx', run, { cwd: app, timeout: 120_000 });
    const output = `${ran.stdout}${ran.stderr}`;
    const runId = /^run (\S+) \(inbox-notes \{"inbox":"team"\}\): succeeded — done$/m.exec(output)?.[1];
    expect(runId, output).toBeDefined();
    expect(existsSync(join(app, '.savepoint', LEDGER_PATHS.embedded))).toBe(true);
    await pruneWithReadme(app, runId!);
  }, 240_000);

  it.concurrent("runs the README's local tracing command: the installed package's traced template lets the run's end read its conversation for the budget-check spans", async () => {
    // The command of "Traces" (Locally), its collector this test's receiver, which reads OTLP/JSON.
    const line = snippet('traces-local');
    expect(line).toMatch(/^OTEL_EXPORTER_OTLP_ENDPOINT=\S+ .*npx savepoint run [^\n]*$/);
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
      const { stdout, stderr } = await npxBin(args, { cwd, env, timeout: 180_000 });
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
    const out = await synthesizedApp('traced');
    type Fn = { Type: string; Properties: { Environment?: { Variables?: Record<string, unknown> }; Layers?: unknown[] } };
    const functions = (stack: string) =>
      Object.entries((JSON.parse(readFileSync(join(out, `${stack}.template.json`), 'utf8')) as { Resources: Record<string, Fn> }).Resources).filter(
        ([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Environment?.Variables?.['POWERTOOLS_SERVICE_NAME'] === 'inbox-notes',
      );
    // The agent's eight step functions (recovery, ExecutionStopped and the API are the stack's).
    expect(functions('TracedDirect').length).toBeGreaterThanOrEqual(8);
    for (const [id, fn] of functions('TracedDirect')) {
      expect(fn.Properties.Environment!.Variables, id).toMatchObject({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com', OTEL_SERVICE_NAME: 'inbox-notes' });
      expect(fn.Properties.Layers, id).toBeUndefined();
    }
    expect(functions('TracedViaCollector').length).toBeGreaterThanOrEqual(8);
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
    const out = await synthesizedApp('settings');
    type Resource = { Type: string; Properties: { Environment?: { Variables?: Record<string, string> }; DefinitionString?: unknown } };
    const resources = Object.values((JSON.parse(readFileSync(join(out, 'Settings.template.json'), 'utf8')) as { Resources: Record<string, Resource> }).Resources);
    const [machine, ...others] = resources.filter((resource) => resource.Type === 'AWS::StepFunctions::StateMachine');
    expect(others).toEqual([]);
    const maps = [...JSON.stringify(machine!.Properties.DefinitionString).matchAll(/\\"MaxConcurrency\\":(\d+)/g)].map((match) => Number(match[1]));
    expect(maps).toEqual([setting('toolConcurrency')]);
    const variables = resources.filter((resource) => resource.Type === 'AWS::Lambda::Function').map((fn) => fn.Properties.Environment?.Variables ?? {});
    // The stack's version pruner keeps each agent's count (infra/control-plane.ts).
    expect(variables.filter((vars) => 'PRUNE_VERSIONS' in vars).map((vars) => JSON.parse(vars['PRUNE_VERSIONS']!) as unknown)).toEqual([{ 'inbox-notes': setting('keepVersions') }]);
    // The stack's prices and the agent's over them, on every function of the agent.
    const agentFunctions = variables.filter((vars) => vars['POWERTOOLS_SERVICE_NAME'] === 'inbox-notes');
    expect(agentFunctions.length).toBeGreaterThanOrEqual(8);
    const priced = new Set(agentFunctions.map((vars) => vars['PRICES']));
    expect(priced.size).toBe(1);
    const specs = [...code.matchAll(/'(\w+:[\w.-]+)': \{/g)].map((match) => match[1]);
    expect(specs).toHaveLength(2);
    expect(Object.keys(JSON.parse([...priced][0]!) as object).sort()).toEqual(specs.sort());
  }, 240_000);

  it("synthesizes the guide's approvals app (Approvals): the approval API admits to /approvals only the approverPrincipals, and to POST /runs only the starterPrincipals", async () => {
    const code = readmeFiles()['approvals-app.ts']!;
    const arnsIn = (setting: string) => [...new RegExp(`${setting}: \\{([\\s\\S]*?)\\n\\s*\\}`).exec(code)![1]!.matchAll(/'(arn:aws:[^']+)'/g)].map((match) => match[1]!);
    expect(arnsIn('approverPrincipals')).toHaveLength(3);
    expect(arnsIn('starterPrincipals')).toHaveLength(1);
    const out = await synthesizedApp('approvals');
    type Statement = { Effect: string; Principal?: { AWS?: unknown }; Condition?: unknown; Resource: unknown };
    const resources = Object.values((JSON.parse(readFileSync(join(out, 'Approvals.template.json'), 'utf8')) as { Resources: Record<string, { Type: string; Properties: { Policy?: { Statement: Statement[] } } }> }).Resources);
    const apis = resources.filter((resource) => resource.Type === 'AWS::ApiGateway::RestApi' && resource.Properties.Policy);
    expect(apis).toHaveLength(1);
    const statements = apis[0]!.Properties.Policy!.Statement;
    // Each setting's people are named by the statements about its paths (an Identity Center session by
    // its role's ARNs, the condition key being aws:PrincipalArn), and nobody else's are.
    const about = (path: string) => JSON.stringify(statements.filter((statement) => JSON.stringify(statement.Resource).includes(path)));
    for (const arn of arnsIn('approverPrincipals').flatMap(principalArnsOf)) expect(about('/approvals')).toContain(arn);
    for (const arn of arnsIn('starterPrincipals').flatMap(principalArnsOf)) expect(about('/POST/runs')).toContain(arn);
    for (const arn of arnsIn('starterPrincipals')) expect(about('/approvals')).not.toContain(arn);
    expect(principalArnsOf(arnsIn('approverPrincipals')[0]!)).toHaveLength(2); // the session's: its role's two forms
  }, 240_000);

  it("fails synth, as Operating on AWS says, for the refund example from the package given as the README's app gives its agent, with no PAYMENTS_API_URL: naming the variable and the prop", async () => {
    // The README's app, its agent the example the package ships (its deps read PAYMENTS_API_URL), the stack setting none:
    // refund-app.ts (refundApp), imported after the apps above by the process that synthesizes them.
    const readmeApp = readmeFiles()['app.ts']!;
    expect(readmeApp).toContain('agent, entry:');
    expect(readFileSync(join(app, `${FAILING_APP}-app.ts`), 'utf8')).toContain("entry: 'node_modules/savepoint/agents/refund-reconciler/agent.ts'");
    const failed = (await synthesizedApps()).stdout.split('\n').find((line) => line.startsWith(`${FAILING_APP}: `));
    expect(failed).toContain('agent refund-reconciler reads PAYMENTS_API_URL (its env), which its functions would not get: set it in the environment prop');
  }, 240_000);

  it("runs the guide's business-keyed tool (Effects) in an agent of this package: the same request under two run ids reaches the provider once, keyed <agent>:issue_refund:<id>", async () => {
    // The guide's tool, written into this package with the other files, names its effect by the refund request.
    expect(readmeFiles()['refund-tool.ts']).toContain('idempotencyKey: (args) => args.refundRequestId');
    // The agent around it, its scripted model asking for one refund; two runs on one test environment (one ledger).
    writeFileSync(
      join(app, 'refund-twice.ts'),
      `import { defineAgent, withDev } from 'savepoint';
import { createTestEnvironment } from 'savepoint/testing';
import * as z from 'zod';
import { issueRefund, sent } from './refund-tool.js';
const agent = withDev(
  defineAgent({ name: 'refunds', model: 'sim:savepoint-sim-1', system: 'Refund what is asked.', input: z.object({}).strict(), prompt: () => 'Refund rr_001.', tools: [issueRefund] }),
  {
    policy: (request) =>
      request.messages.some((message) => message.role === 'assistant')
        ? { content: [{ type: 'text', text: 'Refunded.' }], stop_reason: 'end_turn' }
        : { content: [{ type: 'tool_use', id: 'call_1', name: 'issue_refund', input: { refundRequestId: 'rr_001' } }], stop_reason: 'tool_use' },
  },
);
const env = await createTestEnvironment({ agent });
const runs = [await env.run({}, { runId: 'day-a' }), await env.run({}, { runId: 'day-b' })];
await env.close();
console.log(JSON.stringify({ statuses: runs.map((run) => run.status), sent }));
`,
    );
    const { stdout } = await exec(process.execPath, ['--import', 'tsx', 'refund-twice.ts'], { cwd: app, timeout: 120_000 });
    expect(JSON.parse(stdout)).toEqual({ statuses: ['succeeded', 'succeeded'], sent: ['refunds:issue_refund:rr_001'] });
  }, 240_000);

  it("starts the engine with the guides' serve command as written (The CLI, MCP hosts): it says it is ready, an application reaches it, and SIGTERM stops it", async () => {
    const commands = [snippet('serve'), snippet('serve-for-mcp')].map(shellWords);
    expect(commands[1]).toEqual(commands[0]);
    const [npx, ...args] = commands[0]!;
    expect([npx, ...args]).toEqual(['npx', 'savepoint', 'serve', '--agent', 'refund-reconciler']);
    const cwd = join(app, 'serve');
    mkdirSync(cwd);
    // Its own process group: npx and the serve it starts, stopped together.
    const child = spawn(npx!, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          output += chunk.toString('utf8');
          if (/^savepoint: ready$/m.test(output)) resolve();
        });
        child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
        void exited.then((code) => reject(new Error(`serve exited ${code}:\n${output}`)));
      });
      const client = await connect({ stateDir: join(cwd, '.savepoint') });
      expect((await client.list()).runs).toEqual([]);
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
    }
    await exited;
  }, 240_000);

  // The README's other snippets, beside each other after the synths above (not beside the bundling
  // synth, which a dozen CLI processes would slow down on a busy machine).
  it.concurrent("removes a finished run from the DynamoDB ledger (--ledger dynalite) with the README's savepoint prune --finished-before", async () => {
    // Its own directory, so its own state directory: the DynamoDB ledger on dynalite (the optional peer), in ./.savepoint/ledger.
    const cwd = join(app, 'dynalite-run');
    mkdirSync(cwd);
    const { stdout } = await npxBin(['savepoint', 'run', '--agent', '../my-agent.ts', '--input', '{"inbox":"team"}', '--approve', 'approve', '--ledger', 'dynalite', '--json'], { cwd, timeout: 120_000 });
    const { runId, status } = JSON.parse(stdout) as { runId: string; status: string };
    expect(status).toBe('succeeded');
    expect(statSync(join(cwd, '.savepoint', LEDGER_PATHS.dynalite)).isDirectory()).toBe(true);
    expect(existsSync(join(cwd, '.savepoint', LEDGER_PATHS.embedded))).toBe(false);
    await pruneWithReadme(cwd, runId);
  }, 240_000);

  it.concurrent("prints the trace tree the README shows (Traces, after the fact): its first and last spans line for line, the figures aside, and as many spans as it says", async () => {
    const [run, trace] = [...readmeInline(/The sample day \((`npx savepoint run [^`]*`, then\s+`npx savepoint trace [^`]*`)/, 'trace commands').matchAll(/`npx ([^`]*)`/g)].map((match) => shellWords(match[1]!));
    const tree = readmeInline(/no trace viewer can run on this machine, so the tree\):\n\n```text\n([\s\S]*?)\n```/, 'trace tree').split('\n');
    const cut = tree.findIndex((line) => line.startsWith('  … '));
    const spans = Number(/: (\d+) spans in all\)$/.exec(tree[cut]!)?.[1]);
    const cwd = join(app, 'trace');
    mkdirSync(cwd);
    // No collector: `trace` prints the tree.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_')));
    await npxBin(run!, { cwd, env, timeout: 120_000 });
    const printed = (await npxBin(trace!, { cwd, env, timeout: 120_000 })).stdout.trimEnd().split('\n');
    expect(printed).toHaveLength(spans);
    const shown = [...tree.slice(0, cut).map((line, index) => [line, printed[index]!]), ...tree.slice(cut + 1).map((line, index, after) => [line, printed[printed.length - after.length + index]!])];
    for (const [line, actual] of shown) expect(actual).toMatch(new RegExp(`^${shapeOf(line!)}$`));
  }, 240_000);

  it.concurrent("runs the README's commands for a real provider as written, each provider's API the strict local wire server of sim/wire (the key this test's, its endpoint variable added)", async () => {
    const block = snippet('real-providers');
    const commands = block.split('\n').filter((line) => !line.startsWith('#')).map(shellWords);
    expect(commands.map((words) => words.find((word) => word.includes(':') && !word.includes('=')))).toEqual(['anthropic:claude-sonnet-4-6', 'openai:gpt-5-mini', 'bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0']);
    // The examples' own scripted models answer through each provider's wire format, as a real model would.
    const policies = { 'refund-reconciler': refundReconciler.dev!.policy!, 'support-triage': supportTriage.dev!.policy! };
    // Not the machine's keys or endpoints: only what the command sets, and the server's address.
    const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(ANTHROPIC|OPENAI|BEDROCK|MODEL_API)_|^AWS_/.test(name)));
    for (const words of commands) {
      const settings = Object.fromEntries(words.filter((word) => /^[A-Z_]+=/.test(word)).map((word) => word.split(/=(.*)/s) as [string, string]));
      const [npx, ...args] = words.filter((word) => !/^[A-Z_]+=/.test(word));
      expect(npx).toBe('npx');
      const agent = args[args.indexOf('--agent') + 1] as keyof typeof policies;
      const [provider, model] = args[args.indexOf('--model') + 1]!.split(/:(.*)/s) as [string, string];
      const policy = policies[agent];
      expect(policy, agent).toBeDefined();
      const { server, env } =
        provider === 'anthropic'
          ? { server: await startAnthropicServer({ policy, apiKey: 'sk-ant-test', models: [model] }), env: { ANTHROPIC_API_KEY: 'sk-ant-test' } }
          : provider === 'openai'
            ? { server: await startOpenAIServer({ policy, apiKey: 'sk-test', models: [model] }), env: { OPENAI_API_KEY: 'sk-test' } }
            : { server: await startBedrockServer({ policy, region: settings['AWS_REGION']!, credentials: { AKIDREADME: 'readme-secret' }, models: [model] }), env: { AWS_ACCESS_KEY_ID: 'AKIDREADME', AWS_SECRET_ACCESS_KEY: 'readme-secret' } };
      try {
        const endpoint = { anthropic: { ANTHROPIC_BASE_URL: server.url }, openai: { OPENAI_BASE_URL: `${server.url}/v1` }, bedrock: { BEDROCK_ENDPOINT: server.url } }[provider as 'anthropic' | 'openai' | 'bedrock'];
        expect(Object.keys(settings).filter((name) => !(name in env))).toEqual(provider === 'bedrock' ? ['AWS_REGION'] : []);
        const cwd = join(app, `provider-${provider}`);
        mkdirSync(cwd);
        const { stdout } = await npxBin(args, { cwd, env: { ...clean, ...settings, ...env, ...endpoint }, timeout: 180_000 });
        const turns = Number(/^ {2}agent steps +\d+ \((\d+) model turns/m.exec(stdout)?.[1]);
        expect(stdout, provider).toMatch(new RegExp(`^run \\S+ \\(${agent} .*\\): succeeded — done$`, 'm'));
        expect(stdout).toMatch(new RegExp(`^ {2}model +${provider}:${model.replace(/\./g, '\\.')}$`, 'm'));
        // Every turn went to the provider's API, none to the simulator.
        expect(turns).toBeGreaterThan(1);
        expect(server.acceptedBodies()).toHaveLength(turns);
      } finally {
        await server.close();
      }
    }
  }, 480_000);

  it.concurrent("runs the README's crash-injection commands as written, each state directory under /tmp here one of this test's: killed after the provider paid, resumed, every refund paid once", async () => {
    const block = snippet('crash-injection');
    const commands = block.split('\n').map((line) => shellWords(line).map((word) => word.replace(/^\/tmp\//, `${work}/`)));
    expect(commands.map((words) => words.slice(0, 5).join(' '))).toEqual([
      `npx savepoint --state-dir ${work}/crash-demo run`,
      `npx savepoint --state-dir ${work}/crash-demo resume`,
      `npx savepoint --state-dir ${work}/crash-demo world`,
      `npx savepoint --state-dir ${work}/crash-demo-2 run`,
    ]);
    const [crashAfterCommit, resume, world, crashAtRandom] = commands.map(([npx, ...args]) => (expect(npx).toBe('npx'), args));
    const savepoint = (args: string[]) =>
      npxBin(args, { cwd: app, timeout: 120_000 }).then(
        ({ stdout, stderr }) => ({ failed: false, output: `${stdout}${stderr}` }),
        (error: { stdout?: string; stderr?: string }) => ({ failed: true, output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
      );
    /** `world`'s list of refunds: each refund request paid once, as many as the sample day pays (16). */
    const paidOnce = (output: string) => {
      const requests = [...output.matchAll(/^ {2}re_\d+ {2}(rr_\d+) /gm)].map((match) => match[1]);
      expect(output).toMatch(/^16 refunds paid, \$1720\.35 in all$/m);
      expect(new Set(requests).size).toBe(requests.length);
      return requests.length;
    };
    const died = await savepoint(crashAfterCommit!);
    expect(died).toMatchObject({ failed: true, output: expect.stringMatching(/crash injected at after-commit \(issue_refund\): SIGKILL/) });
    const resumed = await savepoint(resume!);
    expect(resumed).toMatchObject({ failed: false, output: expect.stringMatching(/^run refunds-2026-11-28 \(refund-reconciler [^)]*\): succeeded — done$/m) });
    expect(paidOnce((await savepoint(world!)).output)).toBe(16);
    // "run it again until it finishes": seeded, so the same number of deaths on every machine; bounded here.
    let attempts = 0;
    for (let finished = false; !finished && attempts < 30; attempts += 1) finished = !(await savepoint(crashAtRandom!)).failed;
    expect(attempts).toBeGreaterThan(1);
    expect(attempts).toBeLessThan(30);
    const again = world!.map((word) => word.replace(`${work}/crash-demo`, `${work}/crash-demo-2`));
    expect(paidOnce((await savepoint(again)).output)).toBe(16);
  }, 480_000);

  it.concurrent("prints the console's address and the report of `npm start` (savepoint run --agent refund-reconciler, no terminal) line for line as the README shows them, the figures aside", async () => {
    const shown = readmeInline(/It prints one line per agent step and per retry, and a report at the end:\n\n```text\n([\s\S]*?)\n```/, "npm start's report").split('\n');
    const cwd = join(app, 'npm-start');
    mkdirSync(cwd);
    const { stdout } = await npxBin(['savepoint', 'run', '--agent', 'refund-reconciler'], { cwd, timeout: 120_000 });
    // The console's address it printed first (The console), its session token one of its own (32 random bytes, base64url).
    const address = readmeInline(/prints its\naddress with a per-start session token:\n\n```text\n(.*)\n```/, 'console address line');
    expect(stdout).toMatch(new RegExp(`^${shapeOf(address.replace(/token=[\w-]{43}$/, 'token='))}[\\w-]{43}$`, 'm'));
    // Each approval it asked for, printed as the README's Approvals shows the lines (its list item's
    // indentation aside): a `…` there stands for the part of an id, a run or a link it leaves out, and
    // the approver is the OS user running it.
    const approvalLines = readmeInline(/links included:\n\n {3}```text\n([\s\S]*?)\n {3}```/, 'approval notification lines').split('\n');
    for (const line of approvalLines) {
      const pattern = line.slice(3).split(/[\w-]*…/).map(shapeOf).join('\\S+').replace('local:alice', 'local:[\\w.-]+');
      expect(stdout).toMatch(new RegExp(`^${pattern}$`, 'm'));
    }
    const report = stdout.slice(stdout.indexOf('\nrun ') + 1).trimEnd().split('\n');
    // The figures (counts, cents, seconds, the fingerprint) are the README's run's; every word, label and line is the CLI's.
    expect(report).toHaveLength(shown.length);
    report.forEach((line, index) => expect(line).toMatch(new RegExp(`^${shapeOf(shown[index]!)}$`)));
  }, 240_000);

  it.concurrent("prints the --json report the README shows: run --json and status --json have its keys, and no key it does not name", async () => {
    const block = snippet('json-report');
    const shown = JSON.parse(block.replace(/\s+\/\/[^\n]*/g, '')) as Record<string, unknown>;
    // A top-level key's lines (to the next top-level key) with their comments: a key "only when …"
    // is absent from a plain succeeded run; "run --json only" / "status --json only" from the other command.
    const lines = block.split(/\n(?= {2}"\w+":)/).slice(1);
    const marked = (mark: string) => lines.filter((text) => text.includes(`// ${mark}`)).map((text) => /^ {2}"(\w+)"/.exec(text)![1]!);
    const keysOf = (command: 'run' | 'status') => {
      const absent = [...marked('only when'), ...marked(`${command === 'run' ? 'status' : 'run'} --json only`)];
      return Object.keys(shown).filter((key) => !absent.includes(key)).sort();
    };
    expect(marked('only when')).toEqual(['error', 'killed', 'recovery']);
    const cwd = join(app, 'json-report');
    mkdirSync(cwd);
    const ran = JSON.parse((await npxBin(['savepoint', 'run', '--agent', 'refund-reconciler', '--run-id', 'json-day', '--json'], { cwd, timeout: 120_000 })).stdout) as Record<string, Record<string, unknown>>;
    const status = JSON.parse((await npxBin(['savepoint', 'status', String(ran['runId']), '--json'], { cwd, timeout: 60_000 })).stdout) as Record<string, unknown>;
    expect(Object.keys(ran).sort()).toEqual(keysOf('run'));
    expect(Object.keys(status).sort()).toEqual(keysOf('status'));
    // The objects of a fixed shape (the others are keyed by tool, model or the agent's own figures).
    for (const key of ['tokens', 'approvals', 'guards', 'execution']) expect(Object.keys(ran[key]!).sort(), key).toEqual(Object.keys(shown[key] as object).sort());
    expect(Object.keys(shown['version'] as object)).toEqual(expect.arrayContaining(Object.keys(ran['version']!)));
  }, 240_000);

  it.concurrent("runs the command of the guide's replay and fork transcripts on a run day1 of the sample day, and prints what the guide shows (the figures aside)", async () => {
    const cwd = join(app, 'transcripts');
    mkdirSync(cwd);
    await npxBin(['savepoint', 'run', '--agent', 'refund-reconciler', '--run-id', 'day1', '--approve', 'approve'], { cwd, timeout: 120_000 });
    for (const [transcript, lines] of [[snippet('replay-transcript'), 1], [snippet('fork-transcript'), 2]] as const) {
      const [command, ...shown] = transcript.split('\n');
      expect(shown.filter((line) => line.startsWith('$ ')), 'one command a transcript').toEqual([]);
      const [savepoint, ...args] = shellWords(command!.slice(2));
      expect(savepoint).toBe('savepoint');
      const { stdout } = await npxBin(['savepoint', ...args], { cwd, timeout: 180_000 });
      // The figures (counts, times, amounts, digests) are the README's run's; the words and the shape are the CLI's.
      for (const line of shown.slice(0, lines)) expect(stdout).toMatch(new RegExp(`^${shapeOf(line)}$`, 'm'));
    }
  }, 480_000);

  it("synthesizes the guide's On AWS app (Model providers) as written: only the model-calling functions read the key's secret, CallModel may invoke the other model, and `npx cdk deploy` needs no parameter", async () => {
    const out = await synthesizedApp('models');
    type Resource = { Type: string; Properties: Record<string, any> };
    const template = JSON.parse(readFileSync(join(out, 'Agents.template.json'), 'utf8')) as { Resources: Record<string, Resource>; Parameters?: Record<string, unknown> };
    const resources = template.Resources;
    // Operating on AWS: an app whose model is a real provider's deploys with a bare `npx cdk deploy` (its block's second line).
    const deploy = snippet('synth-and-deploy').split('\n').map(shellWords).find((words) => words[2] === 'deploy');
    expect(deploy).toEqual(['npx', 'cdk', 'deploy']);
    expect(Object.keys(template.Parameters ?? {}).filter((name) => name !== 'BootstrapVersion')).toEqual([]);
    const statementsOfStep = (step: string) => {
      const [, fn] = Object.entries(resources).find(([, resource]) => resource.Type === 'AWS::Lambda::Function' && resource.Properties['Environment']?.Variables?.SAVEPOINT_STEP === step) ?? [];
      expect(fn, step).toBeDefined();
      const role = (fn!.Properties['Role'] as { 'Fn::GetAtt': [string] })['Fn::GetAtt'][0];
      return roleStatements(resources, role) as { Action: unknown; Resource: unknown }[];
    };
    const steps = Object.values(resources).flatMap((resource) => (resource.Type === 'AWS::Lambda::Function' ? [resource.Properties['Environment']?.Variables?.SAVEPOINT_STEP as string | undefined] : [])).filter((step) => step !== undefined);
    expect(steps).toEqual(expect.arrayContaining(['call-model', 'compact', 'call-tool', 'start-run']));
    const readsKey = (step: string) => statementsOfStep(step).some((statement) => JSON.stringify(statement.Action).includes('secretsmanager:GetSecretValue') && JSON.stringify(statement.Resource).includes('secret:savepoint/anthropic-api-key'));
    expect(steps.filter(readsKey).sort()).toEqual(['call-model', 'compact']);
    const invokes = statementsOfStep('call-model').filter((statement) => JSON.stringify(statement.Action).includes('bedrock:InvokeModel'));
    expect(JSON.stringify(invokes.map((statement) => statement.Resource))).toContain('inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0');
  }, 240_000);

  /**
   * The README's snippets for a deployed stack, from this package: the stack is the local twin (the
   * engine on the DynamoDB ledger on dynalite, served as a stack named `Savepoint`, as the other
   * `--stack` tests serve it: test/support/served-stack.ts), which this package's CLI and its own
   * Step Functions client reach through the SDK's endpoint settings, as they would reach AWS.
   */
  describe('against a deployed stack (the local twin)', () => {
    let harness: Harness;
    let served: ServedStack;
    const refunds = () => harness.stack.world.payments.refunds().length;
    const onStack = (...args: string[]) => npxBin(['savepoint', '--stack', 'Savepoint', ...args], { cwd: app, env: served.env, timeout: 120_000 });

    beforeAll(async () => {
      // Each approval approved as it is asked: the run the README's fork request forks pays its large refunds too.
      harness = await startHarness({ ledger: 'dynalite', sealer: stackSealer(), onAsked: (approval, stack) => void postDecision(stack, approval.approvalId, { decision: 'approve', reason: 'test' }) });
      served = await serveStack(harness);
      expect((await harness.run({ runId: 'day1', input: sampleInput })).status).toBe('SUCCEEDED');
    }, 240_000);

    afterAll(async () => {
      await served?.close();
      await harness?.stack.close();
    });

    it("starts the README's fork request, as written, with a StartExecution of the user's own: a dry fork of day1 that sends nothing", async () => {
      const request = snippet('fork-request');
      const { runId, input, fork } = JSON.parse(request) as { runId: string; input: unknown; fork: { from: string; at: number; effects: string } };
      expect(input).toEqual(sampleInput);
      writeFileSync(join(app, 'fork.json'), request);
      writeFileSync(join(app, 'start-execution.mjs'), START_EXECUTION);
      const paid = refunds();
      const { stdout } = await exec(process.execPath, ['start-execution.mjs', harness.stack.stateMachineArn, 'fork.json'], { cwd: app, env: served.env, timeout: 60_000 });
      await waitForChain(harness.stack.engine, harness.stack.ledger, runId, stdout.trim());
      expect(await harness.stack.ledger.getRun(runId)).toMatchObject({ status: 'succeeded', forkedFrom: { runId: fork.from, turn: fork.at, effects: fork.effects } });
      expect(refunds()).toBe(paid);
      expect((await harness.stack.ledger.listConversation(runId)).turns.length).toBeGreaterThan(fork.at - 1);
      // What the person who started it sees of it, with this package's CLI.
      const status = await onStack('status', runId, '--json');
      expect(JSON.parse(status.stdout)).toMatchObject({ runId, status: 'succeeded' });
    }, 240_000);

    it("removes the stack's finished runs with the README's savepoint prune --finished-before (--stack: the DynamoDB ledger's prune)", async () => {
      const [command, ...options] = readmeInline(/`(savepoint prune --finished-before) <date>`/, 'savepoint prune command').split(' ');
      expect(command).toBe('savepoint');
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      const { stdout } = await onStack(...options, tomorrow, '--json');
      const { pruned } = JSON.parse(stdout) as { pruned: { runIds: string[] }[] };
      expect(pruned.flatMap((record) => record.runIds)).toContain('day1');
      expect(await harness.stack.ledger.getRun('day1')).toBeUndefined();
      const verified = await onStack('verify', '--all', '--json');
      expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, pruned: { problems: [] } });
      expect((await onStack('verify', 'day1')).stdout).toMatch(/^day1: pruned, its records removed by pruned at /);
      expect(duplicatePayments(harness.stack)).toEqual([]);
    }, 240_000);
  });
});
