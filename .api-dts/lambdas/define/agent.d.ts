import * as z from 'zod';
import type { MessageRequest, MessageResponse } from '../records/messages.js';
import { BudgetCaps, type RunConfig, type ToolCallRecord, type TurnRecord } from '../records/ledger-records.js';
import { type Price } from '../models/prices.js';
import { type ToolDefinition, type ToolTrace } from './tool.js';
/**
 * An agent: its definition (prompt, model, tools, budgets, loop and compaction settings), its
 * local-only parts (the simulated world, the scripted model), its declaration (`defineAgent`,
 * `withDev`) and how its tools' timeouts fit the stack.
 */
/** The budgets an agent may set defaults for (a run's input may still override them). */
export type Budgets = Partial<Omit<RunConfig, 'onBudgetExceeded' | 'budgetExtensionPercent'>> & Partial<Pick<RunConfig, 'onBudgetExceeded' | 'budgetExtensionPercent'>>;
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
    inspect?(): Promise<{
        lines: string[];
        json: unknown;
    }>;
    close(): Promise<void>;
}
/** What the harness hands an agent's `deps` besides the environment. */
export interface DepsContext {
    /** The fetch for the tools' HTTP clients. */
    readonly fetch: typeof fetch;
}
export interface DevWorldOptions {
    /** Where the world keeps its records across restarts; in memory when absent. */
    readonly stateDir?: string;
    /** A data file the world serves (e.g. the day of refund requests), when the agent has one. */
    readonly dataFile?: string;
    /** Transient failures injected into the world's responses, per request. */
    readonly failRate: number;
    readonly seed: number;
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
export interface AgentDefinition<Input = any, Deps = any, World extends DevWorld = DevWorld> {
    /** Names the agent in runs, stacks and the CLI: lowercase letters, digits and dashes. */
    readonly name: string;
    /** `provider:model-id`, e.g. `sim:savepoint-sim-1`, `anthropic:claude-sonnet-4-5`. */
    readonly model: string;
    /**
     * Where turns go while the model's provider is down (its circuit breaker open), e.g.
     * `bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0` behind `anthropic:claude-sonnet-4-5`.
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
    readonly system: string;
    /** Validates a run's input (the CLI's `--input`, `StartExecution`'s `input`). */
    readonly input: z.ZodType<Input>;
    /** The first user message of a run. */
    readonly prompt: (input: Input) => string;
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
    /** Defaults for this agent's budgets. */
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
    readonly approvals?: {
        readonly maxUnapprovedPerRun?: number;
    };
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
 * The longest timeout of the agent's tools: what the CallTool function's timeout (and a tool
 * claim's lease) must outlast, with room for the step's ledger work (infra/ derives them from it).
 */
export declare function maxToolTimeoutMs(agent: Pick<AgentDefinition, 'tools'>): number;
/**
 * The stack's `toolTimeout` as its functions' environment carries it (TOOL_TIMEOUT_MS, in ms): read
 * by StartRun and CallTool at their cold start on AWS (lambdas/adapters/aws-deps.ts) and by the
 * local stack from the template it deploys (local/runtime/tasks.ts).
 */
export declare const ToolTimeoutEnvironment: z.ZodObject<{
    TOOL_TIMEOUT_MS: z.ZodCoercedNumber<unknown>;
}, z.core.$strip>;
/**
 * Refuses an agent whose tools may wait longer than the stack's `toolTimeout` (TOOL_TIMEOUT_MS):
 * its CallTool function would be killed, and its claims' leases run out, before such a tool answers.
 */
export declare function assertToolsFitTimeout(agent: Pick<AgentDefinition, 'name' | 'tools'>, stackToolTimeoutMs: number | undefined): void;
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
export declare function defineAgent<Input, Deps = undefined, World extends DevWorld = DevWorld>(spec: AgentSpec<Input, Deps, World>): AgentDefinition<Input, Deps, World>;
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
export declare function withDev<Input, Deps, World extends DevWorld = DevWorld>(agent: AgentDefinition<Input, Deps, any>, dev: AgentDev<World>): AgentDefinition<Input, Deps, World>;
