import { createHash } from 'node:crypto';
import * as z from 'zod';
import type { MessageRequest, MessageResponse } from './records/messages.js';
import { BudgetCaps, type RunConfig, type ToolCallRecord, type TurnRecord } from './records/ledger-records.js';
import { priceTable, type Price } from './models/prices.js';
import { parseModelSpec } from './models/spec.js';
import { MAX_MODEL_TIMEOUT_MS, MAX_TOKENS_PER_TURN } from './shared/timing.js';

/**
 * The public shape of an agent: tools with zod inputs and an effect kind, a prompt, a model,
 * budgets and approval rules, in one module of the user's own. The harness (steps, ledger, guards,
 * approvals, recovery, the engines) imports none of it: it receives an `AgentDefinition` and reads
 * only what is declared here.
 */

/** What a tool does to the world. */
export type Effect =
  /** Safe to repeat: a lookup. Retried freely; its result goes back to the model. */
  | 'read'
  /**
   * Changes the world (pays, sends, files). Claimed in the ledger before it runs, called with an
   * idempotency key derived from (run, turn, tool call id) — never the attempt — and recorded.
   */
  | 'write';

/** What a person must see to decide a tool call that needs approval. */
export interface ApprovalRequest {
  /** One line: what the agent wants to do. */
  readonly summary: string;
  /** The money at stake, if any, in minor units (cents). */
  readonly amount?: { readonly minor: number; readonly currency: string };
  /** More facts for the approval page (the arguments in words, the evidence). */
  readonly details?: Readonly<Record<string, string | number | boolean>>;
}

/** What a tool's approval rule and `execute` may know about the run. */
export interface RunView<Input = unknown> {
  readonly runId: string;
  readonly input: Input;
  readonly config: RunConfig;
}

/** What a run already did, as its ledger recorded it: what an approval rule may weigh besides the call. */
export interface RunFacts {
  /**
   * The run's completed tool calls of earlier turns, in conversation order (arguments as parsed
   * and recorded), then the calls of this call's own turn before it: the model asked for those
   * together with this one and they run alongside it, so they have no `outcome` (a rule that sums
   * what was paid counts them as paid).
   */
  readonly calls: readonly FactCall[];
}

/**
 * One call among a rule's facts: its arguments as the model wrote them (parsed by the tool's
 * schema) and, for a completed `read` call that answered `ok`, the `result` its provider returned,
 * parsed from what the ledger sealed (what the model was shown: a result cut by `maxResultTokens`
 * is its cut form). A rule checks the model's arguments against it: a refund's request must be one
 * the provider listed, for the payment it pays. A write's result is not a fact a rule may lean on.
 */
export interface FactCall extends Pick<ToolCallRecord, 'turn' | 'call' | 'name' | 'args' | 'outcome'> {
  readonly result?: unknown;
}

/** Everything a tool call gets besides its arguments. */
export interface ToolContext<Input = unknown, Deps = unknown> extends RunView<Input> {
  /** The same for every attempt, every resume and every engine: `<runId>:<turn>:<toolCallId>`. */
  readonly idempotencyKey: string;
  /**
   * Aborted when the attempt must end — the tool's `timeoutMs` passed, the run's wall-clock budget
   * ran out, or the step ran out of time (its `reason` says which): pass it to outbound calls.
   */
  readonly signal?: AbortSignal;
  readonly turn: number;
  readonly call: number;
  /** The clients the agent declared (`AgentDefinition.deps`), built once per container. */
  readonly deps: Deps;
}

/** What a tool's `idempotencyKey` may read besides the arguments: the run and where in it the call is. */
export interface EffectKeyContext<Input = unknown> extends RunView<Input> {
  readonly turn: number;
  readonly call: number;
}

/** What `reconcile` learned from the provider about an earlier attempt of a claimed call. */
export type ReconcileAnswer = { readonly found: true; readonly result: unknown } | { readonly found: false };

