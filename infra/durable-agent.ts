import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Annotations, ArnFormat, CfnOutput, Duration, Stack, Token } from 'aws-cdk-lib';
import { bucketNameProblem, MAX_STATE_MACHINE_NAME, scheduleProblem } from '../lambdas/shared/aws-names.js';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { SfnStateMachine } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { DEFAULT_TOOL_TIMEOUT_MS, DEV_MODULE, MAX_TOOL_TIMEOUT_MS, type AgentDefinition } from '../lambdas/define.js';
import { shownValue } from '../lambdas/shared/text.js';
import { DEFAULT_KEEP_VERSIONS } from '../lambdas/steps/prune-versions.js';
import { Steps, type StepName } from '../lambdas/shared/steps.js';
import { problemsOf } from '../lambdas/shared/validation.js';
import { LAMBDA_ENVIRONMENT_NAME } from '../lambdas/shared/lambda-environment.js';
import { priceTable, type Price } from '../lambdas/models/prices.js';
import { BudgetCaps, RunConfig } from '../lambdas/records/ledger-records.js';
import { AgentStateMachine, LIVE_ALIAS } from './agent-state-machine.js';
import { topLevelStack } from './top-level-stack.js';
import { CHILDREN_BESIDE_CONTEXT } from './children-beside.js';
import { ApprovalMachinery, nobodyDecidesWarning, peopleOf, type ApprovalSettings } from './approvals.js';
import { LedgerTable } from './ledger-table.js';
import { bindModelAccess, modelStepTimeoutOf, type ModelAccessProps } from './model-access.js';
import { bindToolSecrets, type ToolSecretsProp } from './tool-secrets.js';
import { checkMaxRecoveries } from './recovery.js';
import { StepFunction } from './step-function.js';
import { ControlPlane } from './control-plane.js';
import { BATCH_ITEM_TIMEOUT } from './batch-state-machine.js';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { acknowledgeNagFindings } from './nag.js';
import { operationsOf, type AlarmThresholds } from './observability.js';
import { addCollectorLayer, tracingEnvironment, type GenAiTracing } from './tracing.js';
import { fleetBudgetEnvironment, type FleetBudgetProps } from './fleet-budget.js';
import type { LedgerRole } from './ledger-table.js';

/** The fan-out of an agent (`DurableAgentProps.batches`). */
export interface AgentBatchesProps {
  /**
   * Buckets whose objects a batch may read its items from (`manifest: { bucket, key }`): the batch
   * state machine's role gets `s3:GetObject` on their objects, the ItemReader's read. A name S3
   * would refuse fails the synth, naming it.
   * @default none: only a request's own list of items
   */
  readonly manifestBuckets?: readonly IBucket[];
}

