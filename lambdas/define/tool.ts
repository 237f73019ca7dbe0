import * as z from 'zod';
import type { RunConfig, ToolCallRecord } from '../records/ledger-records.js';
import { deepFreeze } from '../shared/plain-copy.js';
import { shownValue } from '../shared/text.js';

/**
 * A tool: what it does to the world, what it is given, the guarantee it gets, its timeout, its
 * declaration (`defineTool`), and the tool list as a model request carries it.
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
  /** The run's id: the idempotency key of the whole run. */
  readonly runId: string;
  /** The run's input, as the agent's `input` schema parsed it. */
  readonly input: Input;
  /** The run's budgets and settings, as it started with them. */
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
  /** What a completed `read` call that answered `ok` returned, parsed from the ledger. @default absent for a write, a failed call or one of this turn */
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
  /** The model turn that asked for this call (1 for the first). */
  readonly turn: number;
  /** The call's place among its turn's calls. */
  readonly call: number;
  /** The clients the agent declared (`AgentDefinition.deps`), built once per container. */
  readonly deps: Deps;
  /**
   * A tool credential the deployment names (the construct's `toolSecrets`: a Secrets Manager
   * secret only CallTool reads; locally the `toolSecrets` option), read at run time and kept for a
   * few minutes. Never put it in the tool's result or arguments: those are recorded.
   * @example const url = await context.secret('CHAT_WEBHOOK_URL');
   */
  readonly secret: (name: string) => Promise<string>;
}

/** What a tool's `idempotencyKey` may read besides the arguments: the run and where in it the call is. */
export interface EffectKeyContext<Input = unknown> extends RunView<Input> {
  /** The model turn that asked for this call. */
  readonly turn: number;
  /** The call's place among its turn's calls. */
  readonly call: number;
}

/** What `reconcile` learned from the provider about an earlier attempt of a claimed call. */
export type ReconcileAnswer = { readonly found: true; readonly result: unknown } | { readonly found: false };

/** A tool, as `defineTool` returns it: what the model may call, and what the harness guarantees of it. */
export interface ToolDefinition<Args = any, Input = any, Deps = any> {
  /** The name the model calls it by: 1-64 letters, digits, `_` or `-`, unique in its agent. */
  readonly name: string;
  /** What the model reads to decide when and how to call it. */
  readonly description: string;
  /** Validates the model's arguments before anything is claimed or sent. */
  readonly input: z.ZodType<Args>;
  /** `read` (no side effect: retried freely) or `write` (claimed in the ledger first, sent once). */
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
   * threshold without a person's approval is not sent but waits for a person, asked with the total
   * across runs, so two runs racing cannot each stay under it. An approved call is added without
   * the threshold; a rejected one is never sent.
   * @example aggregate: { key: (args) => args.paymentId, amount: (args) => args.amountCents, threshold: 50_000, currency: 'usd' }
   */
  readonly aggregate?: ToolAggregate<Args>;
  /**
   * The call in words, for a person deciding it: the approval page's "In words" row, and the summary
   * of a call an `aggregate` holds for approval.
   * @default none: the approval page shows the tool's name and arguments only; an aggregate's summary names the tool
   */
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
   * of it is stored (by reference, `blob:v1:<sha256>:<bytes>`, in the ledger's blobs of the run
   * whose call shows it; nothing gives the model a tool to read it). The cut counts UTF-8 bytes,
   * which no tokenizer exceeds, so the model never sees more tokens than this. Without it the model
   * sees every result whole; the pre-call budget reservation still keeps a huge one from
   * overspending (the call that would carry it is not sent).
   * @default no limit
   */
  readonly maxResultTokens?: number;
  /**
   * The call itself. Its result is recorded as JSON and goes back to the model; nothing
   * (`undefined`) is recorded as `null`. A value with no JSON (a BigInt, a cycle) cannot be
   * recorded: a `read`'s call is answered to the model as an error result, a `write`'s — which
   * ran — is recorded as that error, not sent again, and the run fails. Pass `context.signal` to
   * outbound calls. What it throws:
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
  /** Set by `defineAgentTool`: the tool is another agent, run as a child run. @default a plain tool */
  readonly child?: ChildRunSpec<Args>;
}

/**
 * What makes a tool another agent (`defineAgentTool`): calling it starts a child run of that agent,
 * whose result is the tool's result. The harness reads only this: the agent's name (its state
 * machine), the child's input, and the budget the parent reserves for it.
 */
export interface ChildRunSpec<Args = any> {
  /** The child agent: its `name` names its state machine; locally its whole definition runs the child. */
  readonly agent: { readonly name: string };
  /** The child run's input, from the call's arguments (checked by the child agent's own `input` schema). */
  readonly input: (args: Args) => unknown;
  /** The child's budgets, reserved from the parent's before it starts; what it does not spend returns once it ended (to a parent killed or stopped while the child ran too: the child's end settles it). */
  readonly budget: ChildBudget;
}