export interface ToolDefinition<Args = any, Input = any, Deps = any> {
  readonly name: string;
  readonly description: string;
  /** Validates the model's arguments before anything is claimed or sent. */
  readonly input: z.ZodType<Args>;
  readonly effect: Effect;
  /**
   * The provider deduplicates requests on the idempotency key (as payment APIs do): a re-sent
   * call returns the first result. @default false
   */
  readonly idempotencyKeys?: boolean;
  /**
   * For `write` tools whose provider has no idempotency keys (most mail, chat and ticketing APIs):
   * asked first when a claimed call is found in flight after a crash or a failed attempt — did the
   * earlier attempt take effect? A found result is recorded instead of calling again.
   */
  readonly reconcile?: (args: Args, context: ToolContext<Input, Deps>) => Promise<ReconcileAnswer>;
  /**
   * Names the call's effect by what it is — a business key, e.g. the refund request id — instead
   * of by where a run asked for it. The ledger then claims `<agent>:<tool>:<key>` once across all
   * the agent's runs (two runs of the same day, a re-run, two identical calls in one turn are one
   * effect), and sends it as the idempotency key. A claim held by another call: completed → its
   * recorded result is this call's, nothing is sent; in flight in a live run → this call waits
   * (Agent.LeaseHeld), never sends; in flight in a dead run → taken over once its lease (and
   * `settleMs`) ended, reconciled or re-sent under the same key with the holder's arguments;
   * rejected by a person or refused by the provider → no claim. The whole key is at most 255
   * characters. `write` tools only.
   * @default `<runId>:<turn>:<toolCallId>` (one effect per call of one run)
   * @example idempotencyKey: (args) => args.refundRequestId
   */
  readonly idempotencyKey?: (args: Args, context: EffectKeyContext<Input>) => string;
  /**
   * For a tool with `reconcile`: how long after receiving a request its provider may take to show
   * it (commit it to what `reconcile` reads). A call whose outcome is unknown is reconciled no
   * sooner than this after its request was sent (recorded on its claim), and sent again only if
   * `reconcile` then answers "not found": sooner, it could miss a committed request. The state
   * machine waits it out (Agent.SettleWait, a Wait state), on every engine alike. At most 300000.
   * @default none: reconciled once the tool's timeout from the send has passed; a call not found
   * then is escalated to a person, never sent again (nothing says the provider would show it)
   */
  readonly settleMs?: number;
  /**
   * For a tool with `reconcile`: how many times one call may be reconciled. A call still
   * undecided after that (`reconcile` kept failing, or the provider kept losing its answer) is
   * escalated to a person — recorded as an `outcome_unknown` error the model is told not to retry,
   * and a guard event on the run — and never sent again. 1 to 10.
   * @default 3
   */
  readonly maxReconciles?: number;
  /**
   * Returns what a person must see when this call must wait for approval, or nothing. Its policy
   * (thresholds, limits) belongs in the agent's definition or its deployment, never in the run's
   * input: whoever starts a run writes the input. `facts` is what the run already did, from its
   * ledger, so a rule can weigh a call against earlier ones (a running total, a count). `deps` is
   * what the agent's `deps` built, the same object `execute` gets, so a rule can look something
   * up (a limit per customer, a list of accounts that always need a person). The rule is asked
   * more than once for one call (when the call is planned, when a person is asked, when it runs)
   * and must answer the same each time: it is synchronous, and what it reads in `deps` must not
   * change under a run (read once when `deps` are built, not from a live service per call).
   * @example
   * needsApproval: (args, _run, facts) => {
   *   const paid = facts.calls.filter((c) => c.name === 'pay' && (c.outcome ?? 'ok') === 'ok' && c.args['invoice'] === args.invoice); // no outcome: running alongside
   *   const total = paid.reduce((sum, c) => sum + Number(c.args['cents']), args.cents);
   *   return total > LIMIT_CENTS ? { summary: `pay ${args.cents} (${total} in all)` } : undefined;
   * }
   */
  readonly needsApproval?: (args: Args, run: RunView<Input>, facts: RunFacts, deps: Deps) => ApprovalRequest | undefined;
  /**
   * For a `write` tool that moves an amount: what it moves and the key the amounts add up by (the
   * payment, the customer — from the arguments). The harness adds up the amounts per key over the
   * run (every earlier call of this tool, the calls of the same turn alongside it counted as made)
   * and, above `threshold`, holds the call for a person whatever `needsApproval` says: splitting an
   * amount into parts, or under other keys the rule checks, cannot slip under it. Across the
   * agent's runs the total is reserved in the ledger (`AGG#<agent>:<tool>:<key>`) with a
   * conditional write before the call is sent: a call that would take the total past the
   * threshold without a person's approval is not sent (the model is told `approval_required`), so
   * two runs racing cannot each stay under it. An approved call is added without the threshold.
   * @example aggregate: { key: (args) => args.paymentId, amount: (args) => args.amountCents, threshold: 50_000, currency: 'usd' }
   */
  readonly aggregate?: ToolAggregate<Args>;
  /** The call in words, for traces and approval pages. @default the name and the arguments as JSON */
  readonly describe?: (args: Args) => string;
  /**
   * How long one attempt of the call may take, in milliseconds (`reconcile` and `execute`
   * together). When it passes, the `signal` in the tool's context is aborted and the attempt ends,
   * whether or not the tool listens: a timed-out `read` is answered to the model as an error
   * result; a timed-out `write` may have taken effect, so it goes the way of an unknown outcome
   * (see `execute`). The claim of a `write` is leased for longer than this, and the deployed
   * CallTool function's timeout derives from the longest of an agent's tools (`maxToolTimeoutMs`).
   * @default 20000 (DEFAULT_TOOL_TIMEOUT_MS)
   */
  readonly timeoutMs?: number;
  /**
   * The most of a result the model is shown, in tokens. A longer result is cut: the model sees
   * `{ truncated: true, bytes, head, stored }` — the head of the result's JSON, and where the whole
   * of it is stored (by reference, in the ledger). The cut counts UTF-8 bytes, which no tokenizer
   * exceeds, so the model never sees more tokens than this. Without it the model sees every result
   * whole; the pre-call budget reservation still keeps a huge one from overspending (the call that
   * would carry it is not sent).
   * @default no limit
   */
  readonly maxResultTokens?: number;
  /**
   * The call itself. Its result (JSON-serializable) is recorded and goes back to the model. Pass
   * `context.signal` to outbound calls. What it throws:
   * - an error of `savepoint`'s own (`TransientError`: retried; `InvalidInputError`: the model is
   *   told why the provider refused; `TerminalError`: the run fails) means what its name says;
   * - anything else (a plain `Error`) from a `read` is answered to the model as an error result
   *   with the message, so it can correct itself;
   * - anything else from a `write`, or an `OutcomeUnknownError` (sent, no answer), is an unknown
   *   outcome — it may have taken effect: with `reconcile` the retry asks it first (after the
   *   settle time), with `idempotencyKeys` the retry re-sends the same key; a write with neither
   *   is escalated to a person, answered to the model as `outcome_unknown`, never sent again.
   */
  readonly execute: (args: Args, context: ToolContext<Input, Deps>) => Promise<unknown>;
}

