import { Aspects, AssetHashType, DockerImage, Duration, Lazy, RemovalPolicy, Stack, Tags, type ILocalBundling } from 'aws-cdk-lib';
import { Architecture, CfnFunction, Code, Function as LambdaFunction, Runtime, Tracing, type CodeConfig } from 'aws-cdk-lib/aws-lambda';
import { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { LogGroup, RetentionDays, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { environmentOverLimit } from '../lambdas/shared/lambda-environment.js';
import { functionRole } from './inline-policy-role.js';
import type { StepName } from '../lambdas/shared/steps.js';
import { topLevelStack } from './top-level-stack.js';

const HANDLERS = fileURLToPath(new URL('../lambdas/handlers/', import.meta.url));
/** `.ts` in a checkout of savepoint, `.js` in the installed package (dist/). */
const FROM_SOURCE = import.meta.url.endsWith('.ts');
/** Stack traces mapped to the sources when first formatted (lambdas/adapters/lazy-source-maps.ts), not every map parsed at each cold start. */
const LAZY_SOURCE_MAPS = fileURLToPath(new URL(`../lambdas/adapters/lazy-source-maps${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url));
/** `node:http` without Node's ESM facade, which loads undici at each cold start (lambdas/adapters/http-module.ts). */
const HTTP_MODULE = fileURLToPath(new URL(`../lambdas/adapters/http-module${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url));
/** `node:http2` loaded on first use: the SDK's HTTP/2 handler imports it, no step uses it (lambdas/adapters/http2-module.ts). */
const HTTP2_MODULE = fileURLToPath(new URL(`../lambdas/adapters/http2-module${FROM_SOURCE ? '.ts' : '.js'}`, import.meta.url));

export interface StepFunctionProps {
  /** Which step this function runs: its handler is `lambdas/handlers/<step>.ts`. */
  readonly step: StepName;
  /**
   * The agent's module, bundled in place of `@savepoint/agent-entry` (the handlers import no agent
   * by name). None for a function the stack's agents share (infra/control-plane.ts), whose handler
   * imports no agent.
   * @default none
   */
  readonly agentEntry?: string;
  /**
   * Every agent's module, for a function the stack's agents share that runs their code (the stack's
   * API: infra/stack-api.ts), bundled in place of `@savepoint/agents-entry`. Read when the app is
   * synthesized, once every agent has been added (agents are added after the function is made).
   * @default none
   */
  readonly agentEntries?: () => readonly string[];
  /** @default Duration.seconds(30) */
  readonly timeout?: Duration;
  /** @default 512 */
  readonly memorySize?: number;
  readonly environment?: Record<string, string>;
  /**
   * The log group the function writes its streams to: the stack's shared one (infra/control-plane.ts).
   * @default a log group of its own
   */
  readonly logGroup?: ILogGroup;
  /** Lambda's `ReservedConcurrentExecutions` for the function. @default none (the account's unreserved pool) */
  readonly reservedConcurrentExecutions?: number;
}

/**
 * The tag an agent's step function carries, its value the deployed stack's name: the stack's
 * version pruner may delete the old versions of a function with it, and of no other
 * (infra/control-plane.ts, by attribute-based access control: a role policy naming every agent's
 * functions would outgrow IAM's 10,240-character inline policy limit).
 */
export const STACK_TAG = 'savepoint:stack';

/**
 * A Lambda function for one step, with savepoint's defaults baked in: the newest Node.js runtime,
 * ARM64, X-Ray tracing, ESM bundled by the local esbuild with source maps beside, a log group with
 * a retention, and `SAVEPOINT_STEP` naming the step (the local engine maps Task states by it).
 */
export class StepFunction extends LambdaFunction {
  constructor(scope: Construct, id: string, props: StepFunctionProps) {
    const timeout = props.timeout ?? Duration.seconds(30);
    if (timeout.toSeconds() > 900) throw new Error(`StepFunction ${id}: timeout ${timeout.toSeconds()} s exceeds Lambda's 900 s`);
    const handler = `${HANDLERS}${props.step}${FROM_SOURCE ? '.ts' : '.js'}`;
    const agents = props.agentEntries;
    super(scope, id, {
      code: agents ? new AgentsBundleCode(() => new StepBundle(handler, undefined, [...new Set(agents().map((entry) => resolve(entry)))])) : bundleCode(new StepBundle(handler, props.agentEntry === undefined ? undefined : resolve(props.agentEntry))),
      handler: 'index.handler',
      // Its statements inline in the role, the role under the stack's path (infra/inline-policy-role.ts).
      role: functionRole(scope, `${id}ServiceRole`),
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      tracing: Tracing.ACTIVE,
      timeout,
      memorySize: props.memorySize ?? 512,
      ...(props.reservedConcurrentExecutions !== undefined && { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
      logGroup: props.logGroup ?? new LogGroup(scope, `${id}Logs`, { retention: RetentionDays.ONE_MONTH }),
      // The state machine invokes `currentVersion`: a deploy publishes a new one and keeps the old,
      // which the executions started before it still call until they drain.
      currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN },
      environment: {
        SAVEPOINT_STEP: props.step,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...props.environment,
      },
    });
    // An agent's function: its retained versions are the stack's pruner's to delete. The tag is on
    // the function only (not its role): Lambda's tags apply to the function and all its versions.
    if (props.agentEntry !== undefined) Tags.of(this.node.defaultChild as CfnFunction).add(STACK_TAG, topLevelStack(this).stackName);
    // Lambda refuses a function whose variables are over 4 KB only when CloudFormation creates it,
    // mid-deploy; every variable is added by then (addEnvironment included), so synth says it first.
    this.node.addValidation({
      validate: () => {
        const environment = Stack.of(this).resolve((this.node.defaultChild as CfnFunction).environment) as { variables?: Record<string, unknown> } | undefined;
        const why = environmentOverLimit(environment?.variables ?? {});
        return why ? [`${this.node.path} (the ${props.step} function): ${why}; Lambda would refuse it at deploy`] : [];
      },
    });
  }
}

/**
 * The asset is the bundle (its hash is the output's): the handlers' directory is only where it is
 * built from. Bundling is always local (StepBundle bundles or throws), so the image, which CDK
 * requires, is never pulled.
 */
const bundleOptions = (bundle: StepBundle) => ({ assetHashType: AssetHashType.OUTPUT, bundling: { image: DockerImage.fromRegistry('savepoint-bundles-locally'), local: bundle } });
const bundleCode = (bundle: StepBundle) => Code.fromAsset(HANDLERS, bundleOptions(bundle));

/**
 * The code of a function whose bundle holds every agent of the stack (`agentEntries`). CDK stages
 * (bundles) an asset when it is constructed, and the function is made with the stack's first
 * agent, so its asset is made later: by an aspect on the function, which CDK invokes at synth,
 * after the app has added every agent and before the template is written; the function's
 * `Code` property names the asset through tokens resolved then. (An aspect may create constructs
 * below the node it visits: CDK visits that node's children after its aspects.)
 */
class AgentsBundleCode extends Code {
  readonly isInline = false;
  #asset?: Asset;

  constructor(private readonly bundle: () => StepBundle) {
    super();
  }

  bind(scope: Construct): CodeConfig {
    Aspects.of(scope).add({ visit: (node) => void (node === scope && (this.#asset ??= new Asset(scope, 'Code', { path: HANDLERS, ...bundleOptions(this.bundle()) }))) });
    const asset = () => {
      if (!this.#asset) throw new Error(`${scope.node.path}: its bundle (every agent of the stack) is made when the app is synthesized`);
      return this.#asset;
    };
    return { s3Location: { bucketName: Lazy.string({ produce: () => asset().s3BucketName }), objectKey: Lazy.string({ produce: () => asset().s3ObjectKey }) } };
  }
}

/**
 * The module `@savepoint/agents-entry` is bundled as: every agent's definition, in the order the
 * stack added them (lambdas/adapters/stack-api.ts serves each by its name).
 */
export function agentsEntrySource(entries: readonly string[]): string {
  const imports = entries.map((entry, index) => `import agent${index} from ${JSON.stringify(entry)};`);
  return `${imports.join('\n')}\nexport default [${entries.map((_, index) => `agent${index}`).join(', ')}];\n`;
}

/**
 * One step's bundle, built by the local esbuild (an optional peer of savepoint/cdk) with code
 * splitting, which NodejsFunction cannot do (it always writes one `--outfile`): a module the step
 * imports only when it needs it — a model provider's SDK (lambdas/models/index.ts) — is a chunk of
 * its own, loaded on the first call to that provider, so a cold start parses only the SDK it uses.
 * Its fields are part of the asset's cache key (CDK hashes the bundling options as JSON), so two
 * functions never share a bundle by accident.
 */
class StepBundle implements ILocalBundling {
  constructor(
    readonly entry: string,
    readonly agentEntry: string | undefined,
    readonly agentEntries?: readonly string[],
  ) {}

  tryBundle(outputDir: string): boolean {
    if (this.agentEntries === undefined) return this.#build(outputDir, {});
    // esbuild's synchronous build takes no plugins (no virtual module): the module is a file of its own, beside no project file.
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-agents-'));
    try {
      const entry = join(dir, 'agents-entry.ts');
      writeFileSync(entry, agentsEntrySource(this.agentEntries));
      return this.#build(outputDir, { '@savepoint/agents-entry': entry });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  #build(outputDir: string, aliases: Record<string, string>): boolean {
    let esbuild: typeof import('esbuild');
    try {
      esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
    } catch (error) {
      throw new Error('savepoint/cdk bundles the step functions with esbuild, an optional peer dependency: npm install -D esbuild', { cause: error });
    }
    esbuild.buildSync({
      entryPoints: { index: this.entry },
      outdir: outputDir,
      bundle: true,
      splitting: true,
      chunkNames: 'chunks/[name]-[hash]',
      // A Lambda directory has no package.json: every file of an ESM bundle is `.mjs`.
      outExtension: { '.js': '.mjs' },
      format: 'esm',
      platform: 'node',
      target: 'node24',
      // Minified, with each file's source map beside it (not inlined): less to load on each cold start.
      minify: true,
      keepNames: true,
      sourcemap: 'linked',
      // Not Node's --enable-source-maps, which parses every file's map as it loads (~27 ms of a
      // step's ~125 ms import): the bundle maps a stack's frames when a stack is first formatted.
      inject: [LAZY_SOURCE_MAPS],
      // The AWS SDK bundled in, not taken from the runtime: one minified file imports in about half
      // the CPU of the runtime's SDK packages (npm run bench -- --cold-start), and the clients are
      // the versions this package was tested with.
      external: [],
      mainFields: ['module', 'main'],
      // `module` picks the SDK's ES modules (dist-es), which esbuild tree-shakes, over its CommonJS
      // build: esbuild adds it on its own only when no other condition is named. In a checkout,
      // `savepoint` resolves to its sources (package.json `exports`, condition `savepoint-source`).
      conditions: FROM_SOURCE ? ['savepoint-source', 'module'] : ['module'],
      // The handler's `@savepoint/agent-entry` is this function's agent. Agents import the public
      // API by the package's name (`savepoint`, `savepoint/sim`), which esbuild resolves through
      // the package's `exports` (a dependency, or this package itself).
      alias: { http: HTTP_MODULE, 'node:http': HTTP_MODULE, http2: HTTP2_MODULE, 'node:http2': HTTP2_MODULE, ...(this.agentEntry !== undefined && { '@savepoint/agent-entry': this.agentEntry }), ...aliases },
      // Some CommonJS dependencies call require(); ESM bundles need it defined.
      banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" },
      logLevel: 'warning',
    });
    return true;
  }
}
