import type { StepCount } from './ledger.js';
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
 *   model turn  read (run, kill, the last turn's calls, the breakers) ─ reserve + count the last turn's calls (run) ─ model ─ record + count (turn, run; kill checked)   3
 *   read call   (handed) ─ tool ─ record (call)                                                                     1
 *   write call  (handed) ─ claim (call, effect) + ConditionChecks (run, kill) ─ send ─ complete (call, effect)     2
 *   write call  read (run, kill, call) ─ claim (call, effect) + ConditionChecks (run, kill, as read) ─ send ─ complete   3
 *
 * A call skips its read because nothing of the loop writes the run item between a model turn and
 * the next (open-turn.ts: a turn's calls are counted by the next turn's reservation): what the
 * turn's write left — the run item as counted, the kill as read, their versions (TurnSeen `basis`),
 * sealed — is handed to its calls on the payload (steps/handed-step.ts), which check the seal and
 * make their checks on it. A read's record is a put of its own item (a read changes nothing
 * outside: a kill while it ran keeps its result, as for any call in flight); a write's claim holds
 * only while the run item and the kill item are still those versions (ledger/handed-versions.ts).
 * When either changed (a kill, a stop, an approval's wait counted, a recovery), the claim is
 * refused, nothing is written or sent, and the call reads and decides as before. A retry, a call
 * that waited for a person or a child run, or one that starts late reads first, and its claim holds
 * on the same condition, on the versions its read found (StepRead `versions`: the same one request,
 * a transaction): a kill or a stop set between that read and the claim refuses it, and the call
 * reads again and stops. Its costs: a kill set while the model answered lets that turn's reads go
 * out (never a write); a run item altered outside the ledger with its seal attribute left is named
 * at the next read (the next model turn's), not the next call's (a condition compares the seal
 * attribute, not the content it covers, so the run item is only ever checked, never rewritten from
 * what was handed: test/engine/handed-record.test.ts); a transaction bills its items twice, a claim's checks
 * included (write units per step rise). A model turn keeps 3: its reservation must be written
 * before the call goes out. The decision after a final answer is made from that turn's own write
 * (recordTurnSeen), not from a read of its own.
 */

/**
 * `recordTurnCounted` with the global kill item checked too (written together, on the condition
 * that none of the three changed since read): the run item as counted and the kill flag are then
 * what a read right after the write would find, so the decision after a final answer is made from
 * them, with no read of its own (steps/call-model.ts; storage-ledger.ts tells them, with their
 * versions: handed-versions.ts `seenWith`). Only a write that recorded the turn and counted it
 * tells them; a turn found recorded, or counted already, leaves the decision to a read.
 */
export function recordTurnSeen(
  [current, run]: readonly [Current<TurnRecord>, Current<RunRecord>, Current<{ flag?: KillFlag }>],
  turn: TurnRecord,
  now: Date,
  count: StepCount,
): ItemsStep<TurnRecord> {
  const step = recordTurnCounted(current, run, turn, now, count);
  return 'writes' in step ? { writes: [...step.writes, undefined], answer: step.answer } : step;
}
