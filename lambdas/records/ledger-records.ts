import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { ContentBlock, Usage } from './messages.js';
import { MAX_TOKENS_PER_TURN } from '../shared/timing.js';
import { GUARDS } from './guards.js';
import type { FleetLease } from './fleet.js';
import type { Counters } from './counters.js';

/**
 * The ledger's records. One DynamoDB table, partitioned by run:
 *
 *   pk = RUN#<runId>   sk = RUN                          the run record (config, counters, status)
 *                      sk = TURN#0003                    one model turn (response + usage), written once
 *                      sk = TURN#0003#CALL#01            one tool call (claim → outcome), written once
 *                      sk = TURN#0003#CALL#01#APPROVAL   the approval that guards that call
 *
 * Keys sort so that a `begins_with(sk, 'TURN#')` query returns the conversation in order.
 * Approvals also carry `approvalId` (GSI byApprovalId: the opaque id a person decides by) and,
 * only while pending, `pendingApproval` (sparse GSI pendingApprovals, sorted by `decideBy`).
 * An approval's task token is not on it: it is its own item, pk = TOKEN#<runId>, sk = the
 * approval's sk (tokenKey), a partition only the approval functions' roles may read.
 *
 * An effect a tool names by a business key (`defineTool({ idempotencyKey })`) is claimed across
 * the agent's runs in a partition of its own: pk = EFFECT#<agent>:<tool>:<key>, sk = EFFECT.
 * The amounts a tool moves per key (`defineTool({ aggregate })`) are reserved across the agent's
 * runs likewise: pk = AGG#<agent>:<tool>:<key>, sk = AGG. The one approval request of such an
 * effect that the agent's runs share (EffectApprovalRecord) is beside its claim: pk = EFFECT#…, sk = APPROVAL.
 */

export const runKey = (runId: string) => ({ pk: `RUN#${runId}`, sk: 'RUN' });
export const turnSk = (turn: number) => `TURN#${String(turn).padStart(4, '0')}`;
export const callSk = (turn: number, call: number) => `${turnSk(turn)}#CALL#${String(call).padStart(2, '0')}`;
export const approvalSk = (turn: number, call: number) => `${callSk(turn, call)}#APPROVAL`;
/** The n-th request to extend one budget of a run: `BUDGET#steps#2#APPROVAL`. */
export const budgetApprovalSk = (guard: ExtendableGuard, extension: number) => `BUDGET#${guard}#${extension}#APPROVAL`;

/** Where an approval's task token lives: its own partition, the approval's sort key. */
export const tokenKey = (approval: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>) => ({
  pk: `TOKEN#${approval.runId}`,
  sk: approvalSkOf(approval),
});

/**
 * Where the task token of a parent's wait for its child run lives (CallTool's AwaitChildRun): a
 * partition of its own, `WAIT#<parent run id>`, which only CallTool (writes) and ExecutionStopped
 * (reads, when a child's execution ends) may reach.
 */
export const childWaitKey = (wait: ChildWait) => ({ pk: `WAIT#${wait.runId}`, sk: `${callSk(wait.turn, wait.call)}#CHILD` });

/**
 * Which run an execution drives, where its input does not say (a scheduled event, a request that
 * leaves the run id to the agent's rule): `EXEC#<execution ARN>`, written by StartRun, read by the
 * stack's shared ExecutionStopped and RecoverRun, which load no agent's code to derive it.
 */
export const executionRunKey = (executionArn: string) => ({ pk: `EXEC#${executionArn}`, sk: 'RUN' });

/** The parent's tool call a child run answers: what its run request and record name. */
export interface ChildWait {
  runId: string;
  turn: number;
  call: number;
}

/** Where an approval lives: a tool call's, or a budget extension's. */
export function approvalSkOf(approval: Pick<ApprovalRecord, 'turn' | 'call' | 'budget'>): string {
  return approval.budget ? budgetApprovalSk(approval.budget.guard, approval.budget.extension) : approvalSk(approval.turn, approval.call);
}

