import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StepName } from '../lambdas/shared/steps.js';

const HANDLERS = fileURLToPath(new URL('../lambdas/handlers/', import.meta.url));
/** `.ts` in a checkout of savepoint, `.js` in the installed package (dist/). */
const FROM_SOURCE = import.meta.url.endsWith('.ts');

export interface StepFunctionProps {
  /** Which step this function runs: its handler is `lambdas/handlers/<step>.ts`. */
  readonly step: StepName;
  /** The agent's module, bundled in place of `@savepoint/agent-entry` (the handlers import no agent by name). */
  readonly agentEntry: string;
  /** @default Duration.seconds(30) */
  readonly timeout?: Duration;
  /** @default 512 */
  readonly memorySize?: number;
  readonly environment?: Record<string, string>;
}

/**
 * A Lambda function for one step, with savepoint's defaults baked in: the newest Node.js runtime,
 * ARM64, X-Ray tracing, ESM bundled by the local esbuild with source maps, a log group with a
 * retention, and `SAVEPOINT_STEP` naming the step (the local engine maps Task states by it).
 */
export class StepFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: StepFunctionProps) {
    const timeout = props.timeout ?? Duration.seconds(30);
    if (timeout.toSeconds() > 900) throw new Error(`StepFunction ${id}: timeout ${timeout.toSeconds()} s exceeds Lambda's 900 s`);
    super(scope, id, {
      entry: `${HANDLERS}${props.step}${FROM_SOURCE ? '.ts' : '.js'}`,
      handler: 'handler',
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      tracing: Tracing.ACTIVE,
      timeout,
      memorySize: props.memorySize ?? 512,
      logGroup: new LogGroup(scope, `${id}Logs`, { retention: RetentionDays.ONE_MONTH }),
      // The state machine invokes `currentVersion`: a deploy publishes a new one and keeps the old,
      // which the executions started before it still call until they drain.
      currentVersionOptions: { removalPolicy: RemovalPolicy.RETAIN },
      environment: {
        SAVEPOINT_STEP: props.step,
        NODE_OPTIONS: '--enable-source-maps',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        // Minified, with the source map beside it (not inlined): a smaller bundle to load on each cold start.
        minify: true,
        keepNames: true,
        // The AWS SDK bundled in, not taken from the runtime: one minified file imports in about
        // half the CPU of the runtime's SDK packages (npm run bench -- --cold-start), and the
        // clients are the versions this package was tested with.
        externalModules: [],
        sourceMap: true,
        mainFields: ['module', 'main'],
        // Some CommonJS dependencies call require(); ESM bundles need it defined.
        banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
        // The handler's `@savepoint/agent-entry` is this function's agent. Agents import the public
        // API by the package's name (`savepoint`, `savepoint/sim`), which esbuild resolves through
        // the package's `exports` (a dependency, or this package itself).
        // A relative entry is the app's own file, not a package name. In a checkout, `savepoint`
        // resolves to its sources (package.json `exports`, condition `savepoint-source`).
        esbuildArgs: { [`--alias:@savepoint/agent-entry`]: resolve(props.agentEntry), ...(FROM_SOURCE && { '--conditions': 'savepoint-source' }) },
      },
    });
  }
}
