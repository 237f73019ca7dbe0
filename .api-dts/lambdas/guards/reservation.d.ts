import type { GuardLedger, StepCount } from '../ledger/ledger.js';
import type { KillFlag, RunRecord, TurnRecord } from '../records/ledger-records.js';
import { type GuardTrip, type Reservation } from './budgets.js';
/**
 * A model call's reservation, taken and settled the same way by every step that calls the model
 * (CallModel, Compact); the bound itself is guards/budgets.ts `reservationFor`.
 *
 *   reserve(turn N) ─► kill, budget, or the call's bound does not fit ─► the trip: the call is not sent
 *                   └► countStep reserve:N  (reservedTokens/Micros += bound; once per turn, whatever the attempts)
 *   model call ─► recordTurn(N) with settle(N): count turn:N  (real usage added, the bound taken off: the turn's own write)
 *
 * A call that died unrecorded stays reserved until a retry settles it, so the run never shows
 * less than its calls may have cost. The step that skips a call on a trip returns; BudgetCheck,
 * reserving the same bound from the same records, stops the run or asks for an extension.
 */
export declare function reserveModelCall(ledger: Pick<GuardLedger, 'countStep'>, { run, turn, reservation, now, globalKill }: {
    run: RunRecord;
    turn: number;
    reservation: Reservation;
    now: Date;
    globalKill?: KillFlag | undefined;
}): Promise<GuardTrip | undefined>;
/**
 * The count of a reserved call's recorded turn: its real usage added, its reservation taken off
 * (one count per turn). Written with the turn itself (`recordTurn(turn, settlement(…))`), or by
 * `settleModelCall` for a turn found recorded.
 */
export declare function settlement(record: Pick<TurnRecord, 'turn' | 'usage' | 'costMicros'>, reservation: Reservation): StepCount;
/** Counts the recorded turn of a reserved call, its reservation taken off in the same write (idempotent per turn). */
export declare function settleModelCall(ledger: Pick<GuardLedger, 'countStep'>, record: TurnRecord, reservation: Reservation): Promise<boolean>;