/** One agent's deployment: its name and module, and the defaults baked in (each prop says its `@default`). */
export interface DurableAgentProps {
  /** The agent's name, as its `defineAgent({ name })` says: it names the state machine and the runs (one agent to a name in a stack). */
  readonly agentName: string;
  /** The agent's module (a file exporting `defineAgent(…)`), bundled into each function. */
  readonly entry: string;
  /**
   * The model of this stack's runs (`provider:model-id`, over the agent's own; a run request may
   * still name another), where its keys live, and the grants CallModel gets for them.
   * @default the agent's model, no secrets, no Bedrock grant
   */
  readonly models?: ModelAccessProps;
  /**
   * When to start a run on its own (the agent's `scheduled` turns the event time into the input).
   * An expression EventBridge would refuse (`Schedule.expression('rate(5 minute)')`, a five-field
   * cron) fails the synth, naming it.
   * @default no schedule
   */
  readonly schedule?: Schedule;
  /**
   * Whether the stack's REST API (one for all its agents: infra/stack-api.ts) serves this agent:
   * its runs API and the approvals people and machines decide through (IAM-signed).
   * @default true
   */
  readonly approvalApi?: boolean;
  /**
   * The ledger. Agents of one app may share one (their runs are apart by run id).
   * @default a table of the agent's own
   */
  readonly table?: LedgerTable;
  /**
   * Environment the agent's `deps` read (e.g. its providers' base URLs): every variable the agent
   * declares in its `env` must be set here (or by Lambda itself), else synth fails naming it. Not
   * for secrets: see `toolSecrets`. A variable savepoint sets on the functions itself (`TABLE_NAME`,
   * `CODE_VERSION`, …) fails the synth too, naming it: one value would silently replace the other.
   * @default none
   */
  readonly environment?: Record<string, string>;
  /**
   * The agent's definition, as the app imports it (`import agent from './my-agent.js'`): its `name`
   * must be `agentName`, and each variable of its `env` must reach the functions (`environment`),
   * else synth fails naming the variable and this prop — not the first tool call on AWS. Synth
   * warns when its tools or budgets can ask a person and `approvals` names nobody who may decide.
   * @default not checked
   */
  readonly agent?: Pick<AgentDefinition, 'name' | 'env'> & Partial<Pick<AgentDefinition, 'tools' | 'budgets'>>;
  /**
   * Tool credentials by name (a webhook URL that is a secret, an API key): each a Secrets Manager
   * secret, or its ARN or name. Only CallTool's role may read them, and its environment names them
   * (`TOOL_SECRETS`), never their values; a tool reads one at run time with
   * `await context.secret('NAME')`, kept five minutes (infra/tool-secrets.ts). A name or ARN Secrets
   * Manager would refuse fails the synth, naming it.
   * @example { CHAT_WEBHOOK_URL: Secret.fromSecretNameV2(this, 'Webhook', 'chat-webhook-url') }
   * @default none
   */
  readonly toolSecrets?: ToolSecretsProp;
  /** Recorded in every run's fingerprint. @default 'dev' */
  readonly codeVersion?: string;
  /** Recoveries in a row without progress before a run is given up. @default 3 */
  readonly maxRecoveries?: number;
  /**
   * State machine versions kept whatever else holds: every 6 hours the version pruner deletes
   * older ones that no alias routes to, that run no execution and whose last execution ended over
   * an hour ago (lambdas/steps/prune-versions.ts), so deploys never reach the 1,000-version quota.
   * @example 50
   * @default DEFAULT_KEEP_VERSIONS (20)
   */
  readonly keepVersions?: number;
  /**
   * The public approval page (`/decide/{approvalId}`, open to anyone with a link): its own throttle
   * per method (the signed routes keep the stage's 10 rps, burst 20), and a WAF web ACL to attach
   * to the API's stage (e.g. a rate-based rule per source IP). Ignored without the approval API.
   * The stack's agents share its API: every agent served by it must set the same (synth fails otherwise).
   * @default throttle 5 rps, burst 10, per method; no web ACL
   */
  readonly approvalPage?: ApprovalPageProps;
  /**
   * Whether this app sets API Gateway's account-wide CloudWatch Logs role (`AWS::ApiGateway::Account`,
   * once per top-level stack, whatever the number of agents) for the approval API's execution logs.
   * `false`: it is set already, by another stack or by you.
   * @default true
   */
  readonly apiGatewayAccount?: boolean;
  /** Who is told and may decide, and the policy (infra/approvals.ts). @default no links, separation of duties on */
  readonly approvals?: ApprovalSettings;
  /** When the agent's alarms go off (infra/observability.ts). @default see AlarmThresholds */
  readonly alarms?: AlarmThresholds;
  /** OpenTelemetry GenAI traces of every model and tool call, over OTLP (infra/tracing.ts). @default off */
  readonly tracing?: GenAiTracing;
  /**
   * The longest `timeoutMs` of the agent's tools (`maxToolTimeoutMs(agent)`): infra does not load
   * the agent, so it is said here. CallTool's Lambda timeout, its Task's and a tool claim's lease
   * derive from it; a run of an agent whose tools wait longer fails at its start, naming both.
   * @example Duration.minutes(2)
   * @default Duration.millis(DEFAULT_TOOL_TIMEOUT_MS) (20 s)
   */
  readonly toolTimeout?: Duration;
  /**
   * The agents this one runs as tools (`defineAgentTool`), by name, deployed in the same stack: its
   * CallTool may start their state machines (on their `live` alias), its runs API and ExecutionStopped
   * may stop their executions (a killed run's children are killed with it), nothing else of theirs;
   * their executions' ends wake its waits (a rule on their status changes, to its ExecutionStopped).
   * @default none: a call of an agent tool is answered to the model as an error
   */
  readonly children?: readonly string[];
  /**
   * How many tool calls of one model turn run at once: the calls a model asks for together are
   * independent of each other, so they need not wait for one another (a call held for a person's
   * approval holds back none of the others). `1` runs them one at a time. From 1 to 40.
   * @example 4
   * @default 10 (DEFAULT_TOOL_CONCURRENCY)
   */
  readonly toolConcurrency?: number;
  /**
   * Fan-out: `POST /v1/batches` on the agent's runs API starts one run per item of a list, or of an
   * S3 object (`manifest`), at most `concurrency` at once, on the stack's batch state machine (a
   * Distributed Map, one for every agent of the stack: infra/batch-state-machine.ts). The agent
   * gets an item function (its runs started through its runs API's start path, as the caller who
   * started the batch); the batch state machine may invoke it, and read the objects of
   * `manifestBuckets`. Needs the runs API (`approvalApi`).
   * @example { manifestBuckets: [Bucket.fromBucketName(this, 'Manifests', 'acme-batches')] }
   * @default none: `POST /v1/batches` answers 404
   */
  readonly batches?: AgentBatchesProps;
  /**
   * Model prices by `provider:model-id`, in dollars per million tokens, over the built-in table
   * and the agent's own `prices`: for a model the table lacks, or an account's own prices. Every
   * function gets them (they are part of each run's fingerprint); checked at synth.
   * @example { 'bedrock:eu.anthropic.claude-haiku-4-5-20251001-v1:0': { inputPerMTok: 1.1, outputPerMTok: 5.5, cacheWritePerMTok: 1.375, cacheReadPerMTok: 0.11 } }
   * @default none: the agent's prices over the built-in table (lambdas/models/prices.ts)
   */
  readonly prices?: Readonly<Record<string, Price>>;
  /**
   * The most a run request (the runs API, `StartExecution`, `savepoint --stack … run --max-…`)
   * may ask for, per budget, within the agent's own `maxBudgets`: a request above it is refused,
   * naming the budget (lambdas/runs/budget-caps.ts). Checked at synth; with `agent`, each ceiling
   * must also be at least the agent's own budget (a run that asks for nothing runs on it); without
   * `agent`, a run that asks for nothing is held within each ceiling as it starts.
   * @example { maxDollars: 20, maxSteps: 1_000 }
   * @default none: the agent's `maxBudgets`, else its own budgets (a starter may lower them, not raise them)
   */
  readonly maxBudgets?: BudgetCaps;
  /**
   * Reserved concurrency per step function (`ReservedConcurrentExecutions`), by step name: the most
   * invocations of that step running at once, set aside from the account's Lambda concurrency so
   * that other functions cannot starve it, and a ceiling that protects what it calls (a provider
   * that takes 20 requests at once: `{ 'call-tool': 20 }`). An invocation past it is throttled and
   * retried by the state machine (Lambda.TooManyRequestsException), never lost. Lambda refuses a
   * deploy whose reservations leave under 100 to the account's other functions; the local twin
   * refuses it too (`lambdaConcurrency`, local/aws/lambda-concurrency.ts). Whole numbers ≥ 0; 0
   * stops the step. Checked at synth.
   * @example { 'call-tool': 20, 'call-model': 50 }
   * @default none: every step shares the account's unreserved concurrency
   */
  readonly reservedConcurrency?: Readonly<Partial<Record<StepName, number>>>;
  /**
   * This agent's fleet budget: dollars per UTC day and runs at once across all its runs, each model
   * call reserved within it before it is sent (infra/fleet-budget.ts); its stack's
   * (`SavepointStackProps.fleetBudget`) applies too. When spent, runs stop (or wait), saying why,
   * and the `FleetBudgetSpent` alarm goes off. Checked at synth.
   * @example { dollarsPerDay: 200, concurrentRuns: 100 }
   * @default none: only each run's own budgets
   */
  readonly fleetBudget?: FleetBudgetProps;
}

