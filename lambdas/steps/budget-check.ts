import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { parentKill } from '../tools/child-runs.js';
import type { AgentDefinition } from '../define.js';
import { verifiedDecision, type DecisionMac } from '../approvals/decision-mac.js';
import { budgetTrip, reservationTrip, type Reservation } from '../guards/budgets.js';
import type { PriceTable } from '../models/prices.js';
import { nextCallReservation } from '../guards/request-size.js';
import { compactionReservation } from './compact.js';
import { boundNow, handoffThreshold, HistoryBound, mustHandOff, type HistoryNext } from '../guards/history.js';
import { loopSettings, loopVerdict } from '../guards/loops.js';
import type { ApprovalLedger, BlobStore, CallsCount, GuardLedger, RunLedger, TurnLedger } from '../ledger/ledger.js';
import { openCalls, withCounted } from '../ledger/open-turn.js';
import { BUDGET_FIELDS, EXTENDABLE_GUARDS, type ApprovalRecord, type BudgetGuard, type ExtendableGuard, type GuardEvent, type RunRecord, type ToolCallRecord, type TurnRecord } from '../records/ledger-records.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Clock } from '../shared/ports.js';
import { compactionDue } from '../conversation/compaction.js';
import { loadConversationStep, NEXT_TURN, toolUses, type ConversationStep } from '../conversation/turns.js';
import { plannedCalls, type ToolCallItem } from '../conversation/tool-calls.js';
import { checkVersion, type CodeFingerprint } from '../runs/versions.js';

/** `history`: the bound of this execution's history at the last decision (at its start: StartRun's), and where the run went from there (lambdas/guards/history.ts). */
export const BudgetCheckInput = schemaOnFirstUse(() => z.object({ runId: z.string().min(1), history: HistoryBound().optional() }));

export type BudgetDecision =
  /** `pending`: the last turn's tool calls that never completed (a resumed run) come first, in call order. */
  | {
      continue: true;
      nextTurn: number;
      pending: ToolCallItem[] | null;
      /** Set when this execution is near its history limit: it hands the run to a successor (continue-as-new). `events`: the most it can have made. */
      handoff?: { events: number; threshold: number };
      /** Set when the context passed its share of the window: a Compact step runs before turn `turn`. */
      compact?: { turn: number; covers: number };
      /** A guard warned (e.g. a loop forming). */
      warning?: string;
    }
  | {
      continue: false;
      status: 'succeeded' | 'stopped' | 'killed';
      reason: string;
      guard?: GuardEvent['guard'];
      /** Set when the run asks a person to extend the exhausted budget instead of stopping. */
      extension?: NonNullable<ApprovalRecord['budget']>;
    };

/**
 * The harness's stop decision, made between iterations from what is persisted — never from what
 * the model says: the run's status, the kill switches, the budgets, whether the model's last turn
 * was final, and the loop detector. `also`: the global kill flag, the run's tool calls (for a turn's
 * unfinished calls) and the next model call's reservation, when known.
 */
export function decide(
  agent: AgentDefinition,
  run: RunRecord,
  turns: TurnRecord[],
  now: Date,
  { globalKill, calls = [], reserve }: { globalKill?: RunRecord['killed']; calls?: ToolCallRecord[]; reserve?: () => Reservation | undefined } = {},
): BudgetDecision {
  if (run.status !== 'running') return { continue: false, status: 'stopped', reason: `run is ${run.status}` };
  const trip = budgetTrip(run, now, globalKill);
  if (trip) return { continue: false, status: trip.guard === 'kill' ? 'killed' : 'stopped', reason: trip.reason, guard: trip.guard };
  const last = turns.at(-1);
  if (last && isFinalAnswer(last, turns.at(-2))) return { continue: false, status: 'succeeded', reason: 'done' };
  const loop = loopVerdict(turns, loopSettings(agent.loops), run.loopAllowedThrough);
  if (loop?.action === 'stop') return { continue: false, status: 'stopped', reason: loop.reason, guard: 'loop' };
  // A turn recorded but never counted (its CallModel died between the two) goes back to CallModel,
  // which counts it once and points at its first tool call without a result.
  if (last && last.turn > run.modelTurns) return { continue: true, nextTurn: last.turn, pending: null };
  const pending = last ? unfinishedCalls(last, calls) : null;
  // The next step is a model call: it must fit in what is left, at its most (guards/budgets.ts).
  const reservation = pending ? undefined : reserve?.();
  const over = reservation && reservationTrip(run, reservation);
  if (over) return { continue: false, status: 'stopped', reason: over.reason, guard: over.guard };
  return { continue: true, nextTurn: run.modelTurns + 1, pending };
}

