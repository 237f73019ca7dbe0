import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { inputTokensOf, type Message, type ToolResultBlock } from '../records/messages.js';
import { toolNames, toolSpecs, type AgentDefinition } from '../define.js';
import { modelBreaker, toolsBreaker, type CircuitBreaker } from '../guards/breaker.js';
import { budgetHint, wallClockEnd, type Reservation } from '../guards/budgets.js';
import { HistoryBound } from '../guards/history.js';
import { nextCallReservation } from '../guards/request-size.js';
import { reserveModelCall, settleModelCall, settlement } from '../guards/reservation.js';
import { modelForTurn } from '../guards/fallback.js';
import { loopSettings, loopVerdict, type LoopSettings } from '../guards/loops.js';
import type { CallsCount, FleetLedger, TurnSeen } from '../ledger/ledger.js';
import type { FleetBudget } from '../records/fleet.js';
import type { GuardEvent, RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
import { costOf, DEFAULT_PRICE_TABLE } from '../models/prices.js';
import type { ModelRegistry } from '../models/registry.js';
import { parseModelSpec } from '../models/spec.js';
import { InvalidInputError, ModelRetryAfterError, ModelThrottledError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { AttemptCut, boundedAttempt } from '../tools/attempt.js';
import { compactedView, firstTurnOf } from '../conversation/compaction.js';
import { checkVersion, type CodeFingerprint } from '../runs/versions.js';
import { answerNames, rememberTurn, toolUses, type ConversationStep } from '../conversation/turns.js';
import { plannedCalls, type ToolCallItem } from '../conversation/tool-calls.js';
import { check, isEmptyAnswer, isFinalAnswer, withHistoryBound, type Decided, type DecisionDeps } from './budget-check.js';
import { counted } from '../shared/text.js';
import { closing } from '../ledger/open-turn.js';
import { handOn, type HandedStep } from './handed-step.js';
import { RecentMap } from '../shared/recent-map.js';

/** `history`: the execution's history bound at the last decision (StartRun's at the execution's start: lambdas/guards/history.ts). */
export const CallModelInput = schemaOnFirstUse(() => z.object({ runId: z.string().min(1), history: HistoryBound().optional() }));

/**
 * CallModel's answer: the decision it made before the call (steps/budget-check.ts), and, when that
 * decision let a model turn through, the turn (ModelTurn). A decision to stop, ask for an
 * extension, hand off, compact or finish a turn's pending calls comes back without a model call.
 * After the model's final answer, the decision is the one made after the turn: the run's end (or
 * a budget extension to ask for), with the turn.
 */
export type CallModelResult = Decided | (Decided & ModelTurn);

/** The model turn CallModel made (or found recorded). */
export interface ModelTurn {
  turn: number;
  stopReason: string;
  toolCalls: number;
  /** The turn's tool calls still to make, in call order: the `ToolCalls` Map's items (empty: none). */
  calls: ToolCallItem[];
  /** Set when a guard tripped as the call was reserved: the model was not called; the next decision stops the run. */
  skipped?: string;
  /** The guard that skipped the call (`fleet`: the fleet budget refused it, an alarm's metric). */
  skippedBy?: GuardEvent['guard'];
  /** For a person following the run in the console (no prompt or response text): e.g. `tool_use: 2 tool calls (get_order, issue_refund)`. */
  summary?: string;
  /** The turn's usage and cost. */
  tokens?: { input: number; output: number };
  dollars?: number;
  /** `false` when a retry found the turn counted already (metrics count a turn once). */
  counted?: boolean;
  /** What the turn's write left, handed to its calls (handed-step.ts): absent when it has no calls, or nothing could be handed. */
  handed?: HandedStep;
}

export interface CallModelDeps extends DecisionDeps {
  /** This code's fingerprint: the run must be bound to it (steps/versions.ts), and each turn records it. */
  fingerprint: CodeFingerprint;
  ledger: DecisionDeps['ledger'] & Pick<FleetLedger, 'reserveInFleet' | 'returnFleetLease'>;
  /** A client per `provider:model-id`, built once per container. */
  models: ModelRegistry;
  breaker: CircuitBreaker;
  /** The deployment's fleet budget (records/fleet.ts), each call reserved within it. @default none */
  fleetBudget?: FleetBudget;
}

/**
 * The conversation as the model sees it, rebuilt from the ledger: the run's prompt, then each
 * recorded turn followed by the results of its tool calls. The harness's notes of each turn are
 * appended (as a text block) to the user turn that preceded it, exactly as they were sent, so the
 * same ledger always renders the same bytes. It never travels in the execution's payload (256 KiB
 * limit); only pointers do.
 *
 * A call of a tool the agent does not have (`tools`: the names it has) is sent as text, its answer
 * too: providers refuse a conversation whose tool_use names an undeclared tool.
 */
export function conversation(run: RunRecord, turns: TurnRecord[], calls: ToolCallRecord[], tools?: ReadonlySet<string>): Message[] {
  // Context compaction (compaction.ts): after one, the prompt and summary open, then the recent turns.
  const view = compactedView(run, turns);
  // Calls by turn and position (the first of each): one pass over them, not one per tool use (a
  // run holds hundreds), with no key text made per call (every turn renders them all again). Only
  // the shown turns' are looked up: a compacted run's older calls (thousands) are passed over with
  // one comparison each, not put in maps a turn renders nothing from.
  const byPosition = new Map<number, Map<number, ToolCallRecord>>();
  const firstShown = firstTurnOf(view.turns);
  for (const record of calls) {
    if (record.turn < firstShown) continue;
    let ofTurn = byPosition.get(record.turn);
    if (ofTurn === undefined) byPosition.set(record.turn, (ofTurn = new Map()));
    if (!ofTurn.has(record.call)) ofTurn.set(record.call, record);
  }
  const memory = renderedOf(tools);
  const known = memory.get(run.runId);
  // The run's conversation as this process last rendered it, when it was built from exactly these
  // records (else from the start): each turn renders again only into the turns after it.
  const from = known !== undefined && rendersAs(known, view, byPosition) ? known : undefined;
  const messages: Message[] = from ? [...from.messages] : [{ role: 'user', content: view.opening }];
  const sources: RenderedTurn[] = from ? [...from.turns] : [];
  const declared = (name: string) => tools === undefined || tools.has(name);
  for (const turn of view.turns.slice(sources.length)) {
    withNotes(messages, turn.notes ?? []);
    const uses = toolUses(turn);
    const content = uses.every((use) => declared(use.name))
      ? turn.content
      : turn.content.map((block) => (block.type === 'tool_use' && !declared(block.name) ? { type: 'text' as const, text: `(call of ${block.name} with ${JSON.stringify(block.input)})` } : block));
    // An empty answer is not sent back (providers refuse an assistant message with no content): the
    // next turn's notes, asking again, go in the same user message as the ones it answered.
    if (!isEmptyAnswer(turn)) messages.push({ role: 'assistant', content });
    const answered: RenderedTurn['calls'] = [];
    sources.push({ record: turn, content: turn.content, notes: turn.notes, calls: answered });
    if (uses.length === 0) continue;
    const results: ToolResultBlock[] = [];
    const answers: { type: 'text'; text: string }[] = [];
    uses.forEach((use, index) => {
      const record = byPosition.get(turn.turn)?.get(index + 1);
      if (!record || record.status !== 'completed' || record.result === undefined) {
        throw new InvalidInputError(`turn: tool call ${index + 1} of turn ${turn.turn} (${use.name}) has no recorded result`);
      }
      answered.push({ record, result: record.result, outcome: record.outcome });
      if (declared(use.name)) results.push({ type: 'tool_result', tool_use_id: use.id, content: record.result, ...(record.outcome === 'ok' ? {} : { is_error: true }) });
      // Text comes after the tool results in a user turn.
      else answers.push({ type: 'text', text: `(answer to the call of ${use.name}: ${record.result})` });
    });
    messages.push({ role: 'user', content: [...results, ...answers] });
  }
  if (from === undefined || sources.length > from.turns.length) memory.set(run.runId, { opening: view.opening, turns: sources, messages: [...messages] });
  return messages;
}

/**
 * A conversation `conversation()` rendered, with what it was rendered from: the records (a record
 * never changes once recorded; another ledger, a fork, a resume or a replay reads other objects)
 * and the fields it read of them, so that it is used again only when a rebuild would give the
 * same messages. Its messages are never changed: a caller gets a copy of the list
 * (`withNotes` and the compaction's instructions replace the last message, never edit it).
 */
interface Rendered {
  opening: string;
  turns: readonly RenderedTurn[];
  messages: readonly Message[];
}
interface RenderedTurn {
  record: TurnRecord;
  content: TurnRecord['content'];
  notes: TurnRecord['notes'];
  /** The call record each of its tool uses was answered from, in call order. */
  calls: { record: ToolCallRecord; result: string; outcome: ToolCallRecord['outcome'] }[];
}

/** Whether `known` renders the start of `view`: the same opening, and turn for turn, call for call, the same records as they were read. */
function rendersAs(known: Rendered, view: { opening: string; turns: readonly TurnRecord[] }, byPosition: ReadonlyMap<number, ReadonlyMap<number, ToolCallRecord>>): boolean {
  if (known.opening !== view.opening || known.turns.length > view.turns.length) return false;
  return known.turns.every((source, index) => {
    const turn = view.turns[index]!;
    if (source.record !== turn || source.content !== turn.content || source.notes !== turn.notes) return false;
    const ofTurn = byPosition.get(turn.turn);
    return source.calls.every((call, position) => {
      const record = ofTurn?.get(position + 1);
      return record === call.record && record.status === 'completed' && record.result === call.result && record.outcome === call.outcome;
    });
  });
}

/**
 * The conversations last rendered in this process, per tool set (what an undeclared call renders
 * as depends on it: the set is the agent's, define/tool.ts `toolNames`, one per tool list and
 * never changed) and run: a few runs', as a container lives through many (shared/recent-map.ts).
 */
const renderedByTools = new WeakMap<object, RecentMap<string, Rendered>>();
const NO_TOOLS = {};
const RENDERED_RUNS = 8;
function renderedOf(tools: ReadonlySet<string> | undefined): RecentMap<string, Rendered> {
  const key = tools ?? NO_TOOLS;
  let memory = renderedByTools.get(key);
  if (memory === undefined) renderedByTools.set(key, (memory = new RecentMap(RENDERED_RUNS)));
  return memory;
}

/**
 * Appends the notes to the latest user turn (after its tool results, which must come first), or
 * as a user turn of their own after an assistant turn. Per-turn content goes here, never into the
 * system prompt: the system prompt and the tools stay byte-identical across turns, so a provider's
 * prompt cache keeps matching them.
 */
export function withNotes(messages: Message[], notes: readonly string[]): void {
  if (notes.length === 0) return;
  const text = { type: 'text' as const, text: notes.join('\n') };
  const last = messages.at(-1);
  if (last?.role !== 'user') {
    messages.push({ role: 'user', content: [text] });
    return;
  }
  const blocks = typeof last.content === 'string' ? [{ type: 'text' as const, text: last.content }] : last.content;
  messages[messages.length - 1] = { role: 'user', content: [...blocks, text] };
}

/**
 * The harness's stop decision, then one model call. The decision is made from the same read as
 * the call (steps/budget-check.ts `check`), so the state machine needs no BudgetCheck state, at an
 * execution's start or between turns: the kill switches, the budgets, the run's status and the call's reservation are checked
 * before every model call, on every attempt. A decision other than "call the model" comes back as
 * it is, for the definition's Choice to route. The response and its usage are recorded in the
 * ledger before the step returns; a retry after that point finds the recorded turn and decides
 * from it (its tool calls are pending, or the run is done), without calling the model again.
 */
export function createCallModel(deps: CallModelDeps) {
  return async (input: unknown, signal?: AbortSignal): Promise<CallModelResult> => {
    const { runId, history } = parseOrThrow(CallModelInput(), input, 'CallModel input');
    // One batched read for the decision and the call: the run, the kill flag, the breaker of the
    // agent's model (the model of most runs), and what is new in the conversation; the tools'
    // breaker too, in the same request, to hand on to the turn's calls (handed-step.ts).
    const breakerName = modelBreaker(deps.agent.model);
    const checked = await check(deps, runId, { breaker: breakerName, handedBreaker: toolsBreaker(deps.agent), recording: true });
    const decided = withHistoryBound(checked, history, 'CallModel');
    if (!decided.continue || decided.pending || decided.compact || decided.handoff) return decided;
    const { made, final, held } = await modelTurn(deps, { ...checked.step, run: checked.run, breakerName, open: checked.open }, decided.nextTurn, signal);
    if (final) {
      // A final answer: the run's next decision (it succeeds, or a guard stops it) is made here, as
      // the CallModel after the turn's empty Map would make it: three transitions and an invocation
      // fewer a run. From what the turn's own write saw (the run as counted, the kill flag checked
      // unchanged: no read), or — a retry that found the turn recorded — from a fresh read.
      const after = await decisionAfter(deps, runId, decided.history, held);
      if (after && !after.continue) return { ...after, ...made };
    }
    return { ...decided, ...made };
  };
}

/**
 * The decision after a final answer, or undefined when its read failed: the turn is recorded and
 * counted already, so it goes back as it is (its metrics with it), and the CallModel after the
 * turn's empty Map decides, as it did before 0.9.0, retried as any step.
 */
async function decisionAfter(deps: CallModelDeps, runId: string, history: HistoryBound | undefined, held: ConversationStep | undefined): Promise<Decided | undefined> {
  try {
    return withHistoryBound(await check(deps, runId, { recording: true, ...(held && { held }) }), history, 'CallModel');
  } catch {
    return undefined;
  }
}

/**
 * Model turn `turn` of the run `step` read, called (its cost reserved first) or found recorded;
 * `final` when it is the model's final answer (nothing left to call), and then `held`: the step as
 * a read after the turn's write would find it, when that write saw it (TurnLedger `recordTurn`'s `seen`).
 */
async function modelTurn(
  deps: CallModelDeps,
  step: ConversationStep & { breakerName: string; open: CallsCount | undefined },
  turn: number,
  signal: AbortSignal | undefined,
): Promise<{ made: ModelTurn; final: boolean; held?: ConversationStep }> {
  const { run } = step;
  const fingerprint = checkVersion(run, deps.agent, deps.fingerprint);
  const recorded = step.turns.find((known) => known.turn === turn);
  const previous = step.turns.filter((known) => known.turn < turn);
  // What this turn's call may cost at most: the same from the same records on every attempt.
  const reservation = nextCallReservation(deps.agent, run, previous, step.calls, deps.priceTable);
  let messages: Message[] | undefined;
  if (!recorded) {
    // The call's cost reserved (the decision reserved the same, from the same records), within the
    // fleet's budget too: recorded before the call goes out (once per turn, whatever the attempts),
    // settled below. The previous turn's calls are counted with it (ledger/open-turn.ts).
    const trip = await reserveModelCall(deps.ledger, { run, turn, reservation, now: deps.clock.now(), globalKill: step.globalKill, fleet: deps.fleetBudget, calls: closing(step.open) });
    if (trip) return { made: { turn, stopReason: 'harness_stop', toolCalls: 0, calls: [], skipped: trip.reason, skippedBy: trip.guard }, final: false };
    messages = conversation(run, previous, step.calls, toolNames(deps.agent));
  }
  const called = recorded ? { record: recorded, counted: false } : await callModel(deps, run, turn, signal, { ...step, fingerprint, messages: messages!, reservation });
  // The run's wall clock ran out while the model was answering: nothing recorded (the reservation
  // stands for what the call may have cost); the next decision stops the run.
  if (called instanceof AttemptCut) return { made: { turn, stopReason: 'harness_stop', toolCalls: 0, calls: [], skipped: called.message }, final: false };
  const { record } = called;
  // This function's conversation cache learns the turn it recorded: the next turn's read asks for
  // this turn's calls by their keys, and nothing of this turn or of the one about to be recorded
  // on a guess.
  rememberTurn(deps.ledger, record);
  // The turn this attempt recorded was counted in the same write, the reservation settled to its
  // real usage. A turn found recorded (on the embedded log a crash may have come between the
  // turn's line and the count's) is counted here: idempotent per turn.
  const turnCounted = called.counted || (await settleModelCall(deps.ledger, record, reservation));
  // A recorded turn is a resume: its calls without a recorded result are still to make.
  const calls = plannedCalls(record, step.calls);
  const uses = toolUses(record);
  const made: ModelTurn = {
    turn,
    stopReason: record.stopReason,
    toolCalls: uses.length,
    calls,
    summary: `${record.stopReason}: ${counted(uses.length, 'tool call')}${uses.length > 0 ? ` (${[...new Set(uses.map((use) => use.name))].join(', ')})` : ''}`.slice(0, 200),
    tokens: { input: inputTokensOf(record.usage), output: record.usage.output_tokens },
    dollars: record.costMicros / 1_000_000,
    counted: turnCounted,
  };
  const final = isFinalAnswer(record, previous.at(-1));
  const seen = 'seen' in called ? called.seen : undefined;
  // The turn's calls are handed what its write saw (the run as counted, the kill, their versions): a read call needs no read of its own.
  const handed = calls.length > 0 ? handOn(seen, step.handedBreaker) : undefined;
  if (handed) made.handed = handed;
  const held: ConversationStep | undefined = final && seen ? { run: seen.run, ...(seen.globalKill && { globalKill: seen.globalKill }), breaker: step.breaker, turns: [...previous, record], calls: step.calls } : undefined;
  return { made, final, ...(held && { held }) };
}

async function callModel(
  deps: CallModelDeps,
  run: RunRecord,
  turn: number,
  signal: AbortSignal | undefined,
  step: ConversationStep & { breakerName: string; fingerprint: string; messages: Message[]; reservation: Reservation },
): Promise<{ record: TurnRecord; counted: boolean; seen?: TurnSeen } | AttemptCut> {
  const previous = step.turns.filter((recorded) => recorded.turn < turn);
  if (previous.length !== turn - 1) {
    throw new InvalidInputError(`turn: run ${run.runId} has ${previous.length} recorded turns, cannot call turn ${turn}`);
  }
  const prices = deps.priceTable ?? DEFAULT_PRICE_TABLE;
  // While the run's model is down (its breaker open), the agent's fallback answers, if it names one.
  // (The breaker is read only when there is a fallback to choose: no extra ledger read otherwise.)
  const fallback = deps.agent.fallbackModel;
  const { model } = modelForTurn(run.model, fallback, fallback === undefined || (await deps.breaker.admits(modelBreaker(run.model))));
  const client = await deps.models.clientFor(model);
  const started = deps.clock.now();
  const notes = harnessNotes(run, previous, started, loopSettings(deps.agent.loops));
  const { messages } = step;
  withNotes(messages, notes);
  let response;
  try {
    response = await deps.breaker.call(
      modelBreaker(model),
      // Cut off when the run's wall clock runs out (tools/attempt.ts); the client's own timeout bounds it otherwise.
      () =>
        boundedAttempt(
          (attemptSignal) =>
            client.createMessage(
              {
                model: parseModelSpec(model).model,
                max_tokens: run.config.maxTokensPerTurn,
                system: deps.agent.system,
                messages,
                tools: toolSpecs(deps.agent),
              },
              attemptSignal,
            ),
          { signal, clock: deps.clock, stopAt: wallClockEnd(run), what: `the model call of turn ${turn}` },
        ),
      // The breaker read with the step's batch, when it is this model's: no second read.
      modelBreaker(model) === step.breakerName ? step.breaker : undefined,
    );
  } catch (error) {
    if (error instanceof AttemptCut && error.cut.kind === 'wallClock') return error;
    // The provider said how long to wait: the state machine waits at least that (a Retry's
    // backoff cannot read it). The breaker has already counted the throttle.
    if (error instanceof ModelThrottledError && error.retryAfterSeconds !== undefined) {
      throw new ModelRetryAfterError(error.retryAfterSeconds, error.message, { cause: error });
    }
    throw error;
  }
  const recordedAt = deps.clock.now();
  const turnRecord: TurnRecord = {
    kind: 'turn',
    runId: run.runId,
    turn,
    model,
    // The provider's names for its answer (its id, the model as it named it), kept for the trace.
    ...answerNames(response),
    notes,
    content: response.content,
    stopReason: response.stop_reason,
    usage: response.usage,
    costMicros: Math.round(costOf(model, response.usage, prices) * 1_000_000),
    latencyMs: recordedAt.getTime() - started.getTime(),
    recordedAt: recordedAt.toISOString(),
    // Which code made this step: a run's turns show the version it ran on, turn by turn.
    fingerprint: step.fingerprint,
  };
  // The turn's write says what it saw: a final answer's checks the kill flag too, and the decision
  // after it needs no read; a turn's calls are handed it, and check the kill flag at their own write (handed-step.ts).
  let seen: TurnSeen | undefined;
  const count = settlement(turnRecord, step.reservation);
  const tell = (saw: TurnSeen) => (seen = saw);
  const stored = await deps.ledger.recordTurn(turnRecord, isFinalAnswer(turnRecord, previous.at(-1)) ? { ...count, seen: tell } : { ...count, handing: tell });
  // Another attempt's turn came back (the first recording stands): this write counted nothing.
  return { record: stored, counted: stored.recordedAt === turnRecord.recordedAt, ...(seen && { seen }) };
}

/**
 * What the harness tells the model each turn: the budget left (a soft cap: the harness's counters
 * stay the hard cap) and, when the loop detector sees it repeating itself, a warning.
 */
export function harnessNotes(run: RunRecord, turns: TurnRecord[], now: Date, loops?: LoopSettings): string[] {
  const loop = loopVerdict(turns, loops, run.loopAllowedThrough);
  const last = turns.at(-1);
  return [
    `[harness] ${budgetHint(run, now)}`,
    ...(loop?.action === 'warn' ? [`[harness] Warning: ${loop.reason}. Change your approach or stop.`] : []),
    // Asked again after an empty answer (budget-check.ts isFinalAnswer).
    ...(last && isEmptyAnswer(last) ? ['[harness] Your last answer was empty. Continue the task; when it is done, say so in your answer.'] : []),
  ];
}
