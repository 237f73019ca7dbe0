import { inputTokensOf, type MessageResponse, type ToolUseBlock } from '../agent/messages.js';
import { findTool, type AgentDefinition, type ApprovalRequest, type RunFacts, type RunView } from '../define.js';
import type { BreakerState } from '../guards/breaker.js';
import { resolveResults } from '../ledger/blobs.js';
import { MAX_STEP_KEYS, type BlobStore, type RunLedger, type ToolCallLedger, type TurnLedger } from '../ledger/ledger.js';
import type { KillFlag, RunRecord, ToolCallRecord, TurnRecord } from '../ledger/records.js';
import { InvalidInputError } from '../shared/errors.js';

/** What the state machine carries about the next tool call: a pointer into the ledger, not the call. */
export interface NextToolCall {
  turn: number;
  call: number;
  name: string;
  needsApproval: boolean;
}

export function toolUses(turn: TurnRecord): ToolUseBlock[] {
  return turn.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
}

/**
 * What a person must see before this call runs, by the tool's own approval rule; nothing when it
 * runs on its own. Arguments its schema refuses need no approval: CallTool fails them first.
 */
export function approvalRequest(agent: AgentDefinition, block: ToolUseBlock, run: RunRecord, at: CallAt, calls: readonly ToolCallRecord[]): ApprovalRequest | undefined {
  const tool = findTool(agent, block.name);
  if (!tool?.needsApproval) return undefined;
  const args = tool.input.safeParse(block.input);
  return args.success ? tool.needsApproval(args.data, runView(run), runFacts(calls, at), (agent as WithDeps)[AGENT_DEPS]?.()) : undefined;
}

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

type CallAt = { turn: number; call: number };

/**
 * What the run did before the call at `at`: its completed calls before it, in conversation order.
 * The same set whenever the call's rule is asked (planning it, asking a person, calling it): the
 * calls before it are all completed before it is planned, and later ones are left out.
 */
export function runFacts(calls: readonly ToolCallRecord[], at: CallAt): RunFacts {
  const before = calls.filter((call) => call.status === 'completed' && (call.turn < at.turn || (call.turn === at.turn && call.call < at.call)));
  before.sort((a, b) => a.turn - b.turn || a.call - b.call);
  return { calls: before.map(({ turn, call, name, args, outcome }) => ({ turn, call, name, args, ...(outcome && { outcome }) })) };
}

/**
 * The run's completed calls, for the approval rule of `block`'s tool; none read when the tool has no
 * rule (most calls). From the steps' conversation cache: usually no read beyond the step's own.
 */
export async function callsForApproval(ledger: TurnLedger & BlobStore, agent: AgentDefinition, runId: string, block: ToolUseBlock | undefined, at: CallAt): Promise<ToolCallRecord[]> {
  if (!block || !findTool(agent, block.name)?.needsApproval) return [];
  // Every call before `at` known already (completed calls never change): no read at all.
  const known = knownOf(ledger, runId);
  const earlierInTurn = Array.from({ length: at.call - 1 }, (_, index) => callId(at.turn, index + 1));
  if (known.settled >= at.turn - 1 && earlierInTurn.every((id) => known.calls.has(id))) return [...known.calls.values()];
  return (await loadConversationStep(ledger, runId)).calls;
}

/** Tells this process's conversation cache of a call a step just completed, so that later rules need not read it back. */
export function rememberCall(ledger: object, record: ToolCallRecord): void {
  learn(knownOf(ledger, record.runId), [], [record]);
}

export function runView(run: RunRecord): RunView {
  return { runId: run.runId, input: run.input, config: run.config };
}

/** The tool call after `afterCall` (1-based) in `turn`, or null when the turn has no more. */
export function nextToolCall(agent: AgentDefinition, turn: TurnRecord, afterCall: number, run: RunRecord, calls: readonly ToolCallRecord[]): NextToolCall | null {
  const block = toolUses(turn)[afterCall];
  if (!block) return null;
  const at = { turn: turn.turn, call: afterCall + 1 };
  return { ...at, name: block.name, needsApproval: approvalRequest(agent, block, run, at, calls) !== undefined };
}