/** The schema of a run's budgets and settings (the `RunConfig` type). */
export const RunConfig = schemaOnFirstUse(() => z
  .object({
    /** Hard cap on agent steps (model turns + tool calls). @default 400 */
    maxSteps: z.number().int().positive().default(400),
    /** Hard cap on cumulative tokens (input + output) over the run. @default 600_000 */
    maxTokens: z.number().int().positive().default(600_000),
    /** Hard cap on dollars spent on model calls (usage × the versioned price table). Above 0, at most 10,000. @default 5 */
    maxDollars: z.number().positive().max(10_000).default(5),
    /** Hard cap on wall-clock time since the run first started; a resume does not reset it. At most 30 days. @default 14_400 (4 hours) */
    maxWallSeconds: z.number().int().positive().max(30 * 24 * 3600).default(4 * 3600),
    /** `max_tokens` passed to every model call: at most what fits the longest model timeout (lambdas/shared/timing.ts). @default 2_048 */
    maxTokensPerTurn: z.number().int().positive().max(MAX_TOKENS_PER_TURN).default(2_048),
    /**
     * When a budget (steps, tokens, dollars, wall clock) is exhausted: stop, or ask a person to
     * extend it (the same approval flow as refunds; a refused or expired extension stops the run).
     * @default 'stop'
     */
    onBudgetExceeded: z.enum(['stop', 'ask']).default('stop'),
    /** How much an approved extension adds to the exhausted budget, in percent of its limit: 1 to 1,000. @default 50 */
    budgetExtensionPercent: z.number().int().min(1).max(1000).default(50),
    /** An approval not decided by then is escalated: the tool call is refused with `approval_expired`. At most 7 days. @default 86_400 (24 hours) */
    approvalTimeoutSeconds: z.number().int().positive().max(7 * 24 * 3600).default(24 * 3600),
    /**
     * Continue-as-new: an execution with this many history events hands the run to a successor
     * (Step Functions ends an execution at 25,000; lambdas/guards/history.ts). From 50 to 24,000.
     * @default 20_000
     */
    historyEventsBeforeHandoff: z.number().int().min(50).max(24_000).default(20_000),
  })
  .strict());
/** A run's budgets and settings: the agent's defaults, what its starter asked for within the caps. */
export type RunConfig = z.infer<ReturnType<typeof RunConfig>>;

/** The budgets a starter may ask for (a run request's `config`), each capped by the agent and the deployment. */
export const CAPPED_BUDGETS = ['maxSteps', 'maxTokens', 'maxDollars', 'maxWallSeconds', 'maxTokensPerTurn'] as const;
export type CappedBudget = (typeof CAPPED_BUDGETS)[number];

/** The most a run's starter may ask for, per budget (`maxBudgets` of an agent or a deployment). */
export const BudgetCaps = schemaOnFirstUse(() => z
  .object({
    // The budgets' own bounds, without their defaults (a cap not set is no cap).
    maxSteps: RunConfig().shape.maxSteps.unwrap().optional(),
    maxTokens: RunConfig().shape.maxTokens.unwrap().optional(),
    maxDollars: RunConfig().shape.maxDollars.unwrap().optional(),
    maxWallSeconds: RunConfig().shape.maxWallSeconds.unwrap().optional(),
    maxTokensPerTurn: RunConfig().shape.maxTokensPerTurn.unwrap().optional(),
  })
  .strict() satisfies z.ZodType<Partial<Record<CappedBudget, number>>>);
export type BudgetCaps = z.infer<ReturnType<typeof BudgetCaps>>;

export const RunStatus = schemaOnFirstUse(() => z.enum(['running', 'succeeded', 'stopped', 'killed', 'failed']));
export type RunStatus = z.infer<ReturnType<typeof RunStatus>>;

export { ZERO_COUNTERS, type Counters } from './counters.js';

