import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import type { MessageRequest, MessageResponse } from '../records/messages.js';
import { BudgetCaps, RunConfig, type ToolCallRecord, type TurnRecord } from '../records/ledger-records.js';
import { priceTable, type Price } from '../models/prices.js';
import { parseModelSpec } from '../models/spec.js';
import { LAMBDA_ENVIRONMENT_NAME } from '../shared/lambda-environment.js';
import { shownValue } from '../shared/text.js';
import { MAX_MODEL_TIMEOUT_MS, MAX_TOKENS_PER_TURN } from '../shared/timing.js';
import { defineTool, toolTimeoutMs, type ToolDefinition, type ToolTrace } from './tool.js';

/**
 * An agent: its definition (prompt, model, tools, budgets, loop and compaction settings), its
 * local-only parts (the simulated world, the scripted model), its declaration (`defineAgent`,
 * `withDev`) and how its tools' timeouts fit the stack.
 */

/** The budgets an agent may set defaults for (a run's input may still override them). */
export type Budgets = Partial<Omit<RunConfig, 'onBudgetExceeded' | 'budgetExtensionPercent'>> &
  Partial<Pick<RunConfig, 'onBudgetExceeded' | 'budgetExtensionPercent'>>;

/** A scripted model for local runs and tests: from the request to the next assistant turn. */
export type ModelPolicy = (request: MessageRequest) => Pick<MessageResponse, 'content' | 'stop_reason'>;

/** The agent's simulated outside world for local runs (its providers as real HTTP services). */
export interface DevWorld {
  /** Environment the agent's `deps` read (e.g. the providers' base URLs). */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Reaches the world's services in process, with no socket: the local engine hands it to the
   * agent's `deps` (`context.fetch`). It must send a URL it does not serve to the network
   * (sim/in-process.ts `inProcessFetch` does). @default the global fetch
   */
  readonly fetch?: typeof fetch;
  /** Loopback endpoints to publish (the CLI shows them; other commands reach the world by them). */
  readonly endpoints?: Readonly<Record<string, string>>;
  /** What the world found wrong and mended on opening (e.g. a torn journal line it cut off). */
  readonly notes?: readonly string[];
  /** The run input a local run uses when none is given (e.g. the day the world serves). */
  readonly defaultInput?: unknown;
  /** What the world holds now, for `savepoint world` (e.g. the refunds paid): lines, and JSON. */
  inspect?(): Promise<{ lines: string[]; json: unknown }>;
  /** Stops the world's services and closes its files: called once, when the local stack closes. */
  close(): Promise<void>;
}

/** What the harness hands an agent's `deps` besides the environment. */
export interface DepsContext {
  /** The fetch for the tools' HTTP clients. */
  readonly fetch: typeof fetch;
}

/** What `withDev`'s `world` is started with. */
export interface DevWorldOptions {
  /** Where the world keeps its records across restarts; in memory when absent. */
  readonly stateDir?: string;
  /** A data file the world serves (e.g. the day of refund requests), when the agent has one. */
  readonly dataFile?: string;
  /** Transient failures injected into the world's responses, per request. */
  readonly failRate: number;
  /** Seeds the world's randomness (its injected failures): the same seed, the same failures. */
  readonly seed: number;
  /** The clock of the run (a test's injected clock, or the system's). */
  readonly now: () => Date;
  /** What the run ledger of the same state directory remembers doing (absent: nothing, or no ledger). */
  readonly ledger?: LedgerFacts;
}

/** Generic facts from the ledger a world checks its own records against (local/runtime/world-facts.ts). */
export interface LedgerFacts {
  /** Side-effecting tool calls the ledger records as completed with outcome `ok`, by tool name. */
  readonly completedWrites: Readonly<Record<string, number>>;
  /**
   * The idempotency key of every side-effecting call the ledger has claimed. A call is claimed before
   * it goes out, so a provider record made under a key not in here was made by a run the ledger
   * does not know: the ledger was deleted or replaced, and a run would do the work again.
   */
  readonly idempotencyKeys: ReadonlySet<string>;
}

