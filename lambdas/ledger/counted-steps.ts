import type { CallsCount } from './ledger.js';
import { CALL_DELTAS, callStepKey, modelCallKeys, reservedTurnOf } from './step-keys.js';
import type { Counters, RunRecord } from '../records/ledger-records.js';
import { countedOf } from './open-turn.js';
import { childStepOf } from '../records/child-budget.js';

/**
 * A run item's counters and its window of counted step keys, which make each count exactly-once
 * (protocol.ts `countStep`).
 */

/**
 * The counted step keys a run item keeps: the newest, in the order they were counted. Enough for
 * exactly-once because a run's steps are sequential — one execution drives a run, and a step is
 * retried (by the state machine, or by the execution that resumes a dead one) before the run goes
 * on — so between a step's count and its retry nothing else is counted but the approval waits of
 * its turn (a reservation's write counts the last turn's calls too, its own key the newest, so its
 * retry finds that key however many calls came before it). Keeping them all grew the item by one key a step: write
 * units rose with the run's length (quadratic over a run) and a run failed every write past
 * ~40,000 steps (DynamoDB's 400 KB item), RecordFailure included (issue 20 item 7).
 */
export const COUNTED_STEPS_KEPT = 64;

/**
 * A run item's storage attributes with `keys` counted: the window's newest COUNTED_STEPS_KEPT, and
 * every child reservation still open however old (records/child-budget.ts) — a child runs while
 * its parent's turn counts any number of other steps (a turn of many calls: their children's
 * counts, their approval waits), and its settle must find its reservation. A reservation whose
 * settle is counted is closed: its key goes (the settle's key ages as any other).
 */
export function withKeys<M extends { countedSteps?: string[] }>(meta: M, keys: readonly string[]): M {
  if (keys.length === 0) return meta;
  const all = [...(meta.countedSteps ?? []), ...keys];
  if (!all.some(isChildStep)) return { ...meta, countedSteps: all.slice(-COUNTED_STEPS_KEPT) };
  const settled = new Set(all.flatMap((key) => (childStepOf(key)?.is === 'settle' ? [childStepOf(key)!.reserve] : [])));
  const open = (key: string) => !settled.has(key) && childStepOf(key)?.is === 'reserve';
  const newest = new Set(all.filter((key) => !open(key) && !settled.has(key)).slice(-COUNTED_STEPS_KEPT));
  return { ...meta, countedSteps: all.filter((key) => open(key) || newest.has(key)) };
}

const isChildStep = (key: string) => key.startsWith('child:');

/**
 * Whether `key` may count now, besides not being counted yet (protocol.ts `countStep`): a child's
 * settle only while its reservation is open (a second settle, however late, finds it closed); a
 * reservation only while its settle is not counted (its callers count it before the child can end:
 * tools/child-runs.ts). Any other key, always.
 */
export function mayCount(counted: readonly string[], key: string): boolean {
  const step = isChildStep(key) ? childStepOf(key) : undefined;
  if (!step) return true;
  return step.is === 'settle' ? counted.includes(step.reserve) : !counted.includes(step.settle);
}

/**
 * Adds `deltas` to a run record's counters, in place (protocol.ts `countStep`). The children open
 * count from zero (records/child-budget.ts): a settle of a reservation counted before they were
 * (0.21.0) leaves zero, not −1, and a run left below zero by one (0.21.1) reserves from zero.
 */
export function addCounts(record: Record<string, unknown>, deltas: Partial<Counters>): void {
  for (const [name, delta] of Object.entries(deltas)) {
    if (!delta) continue;
    const before = (record[name] as number | undefined) ?? 0;
    record[name] = name === 'childRunsOpen' ? Math.max(0, Math.max(0, before) + delta) : before + delta;
  }
}

/**
 * Counts an open turn's completed calls into `record` (a run record, in place), each once: not
 * one its `callsCounted` holds, nor one whose key is in `counted`, the run item's window of
 * counted keys (a call that counted itself, before calls stopped counting); `callsCounted` then
 * holds them (and, for a closed turn, every call of it). The keys it counted.
 */
export function countCalls(record: Record<string, unknown>, counted: readonly string[], { turn, calls, closed }: CallsCount): string[] {
  const held = countedOf(record as Pick<RunRecord, 'callsCounted'>, turn);
  if (held === 'all') return [];
  const adding = calls.filter((call) => !held.includes(call));
  // A closed turn's calls are all held: the next turn's list starts empty.
  record['callsCounted'] = closed ? { turn: turn + 1, calls: [] } : { turn, calls: [...held, ...adding] };
  const keys = adding.map((call) => callStepKey(turn, call)).filter((key) => !counted.includes(key));
  for (const _key of keys) addCounts(record, CALL_DELTAS);
  return keys;
}

/**
 * A killed run's model call still in flight (its invocation outlives the execution's stop, as a
 * Lambda's does) is spent at its reservation, the most it may cost, in `record` (in place): the
 * kill's end reads the run's spend as final — its fleet lease given back, a child's spend settled
 * into its parent — so the turn, landing after, is recorded for the trace but counts nothing (its
 * `turn:N`, returned here: protocol.ts `finishRun` counts it with the end). Else the run would
 * spend after the end that booked it: less than its lease kept (the day's counter holding the
 * difference), more than its parent carries. A killed run is never resumed: no later call of that
 * turn needs the key.
 *
 *   reserve:N counted, turn:N not ─► costMicros += reservedMicros, inputTokens += reservedTokens, none reserved; turn:N counted
 */
export function spendInFlight(record: RunRecord & Record<string, unknown>, counted: readonly string[]): string[] {
  const open = counted.flatMap((key) => {
    const turn = reservedTurnOf(key);
    return turn === undefined || counted.includes(modelCallKeys(turn).turn) ? [] : [modelCallKeys(turn).turn];
  });
  if (open.length === 0) return [];
  addCounts(record, { costMicros: record.reservedMicros ?? 0, inputTokens: record.reservedTokens ?? 0, reservedMicros: -(record.reservedMicros ?? 0), reservedTokens: -(record.reservedTokens ?? 0) });
  return open;
}