/** The model is done when its turn ended asking for no tool: its answer is final, and the run succeeds. */
export function isFinalAnswer(turn: Pick<TurnRecord, 'stopReason' | 'content'>, before?: Pick<TurnRecord, 'stopReason' | 'content'>): boolean {
  if (turn.stopReason !== 'end_turn' || toolUses(turn).length > 0) return false;
  // An empty answer (nothing said, nothing called) is asked again once, with a note saying so
  // (call-model.ts harnessNotes): Anthropic's models answer so at times after tool results, above all
  // where text follows them, as the harness's notes do ("Handling stop reasons": empty responses
  // with end_turn), and it ended the run as done, its work not done. A second one in a row is final.
  return !isEmptyAnswer(turn) || (before !== undefined && isEmptyAnswer(before));
}

/** Whether `turn` ended its answer having said nothing and called nothing. */
export function isEmptyAnswer(turn: Pick<TurnRecord, 'stopReason' | 'content'>): boolean {
  return turn.stopReason === 'end_turn' && turn.content.every((block) => block.type === 'text' && block.text.trim() === '');
}

/**
 * The tool calls of `turn` without a completed record (null: none). A run that stopped mid-turn
 * (an engine that died, a resume) finishes the turn's calls before the model is asked again.
 */
function unfinishedCalls(turn: TurnRecord, calls: ToolCallRecord[]): ToolCallItem[] | null {
  const pending = plannedCalls(turn, calls);
  return pending.length > 0 ? pending : null;
}

/** What a decision needs: CallModel's (before each model call) and BudgetCheck's (older definitions'). */
export interface DecisionDeps {
  agent: AgentDefinition;
  fingerprint: CodeFingerprint;
  ledger: TurnLedger & BlobStore & GuardLedger & Pick<RunLedger, 'getRun'> & Pick<ApprovalLedger, 'getBudgetApproval'>;
  clock: Clock;
  /** Verifies an approved budget extension's decision (approvals/decision-mac.ts). @default none: applied as recorded */
  decisionMac?: DecisionMac | undefined;
  /** @default DEFAULT_PRICE_TABLE */
  priceTable?: PriceTable | undefined;
}

/** A decision and what it was made from: the run as last decided on (an extension applied), and the step's read. */
export interface Checked {
  decision: BudgetDecision;
  /** Its counters with the open turn's calls counted (ledger/open-turn.ts `withCounted`). */
  run: RunRecord;
  step: ConversationStep;
  /** The open turn's calls the run item does not count yet: the next model call's reservation counts them. */
  open?: CallsCount;
}

/** A decision with the execution's history bound, carried on to the next decision (lambdas/guards/history.ts). */
export type Decided = BudgetDecision & { history?: HistoryBound };

/**
 * An execution's first decision, in the definitions before 0.8.0 (their BudgetCheck state; 0.6.x
 * also between turns). CallModel makes every decision now, the same way, before its model call:
 * this step stays deployed for the executions still running on an older version (and the
 * successors they hand off to, on the same version), which invoke it. Every decision carries the
 * execution's history bound on to the next one.
 */
export function createBudgetCheck(deps: DecisionDeps) {
  return async (input: unknown): Promise<Decided> => {
    const parsed = parseOrThrow(BudgetCheckInput(), input, 'BudgetCheck input');
    return withHistoryBound(await check(deps, parsed.runId), parsed.history, 'BudgetCheck');
  };
}

