import { CALL_DELTAS, callStepKey, type CallsCount } from './ledger.js';
import type { Counters } from '../records/ledger-records.js';

/**
 * A run item's counters and its window of counted step keys, which make each count exactly-once
 * (protocol.ts `countStep`).
 */

/**
 * The counted step keys a run item keeps: the newest, in the order they were counted. Enough for
 * exactly-once because a run's steps are sequential — one execution drives a run, and a step is
 * retried (by the state machine, or by the execution that resumes a dead one) before the run goes
 * on — so between a step's count and its retry nothing else is counted but the approval waits of
 * its turn and its turn's other tool calls. Keeping them all grew the item by one key a step: write
 * units rose with the run's length (quadratic over a run) and a run failed every write past
 * ~40,000 steps (DynamoDB's 400 KB item), RecordFailure included (issue 20 item 7).
 */
export const COUNTED_STEPS_KEPT = 64;

/** A run item's storage attributes with `keys` counted: the window's newest COUNTED_STEPS_KEPT. */
export function withKeys<M extends { countedSteps?: string[] }>(meta: M, keys: readonly string[]): M {
  return keys.length === 0 ? meta : { ...meta, countedSteps: [...(meta.countedSteps ?? []), ...keys].slice(-COUNTED_STEPS_KEPT) };
}

/** Adds `deltas` to a run record's counters, in place (protocol.ts `countStep`). */
export function addCounts(record: Record<string, unknown>, deltas: Partial<Counters>): void {
  for (const [name, delta] of Object.entries(deltas)) if (delta) record[name] = ((record[name] as number | undefined) ?? 0) + delta;
}

/**
 * Counts an open turn's completed calls into `record` (a run record, in place), each once by its
 * key — not one in `counted`, the run item's window of counted keys (a call that counted itself,
 * before calls stopped counting) — unless the run counted that turn's calls already
 * (`callsCountedThrough`), and moves `callsCountedThrough` on to the turn; the keys it counted.
 */
export function countCalls(record: Record<string, unknown>, counted: readonly string[], { turn, calls }: CallsCount): string[] {
  if (((record['callsCountedThrough'] as number | undefined) ?? 0) >= turn) return [];
  record['callsCountedThrough'] = turn;
  const keys = calls.map((call) => callStepKey(turn, call)).filter((key) => !counted.includes(key));
  for (const _key of keys) addCounts(record, CALL_DELTAS);
  return keys;
}