/**
 * The `MAX_BUDGETS` variable of StartRun and the runs API (lambdas/adapters/aws-deps.ts), or none; a
 * bad ceiling fails the synth, naming it. So does one below the agent's own budget (when `agent` is
 * given): the ceilings bound what a starter asks for, and a run that asks nothing runs on the agent's
 * budgets — past the ceiling the deployment meant to hold every run to.
 */
export function maxBudgetsEnvironment(id: string, maxBudgets: DurableAgentProps['maxBudgets'], agent?: DurableAgentProps['agent']): Record<string, string> {
  if (maxBudgets === undefined) return {};
  const parsed = BudgetCaps().safeParse(maxBudgets);
  if (!parsed.success) throw new Error(`DurableAgent ${id}: maxBudgets: ${problemsOf(parsed.error)}`);
  // What a run gets with no config: the agent's budgets over the defaults (lambdas/runs/budget-caps.ts budgetCeilings).
  const own = agent && RunConfig().parse({ ...agent.budgets });
  for (const [budget, cap] of Object.entries(parsed.data) as [keyof BudgetCaps, number | undefined][]) {
    if (own && cap !== undefined && own[budget] > cap) {
      throw new Error(`DurableAgent ${id}: maxBudgets.${budget} (${cap}) is below agent ${agent.name}'s own ${budget} (${own[budget]}${agent.budgets?.[budget] === undefined ? ', the default' : ''}), which a run started without config gets: lower the agent's budgets.${budget}, or raise maxBudgets.${budget}`);
    }
  }
  return { MAX_BUDGETS: JSON.stringify(parsed.data) };
}

/** The construct's `reservedConcurrency`, checked: known steps, whole numbers ≥ 0; a bad one fails the synth, naming it. */
function reservedConcurrencyOf(id: string, reserved: DurableAgentProps['reservedConcurrency'] = {}): Partial<Record<StepName, number>> {
  const steps = Object.values(Steps) as string[];
  for (const [step, count] of Object.entries(reserved)) {
    if (!steps.includes(step)) throw new Error(`DurableAgent ${id}: reservedConcurrency.${step}: not a step (the steps are ${steps.join(', ')})`);
    if (!Number.isInteger(count) || (count as number) < 0) throw new Error(`DurableAgent ${id}: reservedConcurrency.${step}: must be a whole number ≥ 0, got ${JSON.stringify(count)}`);
  }
  return reserved;
}

/** The `PRICES` variable of every function (lambdas/adapters/aws-deps.ts), or none; a bad price fails the synth, naming it. */
export function pricesEnvironment(id: string, prices: DurableAgentProps['prices']): Record<string, string> {
  if (prices === undefined) return {};
  try {
    priceTable(prices);
  } catch (error) {
    throw new Error(`DurableAgent ${id}: prices: ${(error as Error).message}`);
  }
  return { PRICES: JSON.stringify(prices) };
}

/**
 * CallTool's Lambda timeout and a claim's lease, from the longest tool timeout: the function has
 * 10 s beyond the tool for its ledger work, and the lease 10 s beyond the function, so a live call
 * is never taken over (its Task allows the function TASK_TIMEOUT_MARGIN more: infra/agent-state-machine.ts).
 */
export function callToolTimeouts(toolTimeout: Duration, prop = 'toolTimeout'): { lambda: Duration; leaseMs: number } {
  // Not integral: the CDK's own check of a NaN or fractional duration would name no prop.
  const toolMs = toolTimeout.toMilliseconds({ integral: false });
  if (!(Number.isInteger(toolMs) && toolMs >= 1 && toolMs <= MAX_TOOL_TIMEOUT_MS)) {
    throw new Error(`${prop} must be from 1 ms to ${MAX_TOOL_TIMEOUT_MS} ms (a tool's longest timeoutMs), got ${Number.isFinite(toolMs) ? toolTimeout.toHumanString() : `${toolMs} ms`}`);
  }
  const lambda = Duration.seconds(Math.ceil(toolMs / 1000) + 10);
  return { lambda, leaseMs: lambda.toMilliseconds() + 10_000 };
}