/** A child run's dollars and tokens: its run's `maxDollars` and `maxTokens`, reserved from the parent's. */
export interface ChildBudget {
  /** The child run's `maxDollars` (above 0, at most 10,000), reserved from the parent's dollars. */
  readonly maxDollars: number;
  /** The child run's `maxTokens` (a whole number above 0), reserved from the parent's tokens. */
  readonly maxTokens: number;
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

/** What the harness promises of a tool's side effect, from its declaration (docs/guarantees.md). */
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

/** A tool's timeout when it sets none: what most HTTP APIs answer well within. */
export const DEFAULT_TOOL_TIMEOUT_MS = 20_000;
/** The longest a tool may set: Lambda's 15 minutes, less room for the step's own ledger work. */
export const MAX_TOOL_TIMEOUT_MS = 840_000;

/** How long one attempt of `tool` may take (its `timeoutMs`, or the default). */
export function toolTimeoutMs(tool: Pick<ToolDefinition, 'timeoutMs'>): number {
  return tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
}

/** Declares a tool. Checks what can be checked before any run: the name, the description, the effect, the input schema and the limits. */
export function defineTool<Args, Input = any, Deps = any>(tool: ToolDefinition<Args, Input, Deps>): ToolDefinition<Args, Input, Deps> {
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) throw new Error(`defineTool: name ${JSON.stringify(tool.name)} must be 1-64 letters, digits, "_" or "-"`);
  // Bedrock refuses an empty description at the first model call (toolSpec.description: at least 1 character).
  if (typeof tool.description !== 'string' || tool.description.trim() === '') throw new Error(`defineTool ${tool.name}: description must say what the tool does, for the model, got ${JSON.stringify(tool.description)}`);
  if (tool.effect !== 'read' && tool.effect !== 'write') throw new Error(`defineTool ${tool.name}: effect must be 'read' or 'write', got ${JSON.stringify(tool.effect)}`);
  // Run by the CLI without a type check: a misspelt `execute` would otherwise be found at the
  // first call (a write's then escalated as an unknown outcome), a string rule at the first plan.
  if (typeof tool.execute !== 'function') throw new Error(`defineTool ${tool.name}: execute must be a function (args, context) => Promise<result>, got ${shownValue(tool.execute)}`);
  for (const field of ['reconcile', 'needsApproval', 'describe'] as const) {
    if (tool[field] !== undefined && typeof tool[field] !== 'function') throw new Error(`defineTool ${tool.name}: ${field} must be a function, got ${shownValue(tool[field])}`);
  }
  for (const field of ['key', 'amount'] as const) {
    if (tool.aggregate && typeof tool.aggregate[field] !== 'function') throw new Error(`defineTool ${tool.name}: aggregate.${field} must be a function of the arguments, got ${shownValue(tool.aggregate[field])}`);
  }
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
  // What the model is given (converted once, cached for the turns): a schema no provider takes
  // fails here, naming the tool, rather than the run's first model call.
  let schema: Record<string, unknown>;
  try {
    schema = inputSchemaOf(tool);
  } catch (error) {
    throw new Error(`defineTool ${tool.name}: input cannot be given to a model as JSON Schema: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (schema['type'] !== 'object') {
    throw new Error(`defineTool ${tool.name}: input must be an object schema (z.object({ … })): a model writes a tool's arguments as one JSON object, and the providers take no other (got ${JSON.stringify(schema['type'] ?? Object.keys(schema).join(', '))})`);
  }
  return tool;
}

/** What the functions over an agent's tool list read of the agent. */
type WithTools = { readonly tools: readonly ToolDefinition[] };

/** The tool list in the shape of a messages API request (`tools: [{ name, description, input_schema }]`). */
export function toolSpecs(agent: WithTools): { name: string; description: string; input_schema: Record<string, unknown> }[] {
  return agent.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: inputSchemaOf(tool) }));
}

/**
 * A tool's input as JSON Schema, converted once per zod schema: every model turn sends the tool
 * list, and converting a zod schema costs more than the rest of the request. Keyed by the schema,
 * not the tool: a copy of a tool (`{ ...tool, execute }`, as a replay's or a fork's agent makes
 * them) has the same input. Frozen, since it is shared.
 */
const inputSchemas = new WeakMap<object, Readonly<Record<string, unknown>>>();
function inputSchemaOf(tool: ToolDefinition): Record<string, unknown> {
  let schema = inputSchemas.get(tool.input);
  if (schema === undefined) {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(tool.input, { io: 'input' }) as Record<string, unknown>;
    schema = deepFreeze(rest);
    inputSchemas.set(tool.input, schema);
  }
  return schema as Record<string, unknown>;
}

/** The names of the agent's tools (computed once per agent). */
export function toolNames(agent: WithTools): ReadonlySet<string> {
  let names = toolNameSets.get(agent.tools);
  if (names === undefined) toolNameSets.set(agent.tools, (names = new Set(agent.tools.map((tool) => tool.name))));
  return names;
}
const toolNameSets = new WeakMap<readonly ToolDefinition[], ReadonlySet<string>>();

export function findTool(agent: WithTools, name: string): ToolDefinition | undefined {
  return agent.tools.find((tool) => tool.name === name);
}
