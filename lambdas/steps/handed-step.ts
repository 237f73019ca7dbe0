import * as z from 'zod';
import { RecentMap } from '../shared/recent-map.js';
import { deepFreeze } from '../shared/plain-copy.js';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import type { BreakerState } from '../records/breaker-state.js';
import type { StepBasis, TurnSeen } from '../ledger/ledger.js';
import type { KillFlag, RunRecord, TurnRecord } from '../records/ledger-records.js';

/**
 * What CallModel hands each tool call of its turn (issue 38: a tool call without a read of its
 * own). Between a model turn's write and the next turn's reservation nothing of the loop writes the
 * run item (ledger/open-turn.ts), so what that write left — the run item as counted, the global kill
 * it checked unchanged — is what a call's own read would find, unless something outside the loop
 * changed it (a kill, a stop, an approval's wait counted, a recovery, tampering):
 *
 *   CallModel: read ─ reserve ─ model ─ record the turn ─► handed: the run as written, the kill as read, their versions, the turn, the tools breaker as read, sealed
 *   CallTool, a read:  seal checked ─ checks on what it was handed ─ tool ─ record (a put of its own item)                          1 request
 *   CallTool, a write: seal checked ─ checks ─ claim + ConditionChecks (run, kill on the versions handed) ─ provider ─ outcome         2 requests
 *                                                 └─ a condition failed (an item changed, the claim there): read, decide, act as before (nothing sent)
 *
 * The checks are the same as a read's (the kill, the budget by the call's place in its turn). A
 * read's record carries no condition on the run or kill item: a read changes nothing outside, so a
 * kill that lands while it runs keeps its result, as for any call in flight, and the turn's parallel
 * reads (each in its own Lambda instance on AWS) meet no transaction of each other's. A write's
 * claim does, so a write is never sent for a run killed since its turn. The run item is only
 * checked, never rewritten from what was handed (a DynamoDB condition compares its seal attribute,
 * not its content: a rewrite would seal over an alteration made behind the ledger's back). The
 * payload is the execution's own state (CallModel's result through the ToolCalls Map's
 * ItemSelector), so it is kept small: nothing is handed past HANDED_STEP_MAX_BYTES, and a call
 * handed nothing reads as before. Whoever may invoke CallTool could hand it a state of their own:
 * what is handed is checked against the seal the turn's write made over it before anything of it
 * is sent (Ledger `checkHanded`).
 */
export interface HandedStep {
  /** The versions of the run item and the global kill item the checks are made on, and the seal over them and `state`. */
  basis: Omit<StepBasis, 'content'>;
  /**
   * What the checks are made on, as the JSON text the turn's write sealed (handed-versions.ts
   * `handedContent`: the run item as written, the global kill flag as checked, the turn as
   * recorded): carried as text, so that the seal is checked on the very bytes the call parses,
   * and the state machine copies one string, not the records' trees, on every state it passes.
   */
  state: string;
  /** The tools' breaker as CallModel's read found it: absent when never saved. */
  breaker?: BreakerState;
}

/** A handed state as a call takes it back (`handedTo`): `state` parsed. */
export interface TakenStep extends HandedStep {
  /** The run item as the turn's write left it. */
  run: RunRecord;
  /** The global kill flag as that write checked it. */
  globalKill?: KillFlag;
  /** The turn as recorded (the calls' tool_use blocks). */
  turn: TurnRecord;
}

/**
 * The most a handed state may weigh, as JSON: each of the Map's iterations gets a copy (with the
 * rest of CallModel's small result), well under Step Functions' 256 KiB a state; a run whose input
 * or turn is larger hands nothing, and its calls read.
 */
export const HANDED_STEP_MAX_BYTES = 32 * 1024;

/**
 * How long after its turn was recorded a call takes what it was handed: a first attempt starts
 * within moments (its Map iteration is scheduled as CallModel returns; a cold function's start
 * included), while a retry comes after its failed attempt — a Task that timed out, a function that
 * died after its record — and must find its record, and the breaker as it stands, before it sends
 * again (`$$.State.RetryCount` would tell a retry apart, but the local engine does not set it; an
 * instance knows the retries it sees itself: `HandedAttempts`). A retry elsewhere
 * within this time re-sends a read that took less than it (its record's condition finds the first)
 * past a breaker that opened meanwhile, as a call that read it a moment before; a call that starts
 * later (queued behind the Map's MaxConcurrency) reads first, as every call did.
 */
export const HANDED_FRESH_MS = 10_000;

/** Whether a handed state is fresh enough to act on at `now` (HANDED_FRESH_MS from its turn's record). */
export const freshAt = (handed: Pick<TakenStep, 'turn'>, now: Date): boolean => {
  const age = now.getTime() - Date.parse(handed.turn.recordedAt);
  return age >= 0 && age <= HANDED_FRESH_MS;
};