/** The approval page's protection: its throttle and an optional WAF web ACL. */
export interface ApprovalPageProps {
  /** Requests per second and burst for each of the page's methods. @default { rateLimit: 5, burstLimit: 10 } */
  readonly throttle?: { readonly rateLimit: number; readonly burstLimit: number };
  /** The ARN of a regional WAFv2 web ACL to associate with the approval API's stage. @default none */
  readonly webAclArn?: string;
}

/**
 * One agent, durable on AWS: its Standard state machine (the generic loop: nothing in it names
 * the agent or a tool), one Lambda function per step kind bundled with the agent's module, the
 * ledger grants, and optionally a schedule and the approval API; automatic recovery, the kill by
 * StopExecution and the sweeps are the stack's, shared by its agents (infra/control-plane.ts,
 * infra/recovery.ts). Several can live in one app, side by side.
 */
export class DurableAgent extends Construct {
  /** The agent's name (`agentName`): it names the state machine and the runs. */
  readonly agentName: string;
  /** The agent's Standard state machine (executions start on its live alias). */
  readonly stateMachine: StateMachine;
  /** The ledger its runs are recorded in (its own, or the stack's shared one). */
  readonly ledger: LedgerTable;
  /** The stack's API it is served by (infra/stack-api.ts, shared by the stack's agents), unless `approvalApi: false`. */
  readonly api?: RestApi;