export interface RunRecord extends Counters {
  kind: 'run';
  runId: string;
  /** The agent's name (`AgentDefinition.name`). */
  agent: string;
  /** The run's input, as the agent's `input` schema parsed it. */
  input: unknown;
  prompt: string;
  model: string;
  config: RunConfig;
  fingerprint: string;
  priceTableVersion: string;
  status: RunStatus;
  /** The execution currently driving the run. */
  executionArn: string;
  executions: string[];
  createdAt: string;
  updatedAt: string;
  stopReason?: string;
  error?: { error: string; cause: string };
  finishedAt?: string;
  /**
   * The agent's report (`AgentDefinition.report`) as the run's own code made it when the run ended
   * (Finalize): what replay compares this code's report with.
   */
  report?: Readonly<Record<string, number | string>>;
  /** Set by `savepoint kill` or StopExecution; checked before every step; nothing undoes it. */
  killed?: KillFlag;
  /** Every guard that warned or stopped the run, in order: ready for metrics and alarms. */
  guardEvents?: GuardEvent[];
  /** Hash of the state machine definition the run started on (with `fingerprint`, what a resume must match). */
  definitionHash?: string;
  /** Automatic recoveries of the run (lambdas/steps/recover.ts). */
  recovery?: RecoveryRecord;
  /** How many extensions of each budget (and of the loop detector) were approved and applied. */
  budgetExtensions?: Partial<Record<ExtendableGuard, number>>;
  /**
   * The limit each budget an approved extension raised had when the run started (`config` holds
   * the extended one), set at its first extension: what `savepoint replay` starts the run on.
   */
  budgetsBeforeExtension?: Partial<Pick<RunConfig, BudgetField>>;
  /** A person let the run go on after its loop detector tripped: turns up to this one are not examined again. */
  loopAllowedThrough?: number;
  /**
   * The tool calls the counters hold (ledger/open-turn.ts): those of `turn` listed, and every call
   * of an earlier turn. A call is recorded without a count of its own, so that nothing but the
   * model turns writes the run item while a turn's calls run: the next model turn's reservation
   * counts them (the write it makes anyway), or the run's end (finishRun: a run that failed by
   * accident counts the rest of its turn when it is recovered). Until then `steps` and `toolCalls`
   * lag by the open turn's calls. Absent (a run recorded before 0.10): none of the open turn's taken
   * as counted (the write counts each call's key once, so a call that counted itself is not counted again).
   */
  callsCounted?: { turn: number; calls: number[] };
  /** The identity that started the run (separation of duties: it may not approve the run's requests). */
  startedBy?: string;
  /** The agent's declared `version` the run is bound to (with `fingerprint`); absent when it declares none. */
  agentVersion?: string;
  /**
   * When each execution after the first took the run over (`attachExecution`), and how many model
   * turns were recorded then: what the trace's span links for a resume, handoff or migration are
   * built from (lambdas/telemetry/spans.ts). `execution` is the index in `executions`; absent on
   * records written before it was kept.
   */
  attachments?: ExecutionAttachment[];
  /** `savepoint migrate`: each move of the live run to another version of the agent, in order. */
  migrations?: MigrationRecord[];
  /** Digests of the system prompt and tool specs the run's requests send (runs/request-shape.ts): what replay names a change by. */
  requestShape?: RequestShape;
  /** Set on a fork (`savepoint fork`, lambdas/runs/fork.ts): the run it was forked from, at which turn, and how its writes are treated. */
  forkedFrom?: ForkLineage;
  /** Set on a child run (`defineAgentTool`): the parent's tool call it answers, which its end wakes. */
  parent?: ChildWait;
  /**
   * Set on a child run when what it spent was settled into its parent (records/child-budget.ts):
   * the parent counts that spend as final, so the run is not resumed any more (StartRun refuses).
   */
  settledIntoParentAt?: string;
  /** The runs forked from this one (ledger protocol `recordFork`): the lineage, sealed on both sides. */
  forks?: { runId: string; turn: number }[];
  /** The run's lease of a fleet budget (records/fleet.ts), when the deployment sets one: what it took from the day's counters. */
  fleetLease?: FleetLease;
}

/**
 * Where a fork came from. `effects`: `reuse` answers a write the parent made (same business key, or
 * same tool and arguments) from the parent's record; `dry` sends no write at all.
 */
export interface ForkLineage {
  runId: string;
  /** The fork's first turn of its own: turns before it are the parent's, copied. */
  turn: number;
  effects: 'reuse' | 'dry';
  /**
   * What the fork changed against its parent besides the code (which its fingerprint and version
   * say): another input, another model, the results of the last copied turn's tool calls. Absent
   * when it changed none of them.
   */
  edited?: ForkEdits;
}

export interface ForkEdits {
  /** The fork's input (and so its first message) is not the parent's. */
  input?: true;
  /** The fork runs on another model than the parent did (the copied turns were the parent's model's). */
  model?: true;
  /** The copied tool calls whose result the fork's first turn is shown edited, not as the parent recorded it. */
  results?: { turn: number; call: number }[];
}

/**
 * What every model request of a run sends besides its conversation, as digests (runs/request-shape.ts):
 * the system prompt and each tool's spec, by tool name in the order offered.
 */
export interface RequestShape {
  system: string;
  tools: Record<string, string>;
}

export interface ExecutionAttachment {
  execution: number;
  at: string;
  modelTurns: number;
}

/** One recorded move of a live run to new code (lambdas/steps/versions.ts). */
export interface MigrationRecord {
  /** Who asked for it (`savepoint migrate`'s user). */
  by: string;
  at: string;
  from: { version?: string; fingerprint: string; executionArn: string };
  to: { version?: string; fingerprint: string; executionArn: string };
}