/** What an agent may set (`defineAgent({ contextWindow, compaction })`). */
export interface CompactionOptions {
  /** Compact when the last turn's input tokens reach this share of the window. @default 0.75 */
  readonly share?: number;
  /** The newest turns sent as they are after a compaction. @default 4 */
  readonly keepRecentTurns?: number;
  /** What the model is asked to do with the older turns. @default SUMMARY_INSTRUCTIONS (lambdas/conversation/compaction.ts) */
  readonly instructions?: string;
  /**
   * What the harness keeps verbatim next to the model's summary, from the recorded tool calls the
   * summary covers. @default every `write` call: its name, arguments, outcome and result
   */
  readonly keep?: (calls: readonly ToolTrace[]) => string;
}

/**
 * The loop detector's settings (lambdas/guards/loops.ts). A call is the same when its tool and
 * normalized arguments are; a text-only turn (no tool call) when its normalized text is.
 */
export interface LoopOptions {
  /** How many of the latest turns are examined for a repeated call or text. @default 5 */
  readonly window?: number;
  /** The same call (or text) this many times in the window warns the model, in its next turn. @default 3 */
  readonly warnAt?: number;
  /** The same call (or text) this many times in the window trips the detector. Above `warnAt`. @default 5 */
  readonly repeats?: number;
  /**
   * The longest cycle of whole turns detected (A→B→…→A→B→…, each turn its calls): two rounds warn
   * the model, three trip the detector. @default 8
   */
  readonly cycleLength?: number;
  /**
   * What a trip does: `stop` the run, or `ask` a person, as an exhausted budget asks for an
   * extension (the same approval flow): approved, the run goes on and the turns so far are not
   * examined again; refused or expired, it stops. @default 'stop'
   */
  readonly onLoop?: 'stop' | 'ask';
}

/**
 * Sees one content attribute of a span (its name, its value as JSON text, the record it comes
 * from) before it is exported: returns the text to export, or `undefined` to leave it out.
 */
export type TraceRedactor = (attribute: string, value: string, record: TurnRecord | ToolCallRecord) => string | undefined;

