import { Aspects, AssetHashType, DockerImage, Duration, Lazy, RemovalPolicy, Stack, Tags } from 'aws-cdk-lib';
import { Architecture, CfnFunction, Code, Function as LambdaFunction, Runtime, Tracing, type CodeConfig } from 'aws-cdk-lib/aws-lambda';
import { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { LogGroup, RetentionDays, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { environmentOverLimit } from '../lambdas/shared/lambda-environment.js';
import { functionRole } from './inline-policy-role.js';
import { lambdasModule, StepBundle } from './step-bundle.js';
import { Steps, type StepName } from '../lambdas/shared/steps.js';
import { topLevelStack } from './top-level-stack.js';

const HANDLERS = fileURLToPath(new URL('../lambdas/handlers/', import.meta.url));
const handlerOf = (step: StepName) => lambdasModule(`handlers/${step}`);

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
  /**
   * The steps whose functions the caller makes beside this one with the same agent code: their
   * handlers are bundled in one esbuild build (infra/step-bundle.ts), each function's asset its
   * handler and the chunks it imports. A step missing here still bundles: the build of its agent
   * code is made again with it.
   * @default this step alone
   */
  readonly bundledWith?: readonly StepName[];
  /** @default Duration.seconds(30) */
  readonly timeout?: Duration;
  /** @default 512 */
  readonly memorySize?: number;
  readonly environment?: Record<string, string>;
  /**
   * Variables of the user's own (DurableAgent's `environment`, named `prop` in errors): none may be
   * one savepoint sets on the function, here or later with `addEnvironment` — whichever came last
   * would silently win (a user's `TABLE_NAME` replaced by the ledger's, or the step's `SAVEPOINT_STEP` by theirs).
   * @default none
   */
  readonly userEnvironment?: { readonly prop: string; readonly variables: Readonly<Record<string, string>> };
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

/** The stack's shared functions that bundle no agent (infra/control-plane.ts, infra/recovery.ts): one build (`bundledWith`). */
export const SHARED_STEPS: readonly StepName[] = [Steps.ExpireApprovals, Steps.Sweep, Steps.PruneVersions, Steps.RecoverRun];
/** The stack's shared functions that bundle every agent (infra/stack-api.ts, infra/recovery.ts): one build (`bundledWith`). */
export const EVERY_AGENT_STEPS: readonly StepName[] = [Steps.ApprovalCallback, Steps.RunsApi, Steps.RunEvents, Steps.ExecutionStopped];

/**
 * A Lambda function for one step, with savepoint's defaults baked in: the newest Node.js runtime,
 * ARM64, X-Ray tracing, ESM bundled by the local esbuild with source maps beside, a log group with
 * a retention, and `SAVEPOINT_STEP` naming the step (the local engine maps Task states by it).
 */
export class StepFunction extends LambdaFunction {
  constructor(scope: Construct, id: string, props: StepFunctionProps) {
    const timeout = props.timeout ?? Duration.seconds(30);
    if (timeout.toSeconds() > 900) throw new Error(`StepFunction ${id}: timeout ${timeout.toSeconds()} s exceeds Lambda's 900 s`);
    const handler = handlerOf(props.step);
    const bundledWith = (props.bundledWith ?? []).map(handlerOf);
    const agents = props.agentEntries;
    const own = { SAVEPOINT_STEP: props.step, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...props.environment };
    for (const key of Object.keys(props.userEnvironment?.variables ?? {})) if (key in own && !TUNABLE.test(key)) throw new Error(sharedVariable(props.userEnvironment!.prop, key));
    super(scope, id, {
      code: agents
        ? new AgentsBundleCode(() => new StepBundle(scope, handler, { agentEntries: [...new Set(agents().map((entry) => resolve(entry)))] }, bundledWith))
        : bundleCode(new StepBundle(scope, handler, props.agentEntry === undefined ? {} : { agentEntry: resolve(props.agentEntry) }, bundledWith)),
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
      environment: { ...own, ...props.userEnvironment?.variables },
    });
    if (props.userEnvironment) userEnvironments.set(this, props.userEnvironment);
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

  /** Refuses a variable of the user's (`userEnvironment`): savepoint's own would replace it. */
  override addEnvironment(key: string, value: string, options?: Parameters<LambdaFunction['addEnvironment']>[2]): this {
    // Unset while LambdaFunction's constructor adds the variables it was given (checked before it).
    const user = userEnvironments.get(this);
    if (user && key in user.variables && !TUNABLE.test(key)) throw new Error(sharedVariable(user.prop, key));
    return super.addEnvironment(key, value, options);
  }
}

/** Each StepFunction's `userEnvironment`: a WeakMap, as the base constructor calls `addEnvironment` before a field is set. */
const userEnvironments = new WeakMap<StepFunction, NonNullable<StepFunctionProps['userEnvironment']>>();

/**
 * The variables of Powertools and OpenTelemetry (`POWERTOOLS_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`):
 * settings of the libraries, not savepoint's wiring, whose meaning is the same whoever sets them.
 * The agent's value is the one the function gets, as before the check.
 */
const TUNABLE = /^(POWERTOOLS|OTEL)_/;

const sharedVariable = (prop: string, key: string) => `${prop}.${key}: savepoint sets ${key} on the agent's functions itself; either value would silently replace the other: give the agent's variable another name`;

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