export interface RecoveryRecord {
  /** Recoveries so far. */
  attempts: number;
  /** Consecutive recoveries after which the run made no progress: bounded, then the run is given up. */
  withoutProgress: number;
  /** The run's steps when it was last recovered. */
  atSteps: number;
  /** The ended execution the last recovery answered (`<executionArn>@<when it ended>`): a second delivery is ignored. */
  key: string;
  /** Why the last recovery was needed, e.g. `execution … FAILED: Agent.Transient`. */
  reason: string;
  /** The execution the last recovery started. */
  executionName: string;
  at: string;
}

/**
 * What a person may extend: the budgets, and a tripped loop detector (the agent's `loops.onLoop:
 * 'ask'`: the run goes on, the turns so far no longer examined). A kill is never extended.
 */
export type ExtendableGuard = Extract<(typeof GUARDS)[number], { extendable: true }>['guard'] | 'loop';
export const EXTENDABLE_GUARDS = [...GUARDS.flatMap((row) => (row.extendable ? [row.guard] : [])), 'loop' as const] as readonly ExtendableGuard[] as readonly [ExtendableGuard, ...ExtendableGuard[]];
export type BudgetGuard = Exclude<ExtendableGuard, 'loop'>;

/** The config field each extendable budget lives in (a loop's extension sets `loopAllowedThrough`): its row's `field` (records/guards.ts). */
export const BUDGET_FIELDS = Object.fromEntries(GUARDS.map((row) => [row.guard, row.field])) as { readonly [G in BudgetGuard]: Extract<(typeof GUARDS)[number], { guard: G }>['field'] };

/** The run-config field of an extendable budget. */
export type BudgetField = (typeof BUDGET_FIELDS)[BudgetGuard];

/**
 * What an approved extension changes on the run: the budget's limit (the limit it started with
 * kept, the first time), or where loop detection starts again.
 */
export function extended(
  run: Pick<RunRecord, 'config' | 'budgetsBeforeExtension'>,
  guard: ExtendableGuard,
  limit: number,
): Pick<RunRecord, 'config' | 'budgetsBeforeExtension'> | Pick<RunRecord, 'loopAllowedThrough'> {
  if (guard === 'loop') return { loopAllowedThrough: limit };
  const field = BUDGET_FIELDS[guard];
  const before = run.budgetsBeforeExtension ?? {};
  return { config: { ...run.config, [field]: limit }, budgetsBeforeExtension: field in before ? before : { ...before, [field]: run.config[field] } };
}

export interface KillFlag {
  by: string;
  at: string;
  reason: string;
}

export interface GuardEvent {
  guard: 'steps' | 'tokens' | 'dollars' | 'wallClock' | 'kill' | 'loop' | 'breaker' | 'effect' | 'fleet';
  action: 'warned' | 'stopped' | 'tripped';
  reason: string;
  at: string;
}

export interface TurnRecord {
  kind: 'turn';
  runId: string;
  turn: number;
  /** The `provider:model-id` that answered: the run's model, or its fallback while the model's breaker was open. */
  model: string;
  /**
   * The provider's id of the answer (Anthropic's `msg_…`, OpenAI's `chatcmpl-…`): the trace's
   * `gen_ai.response.id`, and what the provider knows the call by. The provider's, not the
   * harness's: nothing is decided or compared by it (a replay answers with it as recorded). Absent
   * where the provider names no answer (Bedrock's Converse API), and on turns recorded before it
   * was kept.
   */
  responseId?: string;
  /**
   * The model as the provider named it in its answer (`model` names the one asked for; an alias
   * answers as the dated snapshot it resolved to): the trace's `gen_ai.response.model`. Absent
   * where the provider does not say (Bedrock's Converse API), and on turns recorded before it was kept.
   */
  responseModel?: string;
  /**
   * What the harness told the model this turn (budget left, loop warning), appended to the user
   * turn before it: recorded, so that the conversation replays byte for byte and every later turn
   * sends the same prefix (which is what a prompt cache matches on).
   */
  notes?: string[];
  content: z.infer<ReturnType<typeof ContentBlock>>[];
  stopReason: string;
  usage: z.infer<ReturnType<typeof Usage>>;
  costMicros: number;
  latencyMs: number;
  recordedAt: string;
  /** Set on a compaction (lambdas/steps/compaction.ts): its text summarises turns 1..covers. */
  compaction?: { covers: number };
  /** The fingerprint of the code that made the call: which version of the agent recorded this step. */
  fingerprint?: string;
}

