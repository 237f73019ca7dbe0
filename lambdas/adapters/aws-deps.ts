import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import { childStarter } from './child-starter.js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { assertToolsFitTimeout, ToolTimeoutEnvironment, type AgentDefinition, type TraceRedactor } from '../define.js';
import { CircuitBreaker } from '../guards/breaker.js';
import { DynamoDbLedger, LEDGER_CLIENT_CONFIG } from '../ledger/dynamodb-ledger.js';
import { secretSealer } from '../ledger/seal.js';
import { sinkFromEnv } from '../telemetry/config.js';
import { tracingLedger } from '../telemetry/tracing-ledger.js';
import type { ModelRegistry } from '../models/registry.js';
import { cachedSecrets, secretIdsFromEnv, type ModelSecretIds, type SecretSource } from '../models/secrets.js';
import { MODEL_PROVIDERS } from '../models/providers.js';
import { lazyStep, stepContext, type AgentSteps, type ApprovalSetup, type HarnessDeps, type StepFn, type StepWiring } from '../wiring/steps/context.js';
import type { AwsClients } from './aws-clients.js';
import { systemClock } from '../shared/ports.js';
import { parseOrThrow } from '../shared/validation.js';
import { stepHandler, type Telemetry } from './middleware.js';
import { toolFailureFields } from './step-telemetry.js';
import { powertools } from './powertools.js';
import { PriceOverrides } from '../models/prices.js';
import { BudgetCaps } from '../records/ledger-records.js';
import { FleetBudget } from '../records/fleet.js';
import type { StepName } from '../shared/steps.js';
import { TOOL_SECRET_NAME, toolSecrets } from '../tools/secrets.js';