/**
 * The harness's stop decision for `runId`, from one read (usually one batched request): the run,
 * the kill flags and what is new in the conversation, with the breaker `read.breaker` when the
 * caller (CallModel) needs it, and the next turn's calls not guessed when the caller is about to
 * record that turn (`read.recording`). Records what the decision found (a guard's trip or warning,
 * a parent's kill, an approved extension applied) before it returns.
 */
export async function check(deps: DecisionDeps, runId: string, read: { breaker?: string; handedBreaker?: string; recording?: boolean; held?: ConversationStep } = {}): Promise<Checked> {
  const now = deps.clock.now();
  // One batched read (usually): the run, the kill flag and what is new in the conversation — or
  // none, when the caller holds what that read would find (`held`: a final turn's own write saw it).
  const step = read.held ?? (await loadConversationStep(deps.ledger, runId, read.breaker, read.recording ? NEXT_TURN : undefined, read.handedBreaker));
  const { globalKill, turns, calls } = step;
  // A child run (defineAgentTool) is killed with its parent: the kill is recorded on it here.
  const stored = (await parentKill(deps.ledger, step.run, now)) ?? step.run;
  // The open turn's calls count no step of their own until the next model call's reservation (or
  // the run's end) counts them: the decision counts them itself, from the calls it read.
  const open = openCalls(stored, calls);
  const run = withCounted(stored, open);
  // A live run goes on only on its own code (steps/versions.ts); an ended one just stops.
  if (run.status === 'running') checkVersion(run, deps.agent, deps.fingerprint);
  // The next model call's reservation, worked out once (it does not depend on the limits an
  // extension raises): the compaction's when one is due (it goes first, and shrinks the call after it).
  let reservation: Reservation | undefined;
  const reserve = () => {
    const due = compactionDue(deps.agent, turns, run.modelTurns + 1);
    return (reservation ??= due ? compactionReservation(deps.agent, run, { turns, calls }, due.covers, deps.priceTable) : nextCallReservation(deps.agent, run, turns, calls, deps.priceTable));
  };
  // The run as last decided on: an extension applied on the way changes it.
  let latest = run;
  const decision = await withExtensions(deps, turns, stored, (current) => decide(deps.agent, (latest = withCounted(current, open)), turns, now, { globalKill, calls, reserve }));
  const checked = (decided: BudgetDecision): Checked => ({ decision: decided, run: latest, step, ...(open && { open }) });
  const warning = decision.continue ? loopVerdict(turns, loopSettings(deps.agent.loops), latest.loopAllowedThrough) : undefined;
  // ---- context compaction (lambdas/conversation/compaction.ts) ----
  // Due whether or not the model is warned of a loop: a warning lasts as many turns as the
  // detector lets the repeats go on (`loops.repeats`), and the context grows in each of them.
  const due = decision.continue && !decision.pending ? compactionDue(deps.agent, turns, decision.nextTurn) : undefined;
  const compact = decision.continue && due ? { compact: { turn: decision.nextTurn, covers: due.covers } } : {};
  if (!decision.continue && decision.guard) {
    const action = decision.extension ? 'tripped' : 'stopped';
    const reason = decision.extension ? `${decision.reason}: asking to extend it to ${decision.extension.limit}` : decision.reason;
    await deps.ledger.recordGuardEvent(runId, { guard: decision.guard, action, reason, at: now.toISOString() });
  } else if (warning && decision.continue) {
    // A warning the run record holds already is not written again (the write would change nothing).
    if (!run.guardEvents?.some((event) => event.reason === warning.reason)) {
      await deps.ledger.recordGuardEvent(runId, { guard: 'loop', action: 'warned', reason: warning.reason, at: now.toISOString() });
    }
    return checked({ ...decision, ...compact, warning: warning.reason });
  }
  return checked({ ...decision, ...compact });
}

/**
 * The decision with this execution's history bound (`history`: the one the last decision wrote),
 * and the continue-as-new it may call for. `by`: the step deciding, which says where a decision to
 * call the model sends the run (nextOf).
 */