/** An agent, as `defineAgent` returns it: what the harness runs, the CLI loads and the construct deploys. */
export interface AgentDefinition<Input = any, Deps = any, World extends DevWorld = DevWorld> {
  /** Names the agent in runs, stacks and the CLI: lowercase letters, digits and dashes. */
  readonly name: string;
  /** `provider:model-id`, e.g. `sim:savepoint-sim-1`, `anthropic:claude-sonnet-4-6`. */
  readonly model: string;
  /**
   * Where turns go while the model's provider is down (its circuit breaker open), e.g.
   * `bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0` behind `anthropic:claude-sonnet-4-6`.
   * Each turn records the model that answered it. @default none: the run waits for the provider
   */
  readonly fallbackModel?: string;
  /**
   * Sees each content attribute of the run's OpenTelemetry spans (`gen_ai.output.messages`,
   * `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`, as JSON text) before it is exported:
   * returns the text to export, or `undefined` to leave the attribute out. Content is exported only
   * when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` (lambdas/telemetry/).
   *
   * @example
   * redactTrace: (attribute, value) => (attribute === 'gen_ai.tool.call.result' ? undefined : value.replace(/\d{12,19}/g, '[card]'))
   * @default content exported as it is (when opted in)
   */
  readonly redactTrace?: TraceRedactor;
  /** The system prompt of every turn. */
  readonly system: string;
  /** Validates a run's input (the CLI's `--input`, `StartExecution`'s `input`). */
  readonly input: z.ZodType<Input>;
  /** The first user message of a run. */
  readonly prompt: (input: Input) => string;
  /** The tools the model may call (`defineTool`), by unique name. */
  readonly tools: readonly ToolDefinition<any, Input, Deps>[];
  /**
   * Builds the tools' clients from the environment, once per container (validate it here). Give
   * the clients `context.fetch`: on AWS it is the global fetch; in a local run it reaches the
   * simulated world in process (and any other URL over the network).
   */
  readonly deps?: (env: Readonly<Record<string, string | undefined>>, context: DepsContext) => Deps;
  /**
   * The environment variables `deps` reads, e.g. `['PAYMENTS_API_URL']`: a `DurableAgent` whose
   * functions would not get one of them fails at synth time, naming the variable and the prop that
   * sets it (`environment`), instead of at the first tool call on AWS.
   * @default none declared: nothing is checked
   */
  readonly env?: readonly string[];
  /**
   * Defaults for this agent's budgets and settings (`RunConfig`): each run's, unless its starter asks
   * for others (a run request's `config`, within `maxBudgets`). A field left out takes RunConfig's own.
   * @default { maxSteps: 400, maxTokens: 600_000, maxDollars: 5, maxWallSeconds: 14_400, maxTokensPerTurn: 2_048, onBudgetExceeded: 'stop', budgetExtensionPercent: 50, approvalTimeoutSeconds: 86_400, historyEventsBeforeHandoff: 20_000 }
   */
  readonly budgets?: Budgets;
  /**
   * The most a run's starter (`savepoint run --max-…`, a run request's `config`, the runs API) may
   * ask for, per budget; a deployment's `maxBudgets` can only lower it (lambdas/runs/budget-caps.ts).
   * A request above it is refused, naming the budget, never raised silently.
   * @default none: unless the deployment sets one, a starter may lower each budget below the agent's own `budgets`, not raise it
   */
  readonly maxBudgets?: BudgetCaps;
  /**
   * What the agent may move without a person. `maxUnapprovedPerRun`: once the amounts of the
   * run's calls of tools with an `aggregate` (all of them, whatever their key) would pass it, each
   * further such call waits for a person (minor units).
   * @default no cap
   */
  readonly approvals?: { readonly maxUnapprovedPerRun?: number };
  /** The run id for an input: the idempotency key of the whole run. @default `<name>-<hash of the input>` */
  readonly runId?: (input: Input) => string;
  /** The run a scheduled event starts, e.g. the nightly run reconciles the day before. */
  readonly scheduled?: (eventTime: Date) => Input;
  /** The agent's own summary of a run, from the recorded tool calls. */
  readonly report?: (calls: readonly ToolTrace[]) => Readonly<Record<string, number | string>>;
  /** Part of the fingerprint that guards resumes: bump it when the tools' code changes meaning. */
  readonly version?: string;
  /**
   * The earlier versions whose live runs may be moved to this one (`savepoint migrate <runId> --to
   * <version>`): a promise that this prompt, these tools and this model can carry on a conversation
   * those versions started. Not declared: a run finishes on the version it started on.
   * @default none
   */
  readonly compatibleWith?: readonly string[];
  /** How the loop detector judges this agent's turns. @default LOOP: 5 turns, warn at 3, trip at 5, cycles up to 8 */
  readonly loops?: LoopOptions;
  /**
   * Prices of models the built-in price table lacks (or prices to use instead), by model spec, in
   * dollars per million tokens: `{ 'openai:gpt-5-nano': { inputPerMTok: 0.05, outputPerMTok: 0.4,
   * cacheWritePerMTok: 0.05, cacheReadPerMTok: 0.005 } }`. A run refuses a model without a price
   * (a dollar budget must never read zero); the table's version, with a digest of these, is part
   * of the fingerprint. @default none: the built-in table (lambdas/models/prices.ts)
   */
  readonly prices?: Readonly<Record<string, Price>>;
  /** The model's context window in tokens: set it to have long runs compacted (lambdas/conversation/compaction.ts). @default no compaction */
  readonly contextWindow?: number;
  /** How a run's context is compacted once it passes a share of `contextWindow`. */
  readonly compaction?: CompactionOptions;
  /**
   * For local runs only: the simulated world and the scripted model. Set it with `withDev` in the
   * agent's dev module (`my-agent.dev.ts` beside `my-agent.ts`, found by the CLI), not here: the
   * agent's module is bundled into every Lambda function, its dev module never is.
   * @default none
   */
  readonly dev?: AgentDev<World>;
}

/** An agent's local-only parts: what a local run, `savepoint/testing` and the CLI use, and no Lambda. */
export interface AgentDev<World extends DevWorld = DevWorld> {
  /** Starts the agent's simulated outside world. @default no world: the tools' `deps` get the environment only */
  readonly world?: (options: DevWorldOptions) => Promise<World>;
  /** Checks a world data file (`--world-data`) before anything starts: throw to refuse it, naming what is wrong. */
  readonly checkData?: (path: string) => void;
  /** The scripted model of `sim:` models. @default none: a local run needs a model URL */
  readonly policy?: ModelPolicy;
}