/** An amount a write tool moves, added up by a key (ToolDefinition.aggregate). */
export interface ToolAggregate<Args = any> {
  /** What the amounts add up by, from the arguments: e.g. the payment id or the customer id. */
  readonly key: (args: Args) => string;
  /** What this call moves, in minor units (a non-negative integer). */
  readonly amount: (args: Args) => number;
  /** Above this total for one key (this call included), the call waits for a person. */
  readonly threshold: number;
  /** The amounts' currency, for the approval page. @default none */
  readonly currency?: string;
}


/**
 * How far a tool's side effect is guaranteed to happen once, when an attempt's answer is lost:
 * - `exactly-once`: re-sent under the same idempotency key (the provider deduplicates), or — for a
 *   tool with `reconcile` and a declared `settleMs` — re-sent only once the settle time from the
 *   send has passed and `reconcile` answered "not found";
 * - `at-most-once`: never sent again while its outcome is unknown: `reconcile` (without a
 *   declared `settleMs`) may find it, else a person decides (the call is escalated);
 * - `at-least-once`: kept for calls recorded before at-most-once became the default of a write
 *   with neither keys nor `reconcile`.
 */
export type Guarantee = 'read' | 'exactly-once' | 'at-most-once' | 'at-least-once';

export function guaranteeOf(tool: Pick<ToolDefinition, 'effect' | 'idempotencyKeys' | 'reconcile' | 'settleMs'>): Guarantee {
  if (tool.effect === 'read') return 'read';
  return tool.idempotencyKeys || (tool.reconcile && tool.settleMs !== undefined) ? 'exactly-once' : 'at-most-once';
}