export type ToolStatus = 'in_flight' | 'completed';
export type ToolOutcome = 'ok' | 'error' | 'rejected' | 'expired';

export interface ToolCallRecord {
  kind: 'tool';
  runId: string;
  turn: number;
  call: number;
  toolCallId: string;
  name: string;
  /** The arguments as the tool's schema parsed them (what `execute`, approvals and reports read). */
  args: Record<string, unknown>;
  effect: 'read' | 'write';
  idempotencyKey: string;
  status: ToolStatus;
  /** An in-flight claim may be taken over once its lease has expired (the holder died). */
  leaseUntil: string;
  attempts: number;
  outcome?: ToolOutcome;
  /** JSON of what the model sees as the tool result. */
  result?: string;
  latencyMs?: number;
  recordedAt?: string;
  /**
   * For a tool with `reconcile`: how long after a request was sent (`sentAt`) the provider shows
   * what it committed. The claim is not taken over before then, so that `reconcile` never looks
   * too early (protocol.ts `takeoverAfter`).
   */
  settleMs?: number;
  /**
   * When the latest attempt's request went out (its claim: the request follows it at once, or
   * after the attempt's `reconcile`), while its outcome is unknown; cleared when the attempt ended
   * knowing it did nothing (the provider refused it, it was never sent).
   */
  sentAt?: string;
  /**
   * On a claim taken again: the `sentAt` of the attempt before, whose outcome is unknown — what
   * CallTool reconciles, re-sends under the same key, or escalates. Absent: nothing went out unanswered.
   */
  earlierSend?: string;
  /** Set when the call is an effect named by a business key: the effect's claim (EffectRecord). */
  effectKey?: string;
  /** The tool's guarantee when the call was made (define/tool.ts `guaranteeOf`): a report without the agent's code still shows it. */
  guarantee?: 'read' | 'exactly-once' | 'at-most-once' | 'at-least-once';
}

/**
 * The total a tool moved (or reserved before sending) for one key across the agent's runs
 * (`defineTool({ aggregate })`), and the calls that added to it: a retried call adds once.
 */
export interface AggregateRecord {
  kind: 'aggregate';
  /** `<agent>:<tool>:<key>`. */
  key: string;
  /** Minor units reserved so far, approved calls included. */
  total: number;
  /** The newest calls that added (`<runId>:<turn>:<call>`), oldest first: a retry of one adds nothing. */
  holders: string[];
  updatedAt: string;
}

/**
 * An effect claimed across the agent's runs by its business key: the call that holds it, and once
 * completed, that call's result (what every other call of the same effect gets back).
 */
export interface EffectRecord {
  kind: 'effect';
  /** `<agent>:<tool>:<business key>`: also the idempotency key sent to the provider. */
  key: string;
  /** The call holding the claim. */
  runId: string;
  turn: number;
  call: number;
  name: string;
  /** The holder's arguments: a takeover sends these, not its own (the provider may refuse other parameters on the same key). */
  args: Record<string, unknown>;
  /** `released`: the holder's call ended without the effect (refused by the provider, rejected): not a claim. */
  status: 'in_flight' | 'completed' | 'released';
  leaseUntil: string;
  /** Claims of the effect so far, its takeovers included. */
  attempts: number;
  settleMs?: number;
  /** As a call's (ToolCallRecord `sentAt`, `earlierSend`): the effect's latest send whose outcome is unknown, and the one before a takeover. */
  sentAt?: string;
  earlierSend?: string;
  outcome?: ToolOutcome;
  result?: string;
  recordedAt?: string;
  /**
   * What people found out about the effect's escalations (`savepoint effects resolve`), oldest
   * first: kept across later claims of the key, so the audit stays with the effect.
   */
  resolutions?: EffectResolution[];
}

/**
 * A person's settling of an escalated effect (completed, its outcome unknown) after checking with
 * the provider: `not_sent` releases it (a later run of the key claims it and sends), `sent`
 * records it done with `result` (later runs are answered with it).
 */
export interface EffectResolution {
  as: 'sent' | 'not_sent';
  /** Who: the OS user, or the caller's AWS identity. */
  by: string;
  at: string;
  reason: string;
  /** The escalated call it settled. */
  runId: string;
  turn: number;
  call: number;
}

/** Which approval of which run and call: a reference to an approval record. */
export interface ApprovalRef {
  approvalId: string;
  runId: string;
  turn: number;
  call: number;
}