/**
 * Whether a value is an agent made by `defineAgent` (or `withDev`): what the CLI looks for among a
 * module's exports, and what the testing kit refuses anything else by, naming it.
 */
export function isAgentDefinition(value: unknown): value is AgentDefinition {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<AgentDefinition>;
  return typeof candidate.name === 'string' && typeof candidate.prompt === 'function' && Array.isArray(candidate.tools) && typeof candidate.system === 'string';
}

/**
 * What is wrong with a value given as an agent (a module's namespace, a missing default export),
 * for an error naming the prop: undefined when it is one.
 */
export function notAnAgent(value: unknown): string | undefined {
  return isAgentDefinition(value) ? undefined : `expected an agent made by defineAgent (or withDev), got ${shownValue(value)}`;
}

/** A dev module's path (`my-agent.dev.ts` beside `my-agent.ts`): the agent with its simulated world and scripted model, for local runs and tests only. */
export const DEV_MODULE = /\.dev\.[cm]?[jt]s$/;

const AGENT_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * The longest timeout of the agent's tools: what the CallTool function's timeout (and a tool
 * claim's lease) must outlast, with room for the step's ledger work (infra/ derives them from it).
 */
export function maxToolTimeoutMs(agent: Pick<AgentDefinition, 'tools'>): number {
  return Math.max(...agent.tools.map(toolTimeoutMs));
}

/**
 * The stack's `toolTimeout` as its functions' environment carries it (TOOL_TIMEOUT_MS, in ms): read
 * by StartRun and CallTool at their cold start on AWS (lambdas/adapters/aws-deps.ts) and by the
 * local stack from the template it deploys (local/runtime/tasks.ts).
 */
export const ToolTimeoutEnvironment = schemaOnFirstUse(() => z.object({ TOOL_TIMEOUT_MS: z.coerce.number().int().positive() }));

/**
 * Refuses an agent whose tools may wait longer than the stack's `toolTimeout` (TOOL_TIMEOUT_MS):
 * its CallTool function would be killed, and its claims' leases run out, before such a tool answers.
 */
export function assertToolsFitTimeout(agent: Pick<AgentDefinition, 'name' | 'tools'>, stackToolTimeoutMs: number | undefined): void {
  if (stackToolTimeoutMs === undefined || agent.tools.length === 0) return;
  const longest = maxToolTimeoutMs(agent);
  if (longest <= stackToolTimeoutMs) return;
  const tool = agent.tools.find((candidate) => toolTimeoutMs(candidate) === longest)!;
  throw new Error(
    `agent ${agent.name}: tool ${tool.name} may take ${longest} ms (maxToolTimeoutMs), longer than the stack's toolTimeout of ${stackToolTimeoutMs} ms: set toolTimeout: Duration.millis(${longest}) on its DurableAgent`,
  );
}

/** `defineTool` for one agent: each tool's `deps` and run `input` typed from the agent, with no generics. */
export type ToolDefiner<Input, Deps> = <Args>(tool: ToolDefinition<Args, Input, Deps>) => ToolDefinition<Args, Input, Deps>;

/**
 * What `defineAgent` takes: an {@link AgentDefinition} whose `tools` may also be a function that
 * gets a `defineTool` typed for this agent, so a tool's `execute` knows what `deps` built.
 */
export type AgentSpec<Input, Deps, World extends DevWorld = DevWorld> = Omit<AgentDefinition<Input, Deps, World>, 'tools'> & {
  /**
   * The tools: an array of `defineTool(…)`s, or `(defineTool) => [defineTool(…), …]`, whose
   * `defineTool` types each tool's `deps` as the agent's `deps` returns them (declare `deps` before
   * `tools`).
   */
  readonly tools: readonly ToolDefinition<any, Input, Deps>[] | ((defineTool: ToolDefiner<Input, Deps>) => readonly ToolDefinition<any, Input, Deps>[]);
};

/**
 * Declares an agent. Invalid combinations fail here, naming the field, not in the middle of a run.
 *
 * @example
 * ```ts
 * import * as z from 'zod';
 * import { defineAgent, JsonHttpClient } from 'savepoint';
 *
 * export default defineAgent({
 *   name: 'refunds',
 *   model: 'anthropic:claude-haiku-4-5',
 *   system: 'You issue refunds.',
 *   input: z.object({ day: z.string() }),
 *   prompt: (input) => `Refund what was asked for on ${input.day}.`,
 *   env: ['PAYMENTS_API_URL'],
 *   deps: (env, { fetch }) => ({ payments: new JsonHttpClient({ baseUrl: env['PAYMENTS_API_URL']!, fetch }) }),
 *   tools: (defineTool) => [
 *     defineTool({
 *       name: 'refund',
 *       description: 'Refunds a payment.',
 *       input: z.object({ paymentId: z.string() }),
 *       effect: 'write',
 *       idempotencyKeys: true,
 *       // deps is what `deps` returns: no generics needed.
 *       execute: (args, { deps, idempotencyKey }) => deps.payments.post('/refunds', z.object({ id: z.string() }), { body: args, idempotencyKey }),
 *     }),
 *   ],
 * });
 * ```
 */
export function defineAgent<Input, Deps = undefined, World extends DevWorld = DevWorld>(
  spec: AgentSpec<Input, Deps, World>,
): AgentDefinition<Input, Deps, World> {
  const agent: AgentDefinition<Input, Deps, World> = typeof spec.tools === 'function' ? { ...spec, tools: spec.tools(defineTool) } : (spec as AgentDefinition<Input, Deps, World>);
  if (!AGENT_NAME.test(agent.name)) throw new Error(`defineAgent: name ${JSON.stringify(agent.name)} must match ${AGENT_NAME}`);
  checkShapes(agent);
  // Every turn sends it: Anthropic and Bedrock refuse an empty system prompt at the first model call.
  if (typeof agent.system !== 'string' || agent.system.trim() === '') throw new Error(`defineAgent ${agent.name}: system must be a prompt the model is given, got ${JSON.stringify(agent.system)}`);
  // A misspelt cap would be no cap at all: the run would move any amount without a person.
  const approvals: unknown = agent.approvals;
  if (approvals !== undefined) {
    if (typeof approvals !== 'object' || approvals === null) throw new Error(`defineAgent ${agent.name}: approvals must be { maxUnapprovedPerRun }, got ${shownValue(approvals)}`);
    const unknown = Object.keys(approvals).find((key) => key !== 'maxUnapprovedPerRun');
    if (unknown !== undefined) throw new Error(`defineAgent ${agent.name}: approvals: ${JSON.stringify(unknown)} is no setting (the one is maxUnapprovedPerRun, in minor units): a misspelt cap would be no cap`);
  }
  const cap = agent.approvals?.maxUnapprovedPerRun;
  if (cap !== undefined && !(Number.isSafeInteger(cap) && cap >= 0)) throw new Error(`defineAgent ${agent.name}: approvals.maxUnapprovedPerRun must be a whole number of minor units ≥ 0, got ${cap}`);
  for (const field of ['model', 'fallbackModel'] as const) {
    const spec = agent[field];
    if (spec === undefined && field === 'fallbackModel') continue;
    try {
      parseModelSpec(spec as string);
    } catch (error) {
      throw new Error(`defineAgent ${agent.name}: ${field}: ${(error as Error).message}`);
    }
  }
  if (agent.prices !== undefined) {
    try {
      priceTable(agent.prices);
    } catch (error) {
      throw new Error(`defineAgent ${agent.name}: prices: ${(error as Error).message}`);
    }
  }
  if (agent.fallbackModel === agent.model) throw new Error(`defineAgent ${agent.name}: fallbackModel must differ from model (${agent.model})`);
  if (agent.contextWindow !== undefined && !(Number.isInteger(agent.contextWindow) && agent.contextWindow >= 1_000)) {
    throw new Error(`defineAgent ${agent.name}: contextWindow must be a whole number of tokens ≥ 1000, got ${agent.contextWindow}`);
  }
  const share = agent.compaction?.share;
  if (share !== undefined && !(share > 0 && share < 1)) throw new Error(`defineAgent ${agent.name}: compaction.share must be between 0 and 1, got ${share}`);
  const keepRecent = agent.compaction?.keepRecentTurns;
  if (keepRecent !== undefined && !(Number.isSafeInteger(keepRecent) && keepRecent >= 0)) {
    throw new Error(`defineAgent ${agent.name}: compaction.keepRecentTurns must be a whole number of turns ≥ 0, got ${keepRecent}`);
  }
  // Compaction is measured against the window: without one, the settings were silently never used.
  if (agent.compaction !== undefined && agent.contextWindow === undefined) {
    throw new Error(`defineAgent ${agent.name}: compaction needs contextWindow (the model's context window in tokens, which compaction.share is a share of): without it nothing is ever compacted`);
  }
  if (agent.version !== undefined && !(typeof agent.version === 'string' && agent.version.trim() !== '')) {
    throw new Error(`defineAgent ${agent.name}: version must name this version of the agent (it is part of the fingerprint that guards resumes), got ${JSON.stringify(agent.version)}`);
  }
  const perTurn = agent.budgets?.maxTokensPerTurn;
  if (perTurn !== undefined && !(Number.isInteger(perTurn) && perTurn > 0 && perTurn <= MAX_TOKENS_PER_TURN)) {
    throw new Error(`defineAgent ${agent.name}: budgets.maxTokensPerTurn must be a whole number from 1 to ${MAX_TOKENS_PER_TURN} (what a model can write within the longest model timeout, ${MAX_MODEL_TIMEOUT_MS} ms), got ${perTurn}`);
  }
  for (const name of agent.env ?? []) {
    if (!LAMBDA_ENVIRONMENT_NAME.test(name)) throw new Error(`defineAgent ${agent.name}: env: ${JSON.stringify(name)} is not an environment variable name Lambda takes (a letter, then at least one letter, digit or _)`);
  }
  // The agent's budgets are every run's config: a bad one fails here, naming `budgets`, not each run's start as "invalid run config".
  const budgets = RunConfig().partial().safeParse(agent.budgets ?? {});
  if (!budgets.success) throw new Error(`defineAgent ${agent.name}: budgets: ${z.prettifyError(budgets.error).replaceAll('\n', ' ')}`);
  checkMaxBudgets(agent);
  checkLoops(agent.name, agent.loops);
  if (agent.tools.length === 0) throw new Error(`defineAgent ${agent.name}: tools: an agent needs at least one tool`);
  if (agent.compatibleWith !== undefined) {
    if (agent.version === undefined) throw new Error(`defineAgent ${agent.name}: compatibleWith needs a version of its own (set \`version\`)`);
    for (const earlier of agent.compatibleWith) {
      if (typeof earlier !== 'string' || earlier.length === 0 || earlier === agent.version) {
        throw new Error(`defineAgent ${agent.name}: compatibleWith: ${JSON.stringify(earlier)} must name an earlier version, not ${JSON.stringify(agent.version)} itself`);
      }
    }
  }
  const names = new Set<string>();
  for (const [index, tool] of agent.tools.entries()) {
    // A tool written as an object literal is a ToolDefinition too: it gets defineTool's checks here, not a provider's refusal at the first model call.
    try {
      defineTool(tool);
    } catch (error) {
      throw new Error(`defineAgent ${agent.name}: tools[${index}]: ${(error as Error).message}`, { cause: error });
    }
    if (names.has(tool.name)) throw new Error(`defineAgent ${agent.name}: tools: two tools are named ${tool.name}`);
    names.add(tool.name);
  }
  return agent;
}

/**
 * The fields a run calls or parses have the shape they are used in. An agent module is run by the
 * CLI without a type check, so a shape given for a schema (`input: { day: z.string() }`) or a
 * prompt given as text fails here, naming the field, not at the first run as `schema.safeParse is
 * not a function`, or as a module that "exports no agent".
 */
function checkShapes(agent: AgentDefinition<any, any, any>): void {
  const fail = (field: string, expected: string, got: unknown): never => {
    throw new Error(`defineAgent ${agent.name}: ${field} must be ${expected}, got ${shownValue(got)}`);
  };
  if (typeof (agent.input as { safeParse?: unknown } | undefined)?.safeParse !== 'function') fail('input', "a zod schema of the run's input (z.object({ … }))", agent.input);
  if (typeof agent.prompt !== 'function') fail('prompt', "a function from the run's input to its first user message ((input) => `…`)", agent.prompt);
  if (!Array.isArray(agent.tools)) fail('tools', 'an array of defineTool(…)s, or (defineTool) => [defineTool(…), …]', agent.tools);
  for (const field of ['deps', 'runId', 'scheduled', 'report', 'redactTrace'] as const) {
    if (agent[field] !== undefined && typeof agent[field] !== 'function') fail(field, 'a function', agent[field]);
  }
  if (agent.env !== undefined && !Array.isArray(agent.env)) fail('env', "an array of the environment variables' names deps reads (['PAYMENTS_API_URL'])", agent.env);
}

/** `maxBudgets` is a cap the agent's own budgets stay within. */
function checkMaxBudgets(agent: Pick<AgentDefinition, 'name' | 'budgets' | 'maxBudgets'>): void {
  if (agent.maxBudgets === undefined) return;
  const parsed = BudgetCaps().safeParse(agent.maxBudgets);
  if (!parsed.success) throw new Error(`defineAgent ${agent.name}: maxBudgets: ${z.prettifyError(parsed.error).replaceAll('\n', ' ')}`);
  for (const [budget, cap] of Object.entries(parsed.data)) {
    const own = agent.budgets?.[budget as keyof BudgetCaps];
    if (own !== undefined && cap !== undefined && own > cap) throw new Error(`defineAgent ${agent.name}: budgets.${budget} (${own}) is above maxBudgets.${budget} (${cap})`);
  }
}

function checkLoops(name: string, loops: LoopOptions | undefined): void {
  if (loops === undefined) return;
  const whole = (field: 'window' | 'warnAt' | 'repeats' | 'cycleLength', min: number, max: number) => {
    const value = loops[field];
    if (value !== undefined && !(Number.isInteger(value) && value >= min && value <= max)) throw new Error(`defineAgent ${name}: loops.${field} must be a whole number from ${min} to ${max}, got ${value}`);
  };
  whole('window', 2, 100);
  whole('warnAt', 1, 100);
  whole('repeats', 2, 100);
  whole('cycleLength', 2, 50);
  if (loops.onLoop !== undefined && loops.onLoop !== 'stop' && loops.onLoop !== 'ask') throw new Error(`defineAgent ${name}: loops.onLoop must be 'stop' or 'ask', got ${JSON.stringify(loops.onLoop)}`);
  const { warnAt = 3, repeats = 5, window = 5 } = loops;
  // The model is warned before any trip, and a trip must fit in the window.
  if (warnAt >= repeats) throw new Error(`defineAgent ${name}: loops.warnAt (${warnAt}) must be below loops.repeats (${repeats}): the model is warned before the detector trips`);
  if (repeats > window) throw new Error(`defineAgent ${name}: loops.repeats (${repeats}) must fit in loops.window (${window})`);
}

/**
 * The agent with its local-only parts, for its dev module: the CLI finds `my-agent.dev.ts` beside
 * `my-agent.ts` and runs this instead; a deployment bundles `my-agent.ts` alone, so no Lambda
 * function carries the simulator, the scripted model or their dependencies.
 *
 * @example
 * ```ts
 * // my-agent.dev.ts
 * import { withDev } from 'savepoint';
 * import agent from './my-agent.js';
 * import { startWorld } from './sim/world.js';
 *
 * export default withDev(agent, { world: startWorld, policy: (request) => ({ content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' }) });
 * ```
 */
export function withDev<Input, Deps, World extends DevWorld = DevWorld>(
  agent: AgentDefinition<Input, Deps, any>,
  dev: AgentDev<World>,
): AgentDefinition<Input, Deps, World> {
  // Run by the CLI without a type check: a wrong part would otherwise be found mid-run (a string
  // `checkData` when a data file is given), or as a local run that has no model.
  const wrong = notAnAgent(agent);
  if (wrong !== undefined) throw new Error(`withDev: agent: ${wrong}`);
  if (agent.dev) throw new Error(`withDev ${agent.name}: the agent already has dev parts`);
  if (typeof dev !== 'object' || dev === null) throw new Error(`withDev ${agent.name}: dev must be { world, checkData, policy }, got ${shownValue(dev)}`);
  const expected = { world: 'a function that starts the world', checkData: 'a function (path) => void that throws to refuse a world data file', policy: 'a function from a request to the next turn' } as const;
  for (const [field, shape] of Object.entries(expected)) {
    const value = dev[field as keyof typeof expected];
    if (value !== undefined && typeof value !== 'function') throw new Error(`withDev ${agent.name}: ${field} must be ${shape}, got ${shownValue(value)}`);
  }
  return { ...agent, dev };
}
