import { inputTokensOf, type MessageResponse, type ToolUseBlock } from '../records/messages.js';
import type { AgentDefinition, RunView } from '../define.js';
import type { BreakerState } from '../records/breaker-state.js';
import { parseBlobRef, resolveResults } from '../ledger/blobs.js';
import { MAX_STEP_KEYS, type BlobStore, type RunLedger, type TurnLedger } from '../ledger/ledger.js';
import type { KillFlag, RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
import { InvalidInputError } from '../shared/errors.js';

/**
 * The turn's tool calls, in call order. Worked out once per record (a recorded turn never changes,
 * and every step of its turn asks, several times): kept beside the record, as long as it lives.
 */
export function toolUses(turn: Pick<TurnRecord, 'content'>): readonly ToolUseBlock[] {
  let uses = usesOf.get(turn.content);
  if (uses === undefined) usesOf.set(turn.content, (uses = Object.freeze(turn.content.filter((block): block is ToolUseBlock => block.type === 'tool_use'))));
  return uses;
}
const usesOf = new WeakMap<object, readonly ToolUseBlock[]>();

const AGENT_DEPS = Symbol('the agent deps');
type WithDeps = AgentDefinition & { readonly [AGENT_DEPS]?: () => unknown };

/**
 * The agent with what its `deps` build (once per container, the object `execute` gets), for its
 * approval rules: whichever step asks a rule (CallModel and BudgetCheck planning the call,
 * RequestApproval, CallTool), the rule gets them. The wiring hands its steps this agent.
 */
export function withAgentDeps(agent: AgentDefinition, deps: () => unknown): AgentDefinition {
  return { ...agent, [AGENT_DEPS]: deps } as WithDeps;
}

/** What the agent's `deps` build, for its approval rules; undefined for an agent not wired by withAgentDeps. */
export function agentDepsOf(agent: AgentDefinition): unknown {
  return (agent as WithDeps)[AGENT_DEPS]?.();
}

/**
 * The run's completed calls, among them every one of turns 1..`throughTurn` (later ones too, when
 * known). From the steps' conversation cache: usually no read beyond the step's own (completed
 * calls never change); the conversation is read only when the cache does not cover those turns.
 */
export async function completedCallsThrough(ledger: TurnLedger & BlobStore, runId: string, throughTurn: number): Promise<ToolCallRecord[]> {
  const known = knownOf(ledger, runId);
  if (known.settled >= throughTurn) return [...known.calls.values()];
  return (await loadConversationStep(ledger, runId)).calls;
}

/**
 * Tells this process's conversation cache of a turn a step read (it learns it if it is the next
 * one it lacks), so that with the calls it completes (`rememberCall`) a later turn's approval rule
 * needs no read: CallTool learns each turn whose calls it makes, as its own loadStep reads it.
 */
export function rememberTurn(ledger: object, turn: TurnRecord): void {
  learn(knownOf(ledger, turn.runId), [turn], []);
}

/** Tells this process's conversation cache of a call a step just completed, so that later rules need not read it back. */
export function rememberCall(ledger: object, record: ToolCallRecord): void {
  // A result stored by reference is left to the next read, which resolves it: the cache holds
  // whole results, so an approval rule's facts are the same whichever step built them.
  if (parseBlobRef(record.result)) return;
  learn(knownOf(ledger, record.runId), [], [record]);
}

export function runView(run: RunRecord): RunView {
  return { runId: run.runId, input: run.input, config: run.config };
}

export async function loadRun(ledger: Pick<RunLedger, 'getRun'>, runId: string): Promise<RunRecord> {
  const run = await ledger.getRun(runId);
  if (!run) throw new InvalidInputError(`runId: no run ${runId} in the ledger`);
  return run;
}

/** The recorded turn `turnNumber` of a run, which the step was handed a call of. */
export async function loadTurn(ledger: Pick<TurnLedger, 'getTurn'>, runId: string, turnNumber: number): Promise<TurnRecord> {
  const turn = await ledger.getTurn(runId, turnNumber);
  if (!turn) throw new InvalidInputError(`turn: run ${runId} has no turn ${turnNumber}`);
  return turn;
}

/** The idempotency key of a tool call: the same for every attempt, every resume, every engine. */
export function idempotencyKey(runId: string, turn: number, toolCallId: string): string {
  return `${runId}:${turn}:${toolCallId}`;
}

/**
 * What the steps in this process know of each run's conversation. A turn never changes once
 * recorded, nor does a completed tool call, so a step reads only what is new — in the same
 * batched read as the run record, the kill flag and the breaker — instead of querying the whole
 * partition every turn. Kept per ledger (a fresh ledger is a fresh cache) for a few runs.
 */
interface Known {
  /** Turns 1..n, contiguous. */
  turns: TurnRecord[];
  /** The completed calls of those turns, by `turn:call`. */
  calls: Map<string, ToolCallRecord>;
  /** Every call of turns 1..settled is in `calls`. */
  settled: number;
}

const knownByLedger = new WeakMap<object, Map<string, Known>>();
const KNOWN_RUNS = 16;
/** Calls of a turn not seen yet that the batched read asks for on a guess (missing keys cost nothing more). */
const GUESSED_CALLS = 8;

function knownOf(ledger: object, runId: string): Known {
  let runs = knownByLedger.get(ledger);
  if (!runs) knownByLedger.set(ledger, (runs = new Map()));
  let known = runs.get(runId);
  if (known) runs.delete(runId);
  else known = { turns: [], calls: new Map(), settled: 0 };
  runs.set(runId, known); // the most recently used last
  if (runs.size > KNOWN_RUNS) runs.delete(runs.keys().next().value!);
  return known;
}

const callId = (turn: number, call: number) => `${turn}:${call}`;

function learn(known: Known, turns: readonly TurnRecord[], calls: readonly ToolCallRecord[]): void {
  for (const turn of [...turns].sort((a, b) => a.turn - b.turn)) if (turn.turn === known.turns.length + 1) known.turns.push(turn);
  for (const call of calls) if (call.status === 'completed') known.calls.set(callId(call.turn, call.call), call);
  while (known.settled < known.turns.length && toolUses(known.turns[known.settled]!).every((_use, index) => known.calls.has(callId(known.settled + 1, index + 1)))) {
    known.settled += 1;
  }
}

/** The calls of known turns not known to be completed. */
function unsettledCalls(known: Known): { turn: number; call: number }[] {
  return known.turns.slice(known.settled).flatMap((turn) =>
    toolUses(turn).flatMap((_use, index) => (known.calls.has(callId(turn.turn, index + 1)) ? [] : [{ turn: turn.turn, call: index + 1 }])),
  );
}

/** `loadConversationStep`'s caller is about to record the turn after the last one it knows (CallModel, deciding first). */
export const NEXT_TURN = 'next';

export interface ConversationStep {
  run: RunRecord;
  globalKill?: KillFlag;
  /** The breaker asked for, as read (absent when never saved). */
  breaker: { state?: BreakerState };
  /** The breaker read to hand on, when asked for (steps/handed-step.ts). */
  handedBreaker?: { state?: BreakerState };
  /** Every recorded turn of the run, in order. */
  turns: TurnRecord[];
  /** Every completed tool call of those turns. */
  calls: ToolCallRecord[];
}

/**
 * What a decision and a model call need (BudgetCheck, CallModel), usually in one round trip: the run, the global kill, a
 * breaker, and the whole conversation — the known part from memory, the new part (the next two
 * turns, the calls of the next one on a guess, the calls still open) in the same batched read.
 * When that read shows more is new (a run driven by another process meanwhile), the rest of the
 * partition from the first unsettled turn is queried. `unrecordedTurn`: the turn the caller is
 * about to record (NEXT_TURN: the one after those known), whose calls are then not guessed.
 */
export async function loadConversationStep(ledger: TurnLedger & BlobStore, runId: string, breaker?: string, unrecordedTurn?: number | typeof NEXT_TURN, handedBreaker?: string): Promise<ConversationStep> {
  const known = knownOf(ledger, runId);
  const next = known.turns.length + 1;
  const open = unsettledCalls(known);
  // The turn the caller is about to record (CallModel's) is rarely there yet: its calls are not
  // guessed (each key asked for and absent is a read unit billed); a retry that finds it recorded,
  // with calls, reads them with the query below.
  const guessed = next === unrecordedTurn || unrecordedTurn === NEXT_TURN ? [] : Array.from({ length: GUESSED_CALLS }, (_, index) => ({ turn: next, call: index + 1 }));
  const batched = open.length + guessed.length + 5 <= MAX_STEP_KEYS;
  const read = await ledger.loadStep(runId, { turns: [next, next + 1], calls: batched ? [...open, ...guessed] : [], ...(breaker !== undefined && { breaker }), ...(handedBreaker !== undefined && { handedBreaker }) });
  if (!read.run) throw new InvalidInputError(`runId: no run ${runId} in the ledger`);
  // Results stored by reference are read once, when first learned (they never change).
  learn(known, read.turns, await resolveResults(ledger, read.calls));
  const nextTurn = read.turns.find((turn) => turn.turn === next);
  const complete = batched && !read.turns.some((turn) => turn.turn === next + 1) && (!nextTurn || toolUses(nextTurn).length <= guessed.length);
  if (!complete) {
    const rest = await ledger.listConversation(runId, { fromTurn: known.settled + 1 });
    learn(known, rest.turns, await resolveResults(ledger, rest.calls));
  }
  return {
    run: read.run,
    ...(read.globalKill && { globalKill: read.globalKill }),
    breaker: { ...(read.breaker && { state: read.breaker }) },
    ...(handedBreaker !== undefined && { handedBreaker: { ...(read.handedBreaker && { state: read.handedBreaker }) } }),
    turns: [...known.turns],
    calls: [...known.calls.values()],
  };
}

/** The number of leading tool calls of `turn` among `calls` (completed ones). */
export function completedCallsOf(turn: TurnRecord, calls: readonly ToolCallRecord[]): number {
  const done = new Set(calls.filter((call) => call.turn === turn.turn && call.status === 'completed').map((call) => call.call));
  let call = 0;
  while (call < toolUses(turn).length && done.has(call + 1)) call += 1;
  return call;
}

/**
 * The longest response id or model name a turn keeps: providers write under 64 characters; an answer
 * naming itself at more is not one to copy into every export of the run.
 */
const MAX_ANSWER_NAME = 256;

/**
 * What a provider named of its answer, as its turn records it (`responseId`, `responseModel`), each
 * when it named it. A name no provider writes (empty, or over MAX_ANSWER_NAME characters) is left
 * out, not clipped: part of an id names nothing. `recordedResponse` gives them back.
 */
export function answerNames(response: Pick<MessageResponse, 'id' | 'model'>): Pick<TurnRecord, 'responseId' | 'responseModel'> {
  const named = (name: string | undefined): name is string => name !== undefined && name.length > 0 && name.length <= MAX_ANSWER_NAME;
  return { ...(named(response.id) && { responseId: response.id }), ...(named(response.model) && { responseModel: response.model }) };
}

/**
 * A recorded turn as the model's response again (the replay and the benchmark's scripted model
 * answer with it), with the id and model the provider named it by when the turn recorded them: the
 * turn the replay records from it is the recorded one, field for field.
 */
export function recordedResponse(recorded: TurnRecord): MessageResponse {
  return {
    ...(recorded.responseId !== undefined && { id: recorded.responseId }),
    type: 'message',
    role: 'assistant',
    ...(recorded.responseModel !== undefined && { model: recorded.responseModel }),
    content: recorded.content as MessageResponse['content'],
    stop_reason: recorded.stopReason as MessageResponse['stop_reason'],
    usage: recorded.usage,
  };
}

/** What one recorded model turn (a compaction included) adds to its run's counters. */
export function turnCounts(record: Pick<TurnRecord, 'usage' | 'costMicros'>) {
  return {
    steps: 1,
    modelTurns: 1,
    inputTokens: inputTokensOf(record.usage),
    outputTokens: record.usage.output_tokens,
    cachedInputTokens: record.usage.cache_read_input_tokens ?? 0,
    costMicros: record.costMicros,
  };
}