/**
 * The one approval request the agent's runs share for an effect named by a business key
 * (ledger/effect-approvals.ts): the approval a person is asked (`leader`), for exactly `subject`
 * (the tool and its arguments), and the calls of other runs that wait on its decision instead of
 * asking again (`followers`).
 */
export interface EffectApprovalRecord {
  kind: 'effectApproval';
  /** `<agent>:<tool>:<business key>`, as the effect's claim (EffectRecord). */
  key: string;
  /** SHA-256 of the tool's name and arguments: only a call asking for the same is shared. */
  subject: string;
  leader: ApprovalRef;
  followers: ApprovalRef[];
  createdAt: string;
  updatedAt: string;
}

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired';
export type DecisionChannel = 'link' | 'iam' | 'cli' | 'timeout';

/** A call (or a budget extension) waiting for a person, and how it was decided, as the ledger seals it. */
export interface ApprovalRecord {
  /** The record's kind in the ledger. */
  kind: 'approval';
  /** The approval's id: what `savepoint approve` and the approval page name. */
  approvalId: string;
  /** The run that waits. */
  runId: string;
  /** The agent whose run waits (agents may share a table; each decides and expires its own). */
  agent?: string;
  /** The turn of the call that waits. */
  turn: number;
  /** The call's place in its turn. */
  call: number;
  /** The tool of the call that waits. */
  toolName: string;
  /** What the tool's approval rule says the person decides (one line). */
  summary: string;
  /** The money at stake, in minor units, when the tool's approval rule names it. */
  amount?: { minor: number; currency: string };
  /** More facts for the person deciding (the arguments in words, the evidence). */
  details?: Record<string, string | number | boolean>;
  /** The call's arguments in words (the tool's `describe`). */
  description?: string;
  /** `pending` until decided; `approved`, `rejected`, or `expired` at `decideBy`. */
  status: ApprovalStatus;
  /** When it expires undecided (ISO 8601). */
  decideBy: string;
  /** When it was asked for (ISO 8601). */
  createdAt: string;
  /** The reason the person gave with the decision. */
  reason?: string;
  /** The authenticated identity that decided (a link's approver, an IAM principal, a local user) or `timeout`. */
  decidedBy?: string;
  /** When it was decided (ISO 8601). */
  decidedAt?: string;
  /** How the decision came: a signed link, an IAM-signed request, the CLI, or the deadline. */
  decidedVia?: DecisionChannel;
  /** MAC over the decision by the callback's key (approvals/decision-mac.ts): verified before it is applied. */
  decisionMac?: string;
  /** Milliseconds from the request to the decision (not counted against the wall-clock budget). */
  waitedMs?: number;
  /**
   * The first approver, when the policy asks for two: the second approval decides. `mac`: the
   * callback's MAC over it (approvals/decision-mac.ts `firstApprovalMessage`), verified before a
   * second approval completes the decision.
   */
  firstApproval?: { by: string; via: DecisionChannel; at: string; reason?: string; mac?: string };
  /** Ids of the signed links used on this approval (each link decides once). */
  usedLinks?: string[];
  /** Set for a budget extension: which budget, the how-many-th extension, and the limit it grants (for a loop: the turn it may go on after). */
  budget?: { guard: ExtendableGuard; extension: number; limit: number };
  /**
   * A call of an effect named by a business key: the effect and the subject (EffectApprovalRecord)
   * it is approved for. Its decision's MAC covers both (approvals/decision-mac.ts), so it approves
   * that effect with those arguments, in whichever of the agent's runs asks.
   */
  effect?: { key: string; subject: string };
  /** The approval of another run this one waits on instead of asking a person again (EffectApprovalRecord's leader). */
  sharedWith?: ApprovalRef;
  /**
   * Decided as `sharedWith` was (status, `decidedBy`, `decidedVia` the same): when, and that
   * decision's MAC, which covers the same effect and subject (approvals/decision-mac.ts).
   */
  sharedDecision?: { decidedAt: string; decisionMac?: string };
  /**
   * A decision (a person's, or the sweep's expiry) recorded and not yet delivered to the waiting
   * execution: set with the decision, dropped once it is delivered (or nothing waits on the token).
   * Until then the approval stays in the pending-approvals index, so a delivery that failed is
   * made again by the next expiry sweep (steps/expire-approvals.ts).
   */
  undelivered?: true;
}

export type LedgerRecord = RunRecord | TurnRecord | ToolCallRecord | ApprovalRecord | EffectRecord | EffectApprovalRecord;