/**
 * The condition a tool's guarantee holds under, in words (status and the console print it beside
 * the guarantee): what the harness relies on the provider for.
 */
export function guaranteeCondition(tool: Pick<ToolDefinition, 'effect' | 'idempotencyKeys' | 'reconcile' | 'idempotencyKey' | 'settleMs' | 'timeoutMs'>): string {
  if (tool.effect === 'read') return 'repeating it changes nothing';
  const scope = tool.idempotencyKey ? 'across runs, by its business key' : 'within a run';
  if (tool.idempotencyKeys) return `${scope}, if the provider deduplicates on the idempotency key`;
  if (tool.reconcile && tool.settleMs !== undefined) {
    return `${scope}, if the provider shows a committed request within ${tool.settleMs} ms of receiving it (settleMs); a lost answer is reconciled that long after the send, and sent again only if not found`;
  }
  if (tool.reconcile) {
    return `${scope}: a lost answer is reconciled ${settleMsOf(tool)} ms after the send (the tool timeout); found, it is recorded; else escalated to a person, never sent again (declare settleMs to re-send after "not found")`;
  }
  return `${scope}: a call whose answer is lost is escalated to a person, never sent again`;
}

/**
 * How long after a request of `tool` was sent its provider shows what it committed (protocol.ts
 * `takeoverAfter`): its `settleMs`, or by default its timeout (the time one attempt may take). The
 * same on every engine, on the run's clock: a local engine waits it out as AWS does.
 */
export function settleMsOf(tool: Pick<ToolDefinition, 'settleMs' | 'timeoutMs'>): number {
  return tool.settleMs ?? toolTimeoutMs(tool);
}

/** A call claimed again is reconciled at most this many times (`maxReconciles`), then escalated. */
export const DEFAULT_MAX_RECONCILES = 3;
/** The longest `settleMs` a tool may declare. */
export const MAX_SETTLE_MS = 300_000;

/** A tool call as the ledger recorded it, with its parsed arguments: what `report` reads. */
export type ToolTrace = Pick<ToolCallRecord, 'turn' | 'call' | 'name' | 'args' | 'status' | 'outcome' | 'result' | 'effect'>;

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

const AGENT_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** A tool's timeout when it sets none: what most HTTP APIs answer well within. */
export const DEFAULT_TOOL_TIMEOUT_MS = 20_000;
/** The longest a tool may set: Lambda's 15 minutes, less room for the step's own ledger work. */
export const MAX_TOOL_TIMEOUT_MS = 840_000;

/** How long one attempt of `tool` may take (its `timeoutMs`, or the default). */
export function toolTimeoutMs(tool: Pick<ToolDefinition, 'timeoutMs'>): number {
  return tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
}

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
export const ToolTimeoutEnvironment = z.object({ TOOL_TIMEOUT_MS: z.coerce.number().int().positive() });

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