/** A variable that holds JSON of `schema`'s shape. */
export function jsonVariable<T extends z.ZodType>(schema: T) {
  return z
    .string()
    .transform((text, context) => {
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        context.addIssue({ code: 'custom', message: `not valid JSON (${(error as Error).message})` });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

/**
 * The environment of the step functions on AWS, parsed once per cold start: a missing or malformed
 * variable fails the cold start with its name. infra/ sets the same variables.
 */
/** The variables naming the providers' key secrets (their descriptors' `secret.variable`), each an ARN. */
function secretVariables(): Record<string, z.ZodOptional<z.ZodString>> {
  return Object.fromEntries(MODEL_PROVIDERS.descriptors.flatMap((descriptor) => (descriptor.secret ? [[descriptor.secret.variable, z.string().startsWith('arn:').optional()]] : [])));
}

export const StepEnvironment = schemaOnFirstUse(() => z.object({
  TABLE_NAME: z.string().min(3),
  /** The Secrets Manager secret holding the ledger's seal key (every function that reads or writes the ledger). */
  LEDGER_SEAL_SECRET_ARN: z.string().startsWith('arn:'),
  /** The stack's model (`provider:model-id`), over the agent's. */
  MODEL: z.string().min(1).optional(),
  /** The stack's price overrides (JSON, `PriceOverrides`), over the agent's `prices`: the construct's `prices` (every function, the same). */
  PRICES: jsonVariable(PriceOverrides()).optional(),
  /** The stack's ceilings on the budgets a run request may ask for (JSON, `BudgetCaps`): the construct's `maxBudgets` (StartRun and the runs API). */
  MAX_BUDGETS: jsonVariable(BudgetCaps()).optional(),
  /** The fleet budget (JSON, `FleetBudget`: lambdas/records/fleet.ts): the agent's and the stack's `fleetBudget` (CallModel and Compact). */
  FLEET_BUDGET: jsonVariable(FleetBudget()).optional(),
  /** ARNs of the Secrets Manager secrets holding the providers' API keys (CallModel only): each descriptor's `secret.variable`. */
  ...secretVariables(),
  CODE_VERSION: z.string().min(1),
  /** At least the Lambda timeout: a claim must outlive the invocation that took it. */
  TOOL_LEASE_MS: z.coerce.number().int().positive(),
  /** The stack's `toolTimeout` in ms, which CallTool's timeouts derive from (StartRun and CallTool). */
  TOOL_TIMEOUT_MS: ToolTimeoutEnvironment().shape.TOOL_TIMEOUT_MS,
  /** The agent state machine, for the recovery function to start executions of. */
  STATE_MACHINE_ARN: z.string().startsWith('arn:'),
  /** The child agents CallTool may start (JSON: agent name → its state machine's alias ARN; DurableAgent's `children`). */
  CHILD_STATE_MACHINES: jsonVariable(z.record(z.string(), z.string().startsWith('arn:'))).optional(),
  /** Versions the version pruner keeps whatever else holds (DurableAgent's `keepVersions`). */
  KEEP_VERSIONS: z.coerce.number().int().min(1).max(999),
  /** Recoveries in a row without progress before a run is given up. */
  MAX_RECOVERIES: z.coerce.number().int().positive().max(20),
  // Approvals (infra/approvals.ts sets them on the functions that use them).
  /** The bus approval-requested events go to (`default`: the account's default bus). */
  APPROVAL_EVENT_BUS: z.string().min(1),
  /** An SNS topic approvers subscribe to (optional). */
  APPROVAL_TOPIC_ARN: z.string().startsWith('arn:'),
  /** The Secrets Manager secret holding the link key. */
  APPROVAL_LINK_SECRET_ARN: z.string().startsWith('arn:'),
  /** The approval page (`…/decide`): where the signed links point. */
  APPROVAL_PAGE_URL: z.url(),
  /** Who is sent a link, comma-separated. */
  APPROVERS: z.string().min(1),
  /** The KMS HMAC key decisions are signed with. */
  DECISION_KEY_ID: z.string().min(1),
  /** Decision keys this one replaced (comma-separated ARNs): decisions they signed still verify (adapters/aws-approvals.ts). */
  DECISION_PREVIOUS_KEY_IDS: z.string().transform((text) => text.split(',').map((id) => id.trim()).filter(Boolean)),
  /** The KMS HMAC key a run's starter is signed with (the runs API signs, StartRun verifies: lambdas/runs/starter.ts). */
  STARTER_KEY_ID: z.string().min(1),
  /** `false` lets the identity that started a run approve it. */
  SEPARATION_OF_DUTIES: z.enum(['true', 'false']),
  /** Above this amount (minor units) an approval needs two approvers. */
  SECOND_APPROVER_ABOVE_MINOR: z.coerce.number().int().nonnegative(),
  /** Who may decide by IAM, by person: `{"<person>": ["<principal pattern>", …]}` (approvals/people.ts); unset: nobody. */
  APPROVER_PRINCIPALS: jsonVariable(z.record(z.string().min(1), z.array(z.string().min(1)))).optional(),
  /** Who may start runs through the runs API, by person; unset: anyone IAM lets call it. */
  STARTER_PRINCIPALS: jsonVariable(z.record(z.string().min(1), z.array(z.string().min(1)))).optional(),
  /** What a run whose starter is nobody the deployment names needs (policy.ts `unknownStarter`). */
  UNKNOWN_STARTER: z.enum(['two-approvers', 'any-approver']),
  /** The tool credentials' secrets by name (CallTool only: infra/durable-agent.ts `toolSecrets`), ARNs. */
  TOOL_SECRETS: jsonVariable(z.record(z.string().regex(TOOL_SECRET_NAME), z.string().startsWith('arn:'))),
}));
export type StepEnvironment = z.infer<ReturnType<typeof StepEnvironment>>;

/**
 * The model clients of a function whose step calls a model (adapters/aws-models.ts): handed in
 * by its handler file, so that no other function's bundle holds a provider's SDK.
 */
export type ModelsFactory = (env: NodeJS.ProcessEnv, keys: ModelSecretIds, secrets: SecretSource) => ModelRegistry;

/**
 * One set of clients per container, shared by every invocation, each built on first use: a
 * function reads only the variables of the clients its step uses. Beside the ledger, a function
 * has only the clients its handler passes (`clients`, adapters/aws-clients.ts).
 */
export function awsDeps(
  env: NodeJS.ProcessEnv = process.env,
  observe: { traced?: <T>(client: T) => T; telemetry?: Telemetry; redactTrace?: TraceRedactor; tools?: AgentDefinition['tools'] } = {},
  secrets: SecretSource = secretsManager,
  modelsFactory?: ModelsFactory,
  clients: AwsClients = {},
): HarnessDeps {
  const traced = observe.traced ?? (<T>(client: T) => client);
  const config = parseOrThrow(StepEnvironment().partial(), env, 'Lambda environment');
  const required = <K extends keyof StepEnvironment>(name: K): StepEnvironment[K] => {
    const value = config[name];
    if (value === undefined) throw new Error(`invalid Lambda environment: ${name}: required`);
    return value as StepEnvironment[K];
  };
  const once = <T>(make: () => T): (() => T) => {
    let made: { value: T } | undefined;
    return () => (made ??= { value: make() }).value;
  };
  const sfn = once(() => given(clients.stepFunctions, 'Step Functions client')(traced));
  // The seal key from Secrets Manager on first use (lambdas/ledger/seal.ts), kept for the container's life.
  const ledger = once(() => {
    const sealSecret = required('LEDGER_SEAL_SECRET_ARN');
    const stored = new DynamoDbLedger(traced(new DynamoDBClient({ ...LEDGER_CLIENT_CONFIG })), required('TABLE_NAME'), async () => secretSealer(sealSecret, await getSecret(sealSecret)));
    // GenAI spans from each record as it is written, when the OTEL_* variables name a collector
    // (lambdas/telemetry/): exported before the step returns, so a frozen container loses none.
    const sink = sinkFromEnv(env, { redact: observe.redactTrace });
    const warn = (error: unknown) => observe.telemetry?.error('span export failed', { error: String(error) });
    return sink ? tracingLedger(stored, { sink, clock: systemClock, onError: warn, ...(observe.tools && { tools: observe.tools }) }) : stored;
  });
  const breaker = once(() => new CircuitBreaker(ledger(), systemClock));
  // Endpoints and the region from the environment; the API keys from Secrets Manager, read once
  // on the first model call and kept for the container's life.
  const readSecret = cachedSecrets(secrets);
  const models = once(() => {
    if (!modelsFactory) throw new Error('this function calls no model: its handler passes no model clients (lambdas/handlers/call-model.ts does)');
    return modelsFactory(env, secretIdsFromEnv(config as Record<string, string | undefined>), readSecret);
  });
  const approvals = once(() => approvalSetup(config, clients));
  // Read when a tool asks, kept five minutes (tools/secrets.ts): a rotated secret is picked up without a redeploy.
  const tools = once(() => toolSecrets(config.TOOL_SECRETS ?? {}, toolSecretValue, systemClock));
  return {
    get ledger() {
      return ledger();
    },
    get breaker() {
      return breaker();
    },
    get models() {
      return models();
    },
    get defaultModel() {
      return config.MODEL;
    },
    get prices() {
      return config.PRICES;
    },
    get maxBudgets() {
      return config.MAX_BUDGETS;
    },
    get fleetBudget() {
      return config.FLEET_BUDGET;
    },
    get callbacks() {
      return sfn().callbacks;
    },
    get executions() {
      return sfn().executions;
    },
    get lookup() {
      return sfn().lookup;
    },
    get starter() {
      return sfn().starter(required('STATE_MACHINE_ARN'));
    },
    get versions() {
      return sfn().versions(required('STATE_MACHINE_ARN'));
    },
    get children() {
      const machines = config.CHILD_STATE_MACHINES;
      return machines && childStarter(machines, (arn) => sfn().starter(arn), sfn().executions);
    },
    get keepVersions() {
      return config.KEEP_VERSIONS;
    },
    get codeVersion() {
      return required('CODE_VERSION');
    },
    get leaseMs() {
      return required('TOOL_LEASE_MS');
    },
    get recoveryPolicy() {
      return { maxWithoutProgress: required('MAX_RECOVERIES') };
    },
    get approvals() {
      return approvals();
    },
    get toolSecrets() {
      return tools();
    },
    clock: systemClock,
    agentEnv: env,
    onToolFailure: (tool, error) => {
      const line = toolFailureFields(tool, error);
      if (observe.telemetry) observe.telemetry.error('tool failed', line);
      else console.error(JSON.stringify({ level: 'ERROR', message: 'tool failed', ...line }));
    },
    // Ids and deadline only: the summary and details describe the tool's arguments.
    notify: ({ approvalId, runId, turn, call, toolName, decideBy }) => {
      const line = { approvalId, runId, turn, call, tool: toolName, decideBy };
      if (observe.telemetry) observe.telemetry.info('approval requested', line);
      else console.log(JSON.stringify({ level: 'INFO', message: 'approval requested', ...line }));
    },
  };
}

/**
 * The API keys' secrets, read with Powertools Parameters (cached for five minutes, so a rotated key
 * is picked up without a redeploy); a secret that is not a string is refused, naming it.
 */
const secretsManager: SecretSource = async (id) => {
  const value = await getSecret(id, { maxAge: 300 });
  if (typeof value !== 'string' || value.trim() === '') throw new Error(`secret ${id} holds no API key (expected a non-empty string)`);
  return value;
};

/** A tool secret's value, read from Secrets Manager each time asked (toolSecrets keeps it); not a string is refused, naming it. */
const toolSecretValue = async (id: string): Promise<string> => {
  const value = await getSecret(id, { forceFetch: true });
  if (typeof value !== 'string' || value === '') throw new Error(`secret ${id} holds no tool credential (expected a non-empty string)`);
  return value;
};

/**
 * What an agent's function has whatever its step: its telemetry and tracing, and the deps built
 * on first use. A step that calls a model is given `models` by its handler file, and each step the
 * AWS clients it uses (`clients`): a bundle holds only its own step's SDKs.
 */
export function lambdaFunction(agent: AgentDefinition, options: { env?: NodeJS.ProcessEnv; models?: ModelsFactory; clients?: AwsClients } = {}) {
  // zod compiles a parser (new Function) for each object schema on its first parse: a Lambda
  // function parses each schema a few times per container (its environment once, an event per
  // invocation), where compiling costs more than it saves (~3 ms of CallTool's cold start, more on
  // its first invocation). The interpreted parse accepts and refuses the same input. Set when a
  // function's handler is made, not when this module is imported: a local engine or an app that
  // imports savepoint keeps zod's default.
  z.config({ jitless: true });
  const env = options.env ?? process.env;
  // At the agent's load: a cold start of StartRun (or CallTool) fails at once, naming both timeouts.
  assertToolsFitTimeout(agent, parseOrThrow(ToolTimeoutEnvironment().partial(), env, 'Lambda environment').TOOL_TIMEOUT_MS);
  const { telemetry, tracing, traced } = powertools(agent.name);
  const deps = awsDeps(env, { traced, telemetry, redactTrace: agent.redactTrace, tools: agent.tools }, secretsManager, options.models, options.clients);
  return {
    env,
    deps,
    traced,
    handler: (step: StepName, run: StepFn) => stepHandler(run, undefined, { step, telemetry, middlewares: [tracing] }),
  };
}

/**
 * The Lambda handler of one step of an agent (lambdas/handlers/ pass theirs: `wire` is the step's
 * wiring, a module of its own in wiring/steps/, so the bundle holds that step's modules and no
 * other's). The step's shared context (its prices, the code's fingerprint) is made at the cold
 * start, the step itself on its first invocation.
 */
export function lambdaStep(agent: AgentDefinition, step: keyof AgentSteps, wire: StepWiring, options: { env?: NodeJS.ProcessEnv; models?: ModelsFactory; clients?: AwsClients } = {}) {
  const { deps, handler } = lambdaFunction(agent, options);
  const context = stepContext(agent, deps);
  return handler(step, lazyStep(() => wire(context)));
}

/**
 * The approval machinery from the variables a function was given: each piece only where its
 * variable is set (RequestApproval notifies and signs links; the callback verifies links and signs
 * decisions; CallTool verifies decisions). Separation of duties is on unless turned off.
 */
function approvalSetup(config: Partial<StepEnvironment>, clients: AwsClients): ApprovalSetup {
  const secondAbove = config.SECOND_APPROVER_ABOVE_MINOR;
  return {
    policy: {
      separationOfDuties: config.SEPARATION_OF_DUTIES !== 'false',
      ...(secondAbove !== undefined && { secondApproverAboveMinor: secondAbove }),
      // On AWS the directory is always there: without one, nobody decides by IAM (links only).
      approverPrincipals: config.APPROVER_PRINCIPALS ?? {},
      ...(config.STARTER_PRINCIPALS && { starterPrincipals: config.STARTER_PRINCIPALS }),
      ...(config.UNKNOWN_STARTER && { unknownStarter: config.UNKNOWN_STARTER }),
    },
    ...(config.APPROVAL_EVENT_BUS && {
      notifier: given(clients.approvalNotifier, 'the approval notifier (APPROVAL_EVENT_BUS is set)')({
        busName: config.APPROVAL_EVENT_BUS === 'default' ? undefined : config.APPROVAL_EVENT_BUS,
        topicArn: config.APPROVAL_TOPIC_ARN,
      }),
    }),
    ...(config.APPROVAL_LINK_SECRET_ARN && {
      links: {
        signer: given(clients.linkSigner, 'the link signer (APPROVAL_LINK_SECRET_ARN is set)')(config.APPROVAL_LINK_SECRET_ARN),
        pageUrl: config.APPROVAL_PAGE_URL ?? '',
        approvers: (config.APPROVERS ?? '').split(',').map((approver) => approver.trim()).filter(Boolean),
      },
    }),
    ...(config.DECISION_KEY_ID && { decisionMac: given(clients.decisionMac, 'the decision key (DECISION_KEY_ID is set)')(config.DECISION_KEY_ID, config.DECISION_PREVIOUS_KEY_IDS) }),
    ...(config.STARTER_KEY_ID && { starterMac: given(clients.starterMac, 'the starter key (STARTER_KEY_ID is set)')(config.STARTER_KEY_ID) }),
  };
}

/** A client the function's handler passed, or a failure naming it and where it is passed. */
export function given<T>(client: T | undefined, what: string): T {
  if (client === undefined) throw new Error(`this function's handler passes no ${what}: add it to the clients of its file in lambdas/handlers/ (lambdas/adapters/aws-clients.ts)`);
  return client;
}