/** What a turn's write saw, handed on to its calls; undefined when the engine named no versions or it is too large. */
export function handOn(seen: TurnSeen | undefined, breaker: { state?: BreakerState } | undefined): HandedStep | undefined {
  const basis = seen?.basis;
  if (basis?.content === undefined || !breaker) return undefined;
  const { run, kill, mac, content: state } = basis;
  const handed: HandedStep = { basis: { run, kill, mac }, state, ...(breaker.state && { breaker: breaker.state }) };
  // Weighed as the payload carries it: the text escaped within the JSON, once a turn — measured only
  // when a bound does not already show it fits (a UTF-16 unit of the text is at most 6 bytes of it, escaped).
  const rest = Buffer.byteLength(JSON.stringify({ ...handed, state: '' }), 'utf8');
  if (rest + 6 * state.length <= HANDED_STEP_MAX_BYTES) return handed;
  return Buffer.byteLength(JSON.stringify(handed), 'utf8') <= HANDED_STEP_MAX_BYTES ? handed : undefined;
}

// The records are the ledger's own, sealed by the turn's write: their shape is checked where it is
// used (a malformed one reads instead), not re-validated field by field here. Made on first use
// (schemaOnFirstUse): only a tool call that was handed a state parses one.
const Handed = schemaOnFirstUse(() =>
  z.object({
    basis: z.object({ run: z.string().min(1), kill: z.string().min(1).nullable(), mac: z.string().min(1) }).strict(),
    state: z.string().min(2),
    breaker: z.object({ name: z.string() }).passthrough().optional(),
  }),
);
const State = schemaOnFirstUse(() => {
  const record = z.object({ runId: z.string(), kind: z.string() }).passthrough();
  return z.object({
    run: record.extend({ kind: z.literal('run') }),
    globalKill: z.object({}).passthrough().optional(),
    turn: record.extend({ kind: z.literal('turn'), turn: z.number().int().positive(), content: z.array(z.unknown()), recordedAt: z.string() }),
  });
});

/** The records of a handed state, as its text parses (`state`), checked for the shape used. */
type HandedRecords = Pick<TakenStep, 'run' | 'globalKill' | 'turn'>;

/**
 * A function instance's memo of the handed states it parsed (`handedTo`), by their text: the calls
 * of one turn are handed one text, and an instance (a warm Lambda one, the local runtime's) serves
 * several of them, so the text is parsed and its shape checked once, not once a call. The records
 * are frozen: every call of the turn reads the same ones, and none may change them for the others.
 * `null`: the text is not a state in the expected shape.
 */
export function handedStates(): RecentMap<string, HandedRecords | null> {
  return new RecentMap(8);
}

/**
 * The state CallTool was handed for call `turn`/`call` of `runId` (its input's `made`: CallModel's
 * whole result), parsed, or undefined: none handed, another run's or turn's, not in the expected
 * shape, or no longer fresh at `now` (HANDED_FRESH_MS). Its seal is the ledger's to check
 * (`checkHanded`, with `state` as the basis's content) before anything of it is acted on.
 * `states`: the instance's memo of the states it parsed (`handedStates`).
 */
export function handedTo(made: unknown, runId: string, turn: number, now: Date, states = handedStates()): TakenStep | undefined {
  const handed = (made as { handed?: unknown } | null | undefined)?.handed;
  if (handed === undefined || handed === null) return undefined;
  const wire = Handed().safeParse(handed);
  if (!wire.success) return undefined;
  const records = states.getOrSet(wire.data.state, () => parsedState(wire.data.state));
  if (records === null || records.run.runId !== runId || records.turn.runId !== runId || records.turn.turn !== turn) return undefined;
  const taken = { ...(wire.data as HandedStep), ...records };
  return freshAt(taken, now) ? taken : undefined;
}

/** A handed state's text as records, frozen, or null when it is not JSON in the shape checked. */
function parsedState(text: string): HandedRecords | null {
  let records: unknown;
  try {
    records = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = State().safeParse(records);
  return parsed.success ? deepFreeze(parsed.data as unknown as HandedRecords) : null;
}

/**
 * The calls a CallTool instance was handed a state for. A Retry invokes it again with the same input
 * (`$$.State.RetryCount` would say so, but the local engine does not set it): a second attempt
 * this instance sees reads first, and so finds its record, and the breaker as it stands (a breaker
 * handed closed would let every retry through to a provider that has failed since). A retry in
 * another instance is held off by the handed state's age instead (HANDED_FRESH_MS).
 */
export class HandedAttempts {
  /** The calls seen, in the order seen (a Set keeps insertion order), so the oldest go first. */
  private readonly seen = new Set<string>();
  /** Whether this is the first attempt this instance sees of the call. */
  first(runId: string, turn: number, call: number): boolean {
    const key = `${runId}\u0000${turn}\u0000${call}`;
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    // At most so many (a long-lived local stack serves every run's calls): a call forgotten is as a
    // retry in another instance, held off by the handed state's age (HANDED_FRESH_MS).
    if (this.seen.size > HandedAttempts.KEPT) this.seen.delete(this.seen.values().next().value!);
    return true;
  }
  /** The most calls remembered: on AWS an instance serves one invocation at a time; a local stack serves all its runs' calls. */
  private static readonly KEPT = 128;
}