/** Declares a tool. Checks what can be checked before any run: the name and the effect. */
export function defineTool<Args, Input = any, Deps = any>(tool: ToolDefinition<Args, Input, Deps>): ToolDefinition<Args, Input, Deps> {
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) throw new Error(`defineTool: name ${JSON.stringify(tool.name)} must be 1-64 letters, digits, "_" or "-"`);
  if (tool.effect !== 'read' && tool.effect !== 'write') throw new Error(`defineTool ${tool.name}: effect must be 'read' or 'write', got ${JSON.stringify(tool.effect)}`);
  if (tool.aggregate && tool.effect !== 'write') throw new Error(`defineTool ${tool.name}: aggregate is for write tools (a read moves nothing)`);
  if (tool.aggregate && !(Number.isSafeInteger(tool.aggregate.threshold) && tool.aggregate.threshold >= 0)) {
    throw new Error(`defineTool ${tool.name}: aggregate.threshold must be a whole number of minor units ≥ 0, got ${tool.aggregate.threshold}`);
  }
  if (tool.timeoutMs !== undefined && !(Number.isInteger(tool.timeoutMs) && tool.timeoutMs >= 1 && tool.timeoutMs <= MAX_TOOL_TIMEOUT_MS)) {
    throw new Error(`defineTool ${tool.name}: timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TOOL_TIMEOUT_MS}, got ${tool.timeoutMs}`);
  }
  if (tool.maxResultTokens !== undefined && !(Number.isInteger(tool.maxResultTokens) && tool.maxResultTokens >= 256)) {
    throw new Error(`defineTool ${tool.name}: maxResultTokens must be a whole number of tokens ≥ 256, got ${tool.maxResultTokens}`);
  }
  if (tool.reconcile && tool.effect !== 'write') throw new Error(`defineTool ${tool.name}: reconcile only makes sense for a 'write' tool`);
  if (tool.idempotencyKey !== undefined && (tool.effect !== 'write' || typeof tool.idempotencyKey !== 'function')) {
    throw new Error(`defineTool ${tool.name}: idempotencyKey must be a function (args, context) => string of a 'write' tool`);
  }
  for (const field of ['settleMs', 'maxReconciles'] as const) {
    const value = tool[field];
    if (value === undefined) continue;
    if (!tool.reconcile) throw new Error(`defineTool ${tool.name}: ${field} only applies to a tool with reconcile`);
    const [min, max] = field === 'settleMs' ? [0, MAX_SETTLE_MS] : [1, 10];
    if (!(Number.isInteger(value) && value >= min && value <= max)) throw new Error(`defineTool ${tool.name}: ${field} must be a whole number from ${min} to ${max}, got ${value}`);
  }
  // Duck-typed: the agent's own copy of zod is as good as ours.
  if (typeof (tool.input as { safeParse?: unknown } | undefined)?.safeParse !== 'function') throw new Error(`defineTool ${tool.name}: input must be a zod schema`);
  return tool;
}

/** Declares an agent. Invalid combinations fail here, naming the field, not in the middle of a run. */
export function defineAgent<Input, Deps = undefined, World extends DevWorld = DevWorld>(
  agent: AgentDefinition<Input, Deps, World>,
): AgentDefinition<Input, Deps, World> {
  if (!AGENT_NAME.test(agent.name)) throw new Error(`defineAgent: name ${JSON.stringify(agent.name)} must match ${AGENT_NAME}`);
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
  const perTurn = agent.budgets?.maxTokensPerTurn;
  if (perTurn !== undefined && !(Number.isInteger(perTurn) && perTurn > 0 && perTurn <= MAX_TOKENS_PER_TURN)) {
    throw new Error(`defineAgent ${agent.name}: budgets.maxTokensPerTurn must be a whole number from 1 to ${MAX_TOKENS_PER_TURN} (what a model can write within the longest model timeout, ${MAX_MODEL_TIMEOUT_MS} ms), got ${perTurn}`);
  }
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
  for (const tool of agent.tools) {
    if (names.has(tool.name)) throw new Error(`defineAgent ${agent.name}: tools: two tools are named ${tool.name}`);
    names.add(tool.name);
  }
  return agent;
}