  constructor(scope: Construct, id: string, props: DurableAgentProps) {
    super(scope, id);
    if (!/^[a-z][a-z0-9-]{0,39}$/.test(props.agentName)) {
      throw new Error(`DurableAgent ${id}: agentName must be the agent's name (lowercase letters, digits, "-"), got ${JSON.stringify(props.agentName)}`);
    }
    this.agentName = props.agentName;
    // Said here, naming both agents: the stack's API and shared functions would say it after the agent's resources, naming neither.
    const named = agentIdsByName.get(topLevelStack(this)) ?? agentIdsByName.set(topLevelStack(this), new Map()).get(topLevelStack(this))!;
    const first = named.get(props.agentName);
    if (first !== undefined) {
      throw new Error(`DurableAgent ${id}: agentName: ${JSON.stringify(props.agentName)} is DurableAgent ${first}'s already (it names the agent's state machine and its runs: one agent to a name in a stack)`);
    }
    const stack = Stack.of(this);
    // Said here, naming the prop, before a function is bundled: esbuild would say it of its own
    // alias ("Could not resolve … (originally @savepoint/agent-entry)"), after the first bundles.
    // (A synth that bundles nothing — `cdk synth --exclusively` of another stack, a template test — reads no entry.)
    // The agent, or its name and env: a module's namespace (`import * as`, a CommonJS default) has neither.
    const agent: unknown = props.agent;
    if (agent !== undefined && typeof (agent as { name?: unknown } | null)?.name !== 'string') {
      throw new Error(`DurableAgent ${id}: agent: expected an agent made by defineAgent, got ${shownValue(agent)} (a module's namespace? pass its default export)`);
    }
    // The dev module carries the simulated world and scripted model: never a Lambda function's code.
    if (DEV_MODULE.test(props.entry)) {
      throw new Error(`DurableAgent ${id}: entry ${JSON.stringify(props.entry)} is the agent's dev module (its simulated world and scripted model, for local runs and tests): deploy the agent's own module (${props.entry.replace(/\.dev(\.[cm]?[jt]s)$/, '$1')})`);
    }
    if (stack.bundlingRequired && !existsSync(resolve(props.entry))) {
      throw new Error(`DurableAgent ${id}: entry ${JSON.stringify(props.entry)} is no file (${resolve(props.entry)}): the agent's module, a path from the directory the app is synthesized in`);
    }
    // Named for the deployed stack (a nested stack's own name is known only at deploy time).
    const stateMachineName = `${topLevelStack(this).stackName}-${props.agentName}`;
    // Said here, naming both parts: the StateMachine construct would say it deep in its own code.
    if (stateMachineName.length > MAX_STATE_MACHINE_NAME) {
      throw new Error(`DurableAgent ${id}: the state machine's name ${JSON.stringify(stateMachineName)} (the stack's name, "-", agentName) is ${stateMachineName.length} characters, over the ${MAX_STATE_MACHINE_NAME} Step Functions allows: shorten the stack's name or agentName`);
    }
    const ledger = props.table ?? new LedgerTable(this, 'Ledger');
    // Where new runs start (Handoff's fallback, the runs API): the alias, by its ARN built from the fixed name.
    const liveAliasArn = stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: `${stateMachineName}:${LIVE_ALIAS}`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    this.ledger = ledger;
    const common = { CODE_VERSION: props.codeVersion ?? 'dev', POWERTOOLS_SERVICE_NAME: props.agentName, ...tracingEnvironment(id, props.agentName, props.tracing), ...pricesEnvironment(id, props.prices) };
    checkEnvironmentVariables(id, props.environment);
    checkAgentEnvironment(id, props, { ...common, ...props.environment });
    const nobodyDecides = props.agent && nobodyDecidesWarning(props.agent, props.approvals, props.approvalApi ?? true);
    if (nobodyDecides) Annotations.of(this).addWarningV2('@savepoint/nobody-decides', `DurableAgent ${id}: ${nobodyDecides}`);
    const reserved = reservedConcurrencyOf(id, props.reservedConcurrency);
    // What every agent of the stack shares: the log group, the queues, the keys (infra/control-plane.ts).
    const controlPlane = ControlPlane.of(this);
    const logGroup = controlPlane.logGroup;
    // Every function of the agent bundled in one build (infra/step-bundle.ts).
    const bundledWith = [Steps.StartRun, Steps.BudgetCheck, Steps.CallModel, Steps.RequestApproval, Steps.CallTool, Steps.Finalize, Steps.Compact, Steps.Handoff, ...(props.batches ? [Steps.BatchItem] : [])];
    const fn = (fnId: string, step: StepName, options: { timeout?: Duration; environment?: Record<string, string> } = {}) =>
      new StepFunction(this, fnId, { step, bundledWith, agentEntry: props.entry, timeout: options.timeout, environment: { ...common, ...options.environment }, ...(props.environment && { userEnvironment: { prop: `DurableAgent ${id}: environment`, variables: props.environment } }), reservedConcurrentExecutions: reserved[step], logGroup });

    // The model-calling steps: the model timeout and the step around the call (lambdas/shared/timing.ts).
    const modelStep = modelStepTimeoutOf(id, props.models ?? {});
    const toolTimeout = props.toolTimeout ?? Duration.millis(DEFAULT_TOOL_TIMEOUT_MS);
    const callTool = callToolTimeouts(toolTimeout, `DurableAgent ${id}: toolTimeout`);
    const toolTimeoutMs = String(toolTimeout.toMilliseconds());
    const maxBudgets = maxBudgetsEnvironment(id, props.maxBudgets, props.agent);
    // Only the steps that call a model reserve within the fleet budget; a lease goes back by what the run records.
    const fleetBudget = fleetBudgetEnvironment(this, id, props.fleetBudget);
    const functions = {
      // A run starts only if the agent's tools fit the timeouts derived from toolTimeout.
      startRun: fn('StartRunFunction', Steps.StartRun, { environment: { TOOL_TIMEOUT_MS: toolTimeoutMs, ...maxBudgets } }),
      budgetCheck: fn('BudgetCheckFunction', Steps.BudgetCheck),
      callModel: fn('CallModelFunction', Steps.CallModel, { timeout: modelStep, environment: fleetBudget }),
      requestApproval: fn('RequestApprovalFunction', Steps.RequestApproval),
      // The lease outlives the invocation that takes it, so a live call is never taken over.
      callTool: fn('CallToolFunction', Steps.CallTool, { timeout: callTool.lambda, environment: { TOOL_LEASE_MS: String(callTool.leaseMs), TOOL_TIMEOUT_MS: toolTimeoutMs } }),
      finalize: fn('FinalizeFunction', Steps.Finalize),
      compact: fn('CompactFunction', Steps.Compact, { timeout: modelStep, environment: fleetBudget }),
      // Starts the successor on its own execution's version (lambdas/adapters/sfn.ts); the alias is the fallback.
      handoff: fn('HandoffFunction', Steps.Handoff, { environment: { STATE_MACHINE_ARN: liveAliasArn } }),
    };
    // Each role to this agent's own effects and aggregates (infra/ledger-table.ts partitionsOf).
    for (const [role, f] of Object.entries(functions)) ledger.grantTo(f, role as LedgerRole, props.agentName);
    // Where its input does not name the run, StartRun notes which run the execution drives, for the stack's recovery (infra/recovery.ts).
    ledger.grantExecutionRuns(functions.startRun, 'put');
    bindModelAccess(id, functions, props.models ?? {});
    bindToolSecrets(this, id, functions.callTool, props.toolSecrets);

    const { stateMachine, arns } = new AgentStateMachine(this, 'Agent', {
      functions,
      stateMachineName,
      versionDescription: `savepoint agent ${props.agentName}; code ${props.codeVersion ?? 'dev'}`,
      executionLogs: controlPlane.executionLogs,
      ...(props.toolConcurrency !== undefined && { toolConcurrency: props.toolConcurrency }),
    });
    this.stateMachine = stateMachine;
    // Grants by ARN built from the state machine's fixed name: referencing the resource itself
    // would make the functions and the state machine depend on each other.
    const taskResponse = new PolicyStatement({
      actions: ['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat'],
      resources: [arns.stateMachine],
    });
    functions.requestApproval.addToRolePolicy(taskResponse);
    // The agents it runs as tools: their executions' ends wake its waits (the stack's ExecutionStopped, infra/recovery.ts).
    const childMachines = this.#bindChildren(props.children ?? [], { callTool: functions.callTool, taskResponse });
    const maxRecoveries = checkMaxRecoveries(props.maxRecoveries ?? 3, `DurableAgent ${id}: maxRecoveries`);
    // Continue-as-new: Handoff starts the successor. (CallModel's decision bounds its execution's history
    // events from what the steps record, lambdas/guards/history.ts: it calls no Step Functions API.)
    // Versions: a run is continued on the version its execution runs, read from DescribeExecution;
    // new runs start on the alias. (Starting on a version or an alias is authorized on the state
    // machine's own ARN: Step Functions, "Authorization for versions and aliases".)
    functions.handoff.addToRolePolicy(new PolicyStatement({ actions: ['states:StartExecution'], resources: [arns.stateMachine] }));
    functions.handoff.addToRolePolicy(new PolicyStatement({ actions: ['states:DescribeExecution'], resources: [arns.executions] }));
    // StopExecution: a migration (`savepoint migrate`) stops the execution it took the run from.
    functions.startRun.addToRolePolicy(
      new PolicyStatement({ actions: ['states:DescribeExecution', 'states:StopExecution'], resources: [arns.executions] }),
    );

    // Old versions are retained (live executions keep theirs) toward the 1,000-version quota: pruned on a schedule.
    const keepVersions = props.keepVersions ?? DEFAULT_KEEP_VERSIONS;
    if (!(Number.isInteger(keepVersions) && keepVersions >= 1 && keepVersions <= 999)) {
      throw new Error(`DurableAgent ${id}: keepVersions must be a whole number of versions from 1 to 999, got ${props.keepVersions}`);
    }

    if (props.schedule) {
      const problem = !Token.isUnresolved(props.schedule.expressionString) && scheduleProblem(props.schedule.expressionString);
      if (problem) throw new Error(`DurableAgent ${id}: schedule: ${JSON.stringify(props.schedule.expressionString)} ${problem}`);
      const deadLetters = controlPlane.deadLetters('ScheduleDeadLetters');
      // A start on the alias is authorized against the machine's own ARN (Step Functions,
      // "Authorization for versions and aliases"): the target's role is granted that, not the alias.
      // The stack's schedule role (infra/control-plane.ts): it may start the scheduled agents' state machines, each named.
      const role = controlPlane.scheduleRole(arns.stateMachine);
      new Rule(this, 'Schedule', {
        description: `Starts a run of ${props.agentName}; the run id is derived from the event time.`,
        schedule: props.schedule,
        // On the alias: a scheduled run starts on the newest version.
        targets: [new SfnStateMachine(StateMachine.fromStateMachineArn(this, 'LiveAlias', arns.alias), { role, deadLetterQueue: deadLetters, retryAttempts: 4, maxEventAge: Duration.hours(2) })],
      });
    }

    // The stack's API (infra/stack-api.ts): one REST API, approval callback, runs and events function for every agent.
    if (props.batches && props.approvalApi === false) throw new Error(`DurableAgent ${id}: batches need the runs API (approvalApi: false has none)`);
    const stackApi = (props.approvalApi ?? true) ? controlPlane.api(ledger, { id, agentName: props.agentName, ...(props.approvalPage && { approvalPage: props.approvalPage }), apiGatewayAccount: props.apiGatewayAccount ?? true }) : undefined;
    if (stackApi) {
      // The stack's runs function cancels this agent's runs: with them, their child runs' executions (lambdas/runs/child-tree.ts).
      this.#grantStopChildren(stackApi.runsApi, props.children ?? []);
    }
    const batchItemFn = props.batches && stackApi ? this.#bindBatches(props.batches, { runsApi: stackApi.runsApi, fn: (step, environment) => fn('BatchItemFunction', step, { timeout: BATCH_ITEM_TIMEOUT, environment }), ledger, agentName: props.agentName, alias: liveAliasArn, stateMachine: arns.stateMachine, maxBudgets }) : undefined;
    const approvalMachinery = new ApprovalMachinery(this, 'Approvals', {
      settings: props.approvals,
      requestApproval: functions.requestApproval,
      callTool: functions.callTool,
      budgetCheck: functions.budgetCheck,
      callModel: functions.callModel,
      callback: stackApi?.approvalCallback,
      pageUrl: stackApi?.urlForPath('/decide'),
      startRun: functions.startRun,
      ...(stackApi && { runsApi: stackApi.runsApi }),
      ...(batchItemFn && { batchItem: batchItemFn }),
    });
    if (stackApi) {
      const settings = { ...approvalMachinery.apiSettings, ...(props.models?.model !== undefined && { model: props.models.model }), ...(props.prices && { prices: props.prices }), ...(props.maxBudgets && { maxBudgets: JSON.parse(maxBudgets.MAX_BUDGETS!) as BudgetCaps }), ...(batchItemFn && { batchItemFunction: batchItemFn.functionArn }) };
      stackApi.serve({ id, agentName: props.agentName, entry: props.entry, stateMachine: arns, settings, people: peopleOf(props.approvals ?? {}, `DurableAgent ${id}`), ...(props.approvalPage && { approvalPage: props.approvalPage }), apiGatewayAccount: props.apiGatewayAccount ?? true });
      this.api = stackApi.api;
      new CfnOutput(this, 'ApprovalApiUrl', { value: stackApi.urlForPath('/approvals'), description: outputDescription(props.agentName, 'ApprovalApiUrl') });
    }
    // ── Operating on AWS (#9): lose nothing, watch it ──────────────────────────────────────────
    // The approval expiry sweep, the sweeper, the version pruner, recovery and the kill by
    // StopExecution are the stack's (infra/control-plane.ts, infra/recovery.ts).
    const shared = controlPlane.serve({ agentName: props.agentName, entry: props.entry, ledger, stateMachine: arns, keepVersions, maxRecoveries, traced: props.tracing !== undefined, childMachines });
    // The stack's ExecutionStopped, hearing a run of this agent stopped, stops its child runs' executions (lambdas/runs/child-tree.ts).
    this.#grantStopChildren(shared.recovery.executionStopped, props.children ?? []);
    operationsOf(this).watch(this, {
      agentName: props.agentName,
      stateMachine,
      thresholds: props.alarms,
      fleetBudget: 'FLEET_BUDGET' in fleetBudget,
    });
    addCollectorLayer(this, props.tracing);
    // A run's end exports its budget checks, rebuilt from its conversation (a query): only when traced.
    if (props.tracing) ledger.grantRole(functions.finalize, 'traceRunEnd');
    // ─────────────────────────────────────────────────────────────────────────────────────────

    new CfnOutput(this, 'StateMachineArn', { value: stateMachine.stateMachineArn, description: outputDescription(props.agentName, 'StateMachineArn') });
    new CfnOutput(this, 'StateMachineAliasArn', { value: arns.alias, description: outputDescription(props.agentName, 'StateMachineAliasArn') });
    new CfnOutput(this, 'LedgerTableName', { value: ledger.table.tableName, description: outputDescription(props.agentName, 'LedgerTableName') });
    // For `savepoint verify --stack`: finance checks the ledger with its own read access to the key.
    new CfnOutput(this, 'LedgerSealSecretArn', { value: ledger.sealKey.secretArn, description: outputDescription(props.agentName, 'LedgerSealSecretArn') });
    acknowledgeNagFindings(this, { stateMachine, stateMachineName, api: this.api }); // ops (#9): cdk-nag, each with its reason
    named.set(props.agentName, id);
  }

