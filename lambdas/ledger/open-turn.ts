import type { CallsCount, TurnLedger } from './ledger.js';
import { CALL_DELTAS } from './step-keys.js';
import type { RunRecord, ToolCallRecord } from '../records/ledger-records.js';

/**
 * A turn's tool calls are recorded without a count of their own (issue 38: nothing but the model
 * turns writes the run item while a turn's calls run, so that a call's write may later be
 * conditioned on the run item it was handed). Their steps are counted by the next write on the
 * run item that a model turn makes anyway, or by the run's end:
 *
 *   turn N (counted: turn:N) ─ calls N.1 … N.k (recorded, uncounted) ─┬─ reserve:N+1 + call:N:1…k  (CallModel, guards/reservation.ts)
 *                                                                      └─ finishRun  + call:N:1…k   (the run stopped first)
 *
 * Until then the run item's `steps` and `toolCalls` lag by the open turn's completed calls, and a
 * reader that decides on them counts those calls itself (`withCounted`, from the calls it read);
 * a call is budgeted by its position in its turn (`atPosition`): call c sees the run's count plus
 * the c - 1 calls before it, whichever of them ran first. The run item says which calls it holds
 * (`callsCounted`: those of one turn, and every call before it); the next model turn's reservation
 * closes the turn it counts (that turn starts only once every call is made), and a model turn with
 * no tool call closes itself (reservation.ts `settlement`); the run's end counts what is open
 * without closing it (a run that failed by accident is recovered, and makes the rest of its turn).
 */

/** The completed calls of the run's open turn (its newest counted model turn) that its counters do not hold yet; undefined when none is open. */
export function openCalls(run: Pick<RunRecord, 'modelTurns' | 'callsCounted'>, calls: readonly Pick<ToolCallRecord, 'turn' | 'call' | 'status'>[]): CallsCount | undefined {
  const turn = run.modelTurns;
  const counted = countedOf(run, turn);
  if (turn === 0 || counted === 'all') return undefined;
  return { turn, calls: calls.filter((call) => call.turn === turn && call.status === 'completed' && !counted.includes(call.call)).map((call) => call.call) };
}

/**
 * The calls of the run's open turn, read (a query of that turn) only when one is open: what the
 * run's end and a recovery's verdict count (`openCalls`); none when no turn is open.
 */
export async function openTurnCalls(ledger: Pick<TurnLedger, 'listConversation'>, run: RunRecord): Promise<readonly ToolCallRecord[]> {
  if (!openCalls(run, [])) return [];
  return (await ledger.listConversation(run.runId, { fromTurn: run.modelTurns })).calls;
}

/** `open` as the next model turn counts it: that turn starts only once every call of this one is made (steps/budget-check.ts `decide`). */
export const closing = (open: CallsCount | undefined): CallsCount | undefined => open && { ...open, closed: true };

/** Which calls of `turn` the run's counters hold: all (an earlier turn's), or those listed. */
export function countedOf(run: Pick<RunRecord, 'callsCounted'>, turn: number): 'all' | readonly number[] {
  const counted = run.callsCounted ?? { turn: 0, calls: [] };
  return counted.turn > turn ? 'all' : counted.turn === turn ? counted.calls : [];
}

/** The run with `open` counted, as a read right after the write that counts them would find it (a view: nothing is written). */
export function withCounted<T extends Pick<RunRecord, 'steps' | 'toolCalls'>>(run: T, open: CallsCount | undefined): T {
  const made = open?.calls.length ?? 0;
  return made === 0 ? run : { ...run, steps: run.steps + made * CALL_DELTAS.steps, toolCalls: run.toolCalls + made * CALL_DELTAS.toolCalls };
}

/** The run as call `call` of `turn` is budgeted: the calls before it in its turn counted, those its counters do not hold yet. */
export function atPosition<T extends Pick<RunRecord, 'steps' | 'toolCalls' | 'callsCounted'>>(run: T, turn: number, call: number): T {
  const counted = countedOf(run, turn);
  if (counted === 'all') return run;
  // The calls before it, in a loop: every tool call asks, the first (nothing before it) included.
  const before: number[] = [];
  for (let earlier = 1; earlier < call; earlier++) if (!counted.includes(earlier)) before.push(earlier);
  return withCounted(run, { turn, calls: before });
}
