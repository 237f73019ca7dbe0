import type { StepCount, TurnSeen } from './ledger.js';
import type { KillFlag, RunRecord, TurnRecord } from '../records/ledger-records.js';
import { recordTurnCounted, type Current, type ItemsStep } from './protocol.js';

/**
 * The ledger's protocol (protocol.ts) for a final answer's write, which tells its step what it saw.
 */

/*
 * Requests per agent step on DynamoDB (issue 38: ≤ 2 wanted; bench/check.ts DYNAMODB_REQUESTS_PER_STEP).
 * Under the rules here, a step pays one round trip per item set it must read fresh and one per
 * write that must come before something outside happens:
 *
 *   model turn  read (run, kill, the last turn's calls) ─ reserve + count the last turn's calls (run) ─ model ─ record + count (turn, run)   3
 *   read call   read (run, kill, turn, call)            ─ tool ─ record (call)                                2
 *   write call  read ─ claim (call, effect) ─ send ─ complete (call, effect)                                3
 *
 * Fewer needs a step to skip its read, its checks made on what it was handed and confirmed by its
 * write's condition (the run item and the kill item still the ones handed: ConditionChecks), a read
 * only when that fails. That holds only while nothing else writes the run item between a step and
 * the next; until 2026-12-06 every step's count did (a turn's sibling calls in parallel too), so first:
 *   1. (done: open-turn.ts) counts off the run item between model turns: a call recorded without its
 *      count (recordCall's `count` kept, unused), the turn's calls counted by the next model turn's
 *      reservation (the write it makes anyway) or the run's end, each call budgeted by position
 *      (call c of a turn: the run's count plus c - 1), getRun's counters lagging by the open turn;
 *   2. the run item's seal handed on the payload (never the record: the state machine's 256 KiB),
 *      the record from the function's own cache when it holds that seal, else read; the turn's
 *      tool_use blocks where small;
 *   3. a read call: its checks on that run, its record + ConditionChecks (run, kill) in one write —
 *      1 request; a write call's claim the same way — 2.
 * Its costs: a kill reaches a call one transition later than today (confirmed at its write, not
 * before the tool runs: for a read only); a run item altered outside the ledger is found at the
 * next step that reads, not the next step (ConditionChecks compare seals, not content:
 * test/engine/integrity.test.ts, what the 2.30 attempt of 2026-12-05 broke). Even then a model turn
 * keeps 3 (its reservation must be written before the call goes out): CI's 20-step form (8 turns,
 * 9 reads, 3 writes) would come to (24 + 9 + 6 + 4 at the run's start and end) / 20 ≈ 2.15, the
 * 100-step day (28, 49, 23) to about 1.83. What is done: the decision after a final answer is made
 * from that turn's own write (recordTurnSeen), not from a read of its own.
 */

/**
 * `recordTurnCounted` with the global kill item checked too (written together, on the condition
 * that none of the three changed since read): the run item as counted and the kill flag are then
 * what a read right after the write would find, so the decision after a final answer is made from
 * them, with no read of its own (steps/call-model.ts). `seen` only when this write recorded the
 * turn and counted it; a turn found recorded, or counted already, leaves the decision to a read.
 */
export function recordTurnSeen(
  [current, run, kill]: readonly [Current<TurnRecord>, Current<RunRecord>, Current<{ flag?: KillFlag }>],
  turn: TurnRecord,
  now: Date,
  count: StepCount,
): ItemsStep<{ turn: TurnRecord; seen?: TurnSeen }> {
  const step = recordTurnCounted(current, run, turn, now, count);
  if (!('writes' in step)) return 'keep' in step ? { keep: { turn: step.keep } } : step;
  const counted = step.writes[1];
  const globalKill = kill?.record.flag;
  const seen = counted ? { run: counted.record as unknown as RunRecord, ...(globalKill && { globalKill }) } : undefined;
  return { writes: [...step.writes, undefined], answer: { turn: step.answer, ...(seen && { seen }) } };
}