  /**
   * The child agents this one runs as tools (`children`, lambdas/tools/child-runs.ts): CallTool
   * starts each on its alias (authorized against the machine's own ARN: Step Functions,
   * "Authorization for versions and aliases") and stores its waits' tokens; the stack's
   * ExecutionStopped hears their executions end and wakes the waits (both answer this machine's
   * tokens). Their state machines' ARNs, for the stack's rule on their ends (infra/recovery.ts).
   */
  /**
   * The agent's share of the stack's batches (infra/batch-state-machine.ts): its item function,
   * which starts the agent's runs as the runs API does (on the alias, the starter signed), and may
   * start only this agent's state machine; the batch state machine allowed to invoke it and to read
   * the manifest buckets; the runs API told the batch state machine and the item function,
   * allowed to start and read batches, and to read the manifests (a manifest batch's progress lists its runs).
   */
  #bindBatches(settings: AgentBatchesProps, bind: { runsApi: StepFunction; fn: (step: typeof Steps.BatchItem, environment: Record<string, string>) => StepFunction; ledger: LedgerTable; agentName: string; alias: string; stateMachine: string; maxBudgets: Record<string, string> }): StepFunction {
    const batches = ControlPlane.of(this).batches();
    const item = bind.fn(Steps.BatchItem, { STATE_MACHINE_ARN: bind.alias, ...bind.maxBudgets });
    // A start on the alias is authorized against the state machine's own ARN (as the runs API's).
    item.addToRolePolicy(new PolicyStatement({ actions: ['states:StartExecution'], resources: [bind.stateMachine] }));
    // The runs API's reads and its start's writes, on this agent's records (its start path is the runs API's).
    bind.ledger.grantTo(item, 'runsApi', bind.agentName);
    batches.allowItemFunction(item);
    for (const [index, bucket] of (settings.manifestBuckets ?? []).entries()) {
      // S3 refuses such a name at run time only: the batch would fail reading its manifest.
      const problem = !Token.isUnresolved(bucket.bucketName) && bucketNameProblem(bucket.bucketName);
      if (problem) throw new Error(`DurableAgent ${this.node.id}: batches.manifestBuckets[${index}]: ${JSON.stringify(bucket.bucketName)} ${problem}`);
      batches.allowManifests(bucket);
      // The runs function reads a manifest batch's items too, to list its runs (`GET /v1/batches/{id}`): the same objects, GetObject only.
      bind.runsApi.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: [bucket.arnForObjects('*')] }));
    }
    batches.grantStartBatch(bind.runsApi);
    // The stack's batch state machine is the stack's runs function's; the item function is this agent's (its settings: `batchItemFunction`).
    bind.runsApi.addEnvironment('BATCH_STATE_MACHINE_ARN', batches.stateMachineArn);
    return item;
  }

  #bindChildren(children: readonly string[], bind: { callTool: StepFunction; taskResponse: PolicyStatement }): string[] {
    if (children.length === 0) return [];
    const machineOf = this.#childMachineArn;
    for (const name of children) {
      if (!/^[a-z][a-z0-9-]{0,39}$/.test(name)) throw new Error(`DurableAgent ${this.node.id}: children: ${JSON.stringify(name)} is not an agent name`);
    }
    // Checked once the app is built (an agent may be added after the one that runs it): a name no
    // agent of the stack has would grant a state machine nobody deploys (a child's ARN is named
    // after this top-level stack), and every call of that agent tool would fail on AWS for want of it.
    // The local twin synthesizes each agent alone and runs its children on engines beside it
    // (local/template/synthesize.ts: CHILDREN_BESIDE_CONTEXT).
    this.node.addValidation({
      validate: () => {
        if (this.node.tryGetContext(CHILDREN_BESIDE_CONTEXT) === true) return [];
        const agents = topLevelStack(this).node.findAll().filter((construct): construct is DurableAgent => construct instanceof DurableAgent).map((agent) => agent.agentName);
        return children.filter((name) => !agents.includes(name)).map((name) => `DurableAgent ${this.node.id}: children: ${name} is no agent of this stack (its agents: ${agents.join(', ')})`);
      },
    });
    bind.callTool.addToRolePolicy(new PolicyStatement({ actions: ['states:StartExecution'], resources: children.map((name) => machineOf(name)) }));
    bind.callTool.addEnvironment('CHILD_STATE_MACHINES', JSON.stringify(Object.fromEntries(children.map((name) => [name, machineOf(name, LIVE_ALIAS)]))));
    bind.callTool.addToRolePolicy(bind.taskResponse);
    this.ledger.grantChildWaits(bind.callTool, 'put');
    return children.map((name) => machineOf(name));
  }

  /**
   * StopExecution on the executions of this agent's child agents, and nothing else of theirs (a
   * grandchild is stopped by its own parent's ExecutionStopped): a killed parent stops its children.
   */
  #grantStopChildren(fn: StepFunction, children: readonly string[]): void {
    if (children.length === 0) return;
    fn.addToRolePolicy(new PolicyStatement({ actions: ['states:StopExecution'], resources: children.map((name) => this.#childMachineArn(name, '*', 'execution')) }));
    // A function several agents share (the stack's runs function) knows every agent's children: one map, their union.
    const known = childMachinesOf.get(fn) ?? {};
    for (const name of children) known[name] = this.#childMachineArn(name, LIVE_ALIAS);
    childMachinesOf.set(fn, known);
    fn.addEnvironment('CHILD_STATE_MACHINES', JSON.stringify(known));
  }

  /** The ARN of a child agent's state machine (its alias, with a qualifier), or of its executions (`execution`, `*`), by the stack's naming. */
  #childMachineArn = (name: string, qualifier?: string, resource: 'stateMachine' | 'execution' = 'stateMachine'): string =>
    Stack.of(this).formatArn({ service: 'states', resource, resourceName: `${topLevelStack(this).stackName}-${name}${qualifier ? `:${qualifier}` : ''}`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
}

/** What the CLI and the client find a deployed agent by: `savepoint:<agent>:<output>` (cli/stack.ts). */
export type AgentOutput = 'StateMachineArn' | 'StateMachineAliasArn' | 'LedgerTableName' | 'LedgerSealSecretArn' | 'ApprovalApiUrl';

/** The description a deployed agent's output carries, which the CLI and the client find it by. */
export function outputDescription(agentName: string, output: AgentOutput): string {
  return `savepoint:${agentName}:${output}`;
}

/** The agents built in each top-level stack: agent name → construct id (an agent whose construction failed is not one). */
const agentIdsByName = new WeakMap<Stack, Map<string, string>>();

/** Each function's CHILD_STATE_MACHINES so far (agent name → alias ARN): a shared function's is every agent's children. */
const childMachinesOf = new WeakMap<StepFunction, Record<string, string>>();

/** What the Lambda runtime sets in every function (https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime). */
const LAMBDA_RUNTIME_VARIABLES = new Set([
  '_HANDLER',
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_EXECUTION_ENV',
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
  'AWS_LAMBDA_FUNCTION_VERSION',
  'AWS_LAMBDA_INITIALIZATION_TYPE',
  'AWS_LAMBDA_LOG_GROUP_NAME',
  'AWS_LAMBDA_LOG_STREAM_NAME',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_LAMBDA_RUNTIME_API',
  'LAMBDA_TASK_ROOT',
  'LAMBDA_RUNTIME_DIR',
  'TZ',
  'LANG',
  'PATH',
  'LD_LIBRARY_PATH',
  'NODE_PATH',
]);

/**
 * The `environment` prop as Lambda takes it: each name a letter, then letters, digits or `_` (at
 * least two characters), each value a string. CloudFormation refuses another name only at deploy
 * (`MY-VAR`, `1ST`), and a number fails the synth deep in the CDK, naming no prop.
 */
function checkEnvironmentVariables(id: string, environment: DurableAgentProps['environment']): void {
  for (const [name, value] of Object.entries(environment ?? {})) {
    if (!LAMBDA_ENVIRONMENT_NAME.test(name)) throw new Error(`DurableAgent ${id}: environment: ${JSON.stringify(name)} is no name Lambda takes for a variable (a letter, then at least one letter, digit or _)`);
    if (typeof value !== 'string') throw new Error(`DurableAgent ${id}: environment.${name}: expected a string, got ${JSON.stringify(value) ?? String(value)}`);
  }
}

/** The agent's declared `env` reaches its functions: a missing variable fails synth, naming it and the prop. */
function checkAgentEnvironment(id: string, props: DurableAgentProps, environment: Readonly<Record<string, string>>): void {
  const agent = props.agent;
  if (agent === undefined) return;
  if (agent.name !== props.agentName) throw new Error(`DurableAgent ${id}: agent is ${JSON.stringify(agent.name)} but agentName is ${JSON.stringify(props.agentName)}: they must name the same agent`);
  const missing = (agent.env ?? []).filter((name) => !(name in environment) && !LAMBDA_RUNTIME_VARIABLES.has(name));
  if (missing.length === 0) return;
  const example = missing.map((name) => `${name}: …`).join(', ');
  throw new Error(
    `DurableAgent ${id}: agent ${agent.name} reads ${missing.join(', ')} (its env), which its functions would not get: set ${missing.length === 1 ? 'it' : 'them'} in the environment prop (environment: { ${example} }, e.g. from stack.parameter(…))`,
  );
}