export function withHistoryBound({ decision, run, step }: Checked, history: HistoryBound | undefined, by: 'BudgetCheck' | 'CallModel'): Decided {
  if (!history) return decision;
  // ---- continue-as-new (lambdas/guards/history.ts) ----
  // The bound is made of what this read anyway (the run's meter, the recorded turns): no call.
  const toolCallsOf = (turn: number) => toolUses(step.turns.find((record) => record.turn === turn) ?? { content: [] }).length;
  const now = boundNow(history, run.historyEvents ?? 0, toolCallsOf);
  const threshold = handoffThreshold(run);
  // Never before the execution made progress (a model turn, tool calls, a compaction): not at its
  // first decision (nor, in a definition before 0.8.0, at the CallModel right after BudgetCheck's).
  // A successor must make progress before it hands on.
  const progressed = history.next !== undefined && !('callModel' in history.next);
  if (decision.continue && progressed && mustHandOff(now.events, threshold)) return { ...decision, handoff: { events: now.events, threshold }, history: now };
  // A stop without an extension ends the execution (Finalize): no next.
  const next = decision.continue ? nextOf(decision, by) : decision.extension ? ({ extension: true } as const) : undefined;
  return { ...decision, history: { ...now, ...(next && { next }) } };
}

/**
 * Where a continuing decision sends the run, in the order of the definition's Choice rules: a
 * model call is made in CallModel's own invocation (`model`), or (before 0.8.0) BudgetCheck's leads to CallModel.
 */
function nextOf(decision: Extract<BudgetDecision, { continue: true }>, by: 'BudgetCheck' | 'CallModel'): HistoryNext {
  if (decision.compact) return { compact: true };
  if (decision.pending) return { tools: decision.pending.length };
  return by === 'CallModel' ? { model: decision.nextTurn } : { callModel: true };
}

/**
 * A run configured to `ask` does not stop on an exhausted budget: an approved extension raises
 * the limit (once, in the run record) and the decision is made again; a pending or missing one is
 * asked for; a refused or expired one stops the run, saying so. A tripped loop detector of an
 * agent whose `loops.onLoop` is `ask` is asked about the same way: approved, the run goes on and
 * the turns so far are not examined again.
 */
async function withExtensions(
  { agent, ledger, decisionMac }: { agent: AgentDefinition; ledger: Pick<GuardLedger, 'applyBudgetExtension'> & Pick<ApprovalLedger, 'getBudgetApproval'>; decisionMac?: DecisionMac | undefined },
  turns: TurnRecord[],
  initial: RunRecord,
  decideFor: (run: RunRecord) => BudgetDecision,
): Promise<BudgetDecision> {
  let run = initial;
  for (;;) {
    const decision = decideFor(run);
    if (decision.continue || !isExtendable(decision.guard)) return decision;
    if ((decision.guard === 'loop' ? loopSettings(agent.loops).onLoop : run.config.onBudgetExceeded) !== 'ask') return decision;
    const guard = decision.guard;
    const extension = (run.budgetExtensions?.[guard] ?? 0) + 1;
    const approval = await ledger.getBudgetApproval(run.runId, guard, extension);
    if (approval?.status === 'approved') {
      // Like an approved tool call: applied only when the approval callback signed the decision.
      if (decisionMac && !(await verifiedDecision(decisionMac, approval))) {
        return { ...decision, reason: `${decision.reason} (extension refused: the decision is not signed by the approval callback)` };
      }
      run = await ledger.applyBudgetExtension(run.runId, guard, extension, approval.budget!.limit);
      continue;
    }
    if (approval && approval.status !== 'pending') {
      return { ...decision, reason: `${decision.reason} (extension ${approval.status}${approval.reason ? `: ${approval.reason}` : ''})` };
    }
    return { ...decision, extension: { guard, extension, limit: guard === 'loop' ? (turns.at(-1)?.turn ?? 0) : extendedLimit(run, guard) } };
  }
}

function isExtendable(guard: GuardEvent['guard'] | undefined): guard is ExtendableGuard {
  return (EXTENDABLE_GUARDS as readonly string[]).includes(guard ?? '');
}

export function extendedLimit(run: RunRecord, guard: BudgetGuard): number {
  const limit = run.config[BUDGET_FIELDS[guard]] * (1 + run.config.budgetExtensionPercent / 100);
  return guard === 'dollars' ? Math.round(limit * 100) / 100 : Math.ceil(limit);
}