export async function loadRun(ledger: Pick<RunLedger, 'getRun'>, runId: string): Promise<RunRecord> {
  const run = await ledger.getRun(runId);
  if (!run) throw new InvalidInputError(`runId: no run ${runId} in the ledger`);
  return run;
}

export async function loadToolUse(
  ledger: Pick<TurnLedger, 'getTurn'>,
  runId: string,
  turnNumber: number,
  call: number,
): Promise<{ turn: TurnRecord; block: ToolUseBlock }> {
  const turn = await ledger.getTurn(runId, turnNumber);
  const block = turn ? toolUses(turn)[call - 1] : undefined;
  if (!turn || !block) throw new InvalidInputError(`call: run ${runId} has no tool call ${call} in turn ${turnNumber}`);
  return { turn, block };
}

/** The idempotency key of a tool call: the same for every attempt, every resume, every engine. */
export function idempotencyKey(runId: string, turn: number, toolCallId: string): string {
  return `${runId}:${turn}:${toolCallId}`;
}

/** The number of leading tool calls of a recorded turn that already have their result. */
export async function completedCalls(ledger: Pick<ToolCallLedger, 'getCall'>, turn: TurnRecord): Promise<number> {
  let call = 0;
  while (call < toolUses(turn).length && (await ledger.getCall(turn.runId, turn.turn, call + 1))?.status === 'completed') call += 1;
  return call;
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

export interface ConversationStep {
  run: RunRecord;
  globalKill?: KillFlag;
  /** The breaker asked for, as read (absent when never saved). */
  breaker: { state?: BreakerState };
  /** Every recorded turn of the run, in order. */
  turns: TurnRecord[];
  /** Every completed tool call of those turns. */
  calls: ToolCallRecord[];
}

/**
 * What BudgetCheck and CallModel need, usually in one round trip: the run, the global kill, a
 * breaker, and the whole conversation — the known part from memory, the new part (the next two
 * turns, the calls of the next one on a guess, the calls still open) in the same batched read.
 * When that read shows more is new (a run driven by another process meanwhile), the rest of the
 * partition from the first unsettled turn is queried.
 */
export async function loadConversationStep(ledger: TurnLedger & BlobStore, runId: string, breaker?: string): Promise<ConversationStep> {
  const known = knownOf(ledger, runId);
  const next = known.turns.length + 1;
  const open = unsettledCalls(known);
  const guessed = Array.from({ length: GUESSED_CALLS }, (_, index) => ({ turn: next, call: index + 1 }));
  const batched = open.length + guessed.length + 5 <= MAX_STEP_KEYS;
  const read = await ledger.loadStep(runId, { turns: [next, next + 1], calls: batched ? [...open, ...guessed] : [], ...(breaker !== undefined && { breaker }) });
  if (!read.run) throw new InvalidInputError(`runId: no run ${runId} in the ledger`);
  // Results stored by reference are read once, when first learned (they never change).
  learn(known, read.turns, await resolveResults(ledger, read.calls));
  const nextTurn = read.turns.find((turn) => turn.turn === next);
  const complete = batched && !read.turns.some((turn) => turn.turn === next + 1) && (!nextTurn || toolUses(nextTurn).length <= GUESSED_CALLS);
  if (!complete) {
    const rest = await ledger.listConversation(runId, { fromTurn: known.settled + 1 });
    learn(known, rest.turns, await resolveResults(ledger, rest.calls));
  }
  return {
    run: read.run,
    ...(read.globalKill && { globalKill: read.globalKill }),
    breaker: { ...(read.breaker && { state: read.breaker }) },
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

/** A recorded turn as the model's response again (the replay and the benchmark's scripted model answer with it). */
export function recordedResponse(recorded: TurnRecord, model: string, id: string): MessageResponse {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
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