/** `maxBudgets` is a cap the agent's own budgets stay within. */
function checkMaxBudgets(agent: Pick<AgentDefinition, 'name' | 'budgets' | 'maxBudgets'>): void {
  if (agent.maxBudgets === undefined) return;
  const parsed = BudgetCaps.safeParse(agent.maxBudgets);
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
  if (agent.dev) throw new Error(`withDev ${agent.name}: the agent already has dev parts`);
  if (dev.world !== undefined && typeof dev.world !== 'function') throw new Error(`withDev ${agent.name}: world must be a function that starts the world`);
  if (dev.policy !== undefined && typeof dev.policy !== 'function') throw new Error(`withDev ${agent.name}: policy must be a function from a request to the next turn`);
  return { ...agent, dev };
}

/** The tool list in the shape of a messages API request (`tools: [{ name, description, input_schema }]`). */
export function toolSpecs(agent: Pick<AgentDefinition, 'tools'>): { name: string; description: string; input_schema: Record<string, unknown> }[] {
  return agent.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: inputSchemaOf(tool) }));
}

/**
 * A tool's input as JSON Schema, converted once per tool: every model turn sends the tool list,
 * and converting a zod schema costs more than the rest of the request. Frozen, since it is shared.
 */
const inputSchemas = new WeakMap<ToolDefinition, Readonly<Record<string, unknown>>>();
function inputSchemaOf(tool: ToolDefinition): Record<string, unknown> {
  let schema = inputSchemas.get(tool);
  if (schema === undefined) {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
    schema = deepFreeze(rest);
    inputSchemas.set(tool, schema);
  }
  return schema as Record<string, unknown>;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** The names of the agent's tools (computed once per agent). */
export function toolNames(agent: Pick<AgentDefinition, 'tools'>): ReadonlySet<string> {
  let names = toolNameSets.get(agent.tools);
  if (names === undefined) toolNameSets.set(agent.tools, (names = new Set(agent.tools.map((tool) => tool.name))));
  return names;
}
const toolNameSets = new WeakMap<readonly ToolDefinition[], ReadonlySet<string>>();

export function findTool(agent: Pick<AgentDefinition, 'tools'>, name: string): ToolDefinition | undefined {
  return agent.tools.find((tool) => tool.name === name);
}

/**
 * What a run is bound to: the agent's name, version, prompt, model, tool schemas and effects, and
 * the price table. A resume on a different fingerprint would continue a conversation with an agent
 * that did not start it.
 */
export function agentFingerprint(agent: AgentDefinition, codeVersion: string, priceTableVersion: string): string {
  const material = JSON.stringify({
    codeVersion,
    agent: agent.name,
    version: agent.version ?? '',
    system: agent.system,
    model: agent.model,
    fallbackModel: agent.fallbackModel,
    // A business key changes which calls are one effect (undefined, and so left out, when there is none).
    tools: toolSpecs(agent).map((spec, index) => ({ ...spec, effect: agent.tools[index]!.effect, businessKey: agent.tools[index]!.idempotencyKey?.toString() })),
    prices: priceTableVersion,
    // Only when set, so that the fingerprints of agents without compaction do not change.
    ...(agent.contextWindow && {
      compaction: {
        contextWindow: agent.contextWindow,
        share: agent.compaction?.share,
        keepRecentTurns: agent.compaction?.keepRecentTurns,
        instructions: agent.compaction?.instructions,
        keep: agent.compaction?.keep?.toString(),
      },
    }),
  });
  return createHash('sha256').update(material).digest('hex').slice(0, 16);
}

/** The default run id: the agent's name and a hash of the input, so that the same input is the same run. */
export function defaultRunId(agent: Pick<AgentDefinition, 'name'>, input: unknown): string {
  return `${agent.name}-${createHash('sha256').update(stableJson(input)).digest('hex').slice(0, 12)}`;
}

/** JSON with object keys sorted: equal values, equal text. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
