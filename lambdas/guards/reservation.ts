import { toolUses, turnCounts } from '../conversation/turns.js';
import type { CallsCount, FleetLedger, GuardLedger, StepCount } from '../ledger/ledger.js';
import { modelCallKeys } from '../ledger/step-keys.js';
import type { KillFlag, RunRecord, TurnRecord } from '../records/ledger-records.js';
import type { FleetBudget } from '../records/fleet.js';
import { budgetTrip, reservationTrip, type GuardTrip, type Reservation } from './budgets.js';
import { reserveInFleet } from './fleet.js';

/**
 * A model call's reservation, taken and settled the same way by every step that calls the model
 * (CallModel, Compact); the bound itself is guards/budgets.ts `reservationFor`.
 *
 *   reserve(turn N) ─► kill, budget, or the call's bound does not fit ─► the trip: the call is not sent
 *                   └► countStep reserve:N  (reservedTokens/Micros += bound; once per turn, whatever the attempts;
 *                      with turn N-1's tool calls, which count no step of their own: ledger/open-turn.ts)
 *                      — under a fleet budget, within the run's lease of the day (guards/fleet.ts): refused, the trip
 *   model call ─► recordTurn(N) with settle(N): count turn:N  (real usage added, the bound taken off: the turn's own write)
 *
 * A call that died unrecorded stays reserved until a retry settles it, so the run never shows
 * less than its calls may have cost. A run killed with its call out is spent at the bound by its
 * end, which counts turn:N (ledger/protocol.ts `finishRun`): its lease and its parent read that
 * spend as final, and the turn, landing after, counts nothing. The step that skips a call on a trip returns; the next
 * decision (steps/budget-check.ts), reserving the same bound from the same records, stops the run
 * or asks for an extension.
 */
export async function reserveModelCall(
  ledger: Pick<GuardLedger, 'countStep' | 'recordGuardEvent'> & Pick<FleetLedger, 'reserveInFleet' | 'returnFleetLease'>,
  {
    run,
    turn,
    reservation,
    now,
    globalKill,
    fleet,
    calls,
  }: { run: RunRecord; turn: number; reservation: Reservation; now: Date; globalKill?: KillFlag | undefined; fleet?: FleetBudget | undefined; calls?: CallsCount | undefined },
): Promise<GuardTrip | undefined> {
  const trip = budgetTrip(run, now, globalKill) ?? reservationTrip(run, reservation);
  if (trip) return trip;
  return reserveInFleet(ledger, { run, turn, reservation, now, budget: fleet, ...(calls && { calls }) });
}

/**
 * The count of a reserved call's recorded turn: its real usage added, its reservation taken off
 * (one count per turn). Written with the turn itself (`recordTurn(turn, settlement(…))`), or by
 * `settleModelCall` for a turn found recorded.
 */
export function settlement(record: Pick<TurnRecord, 'turn' | 'usage' | 'costMicros' | 'content'>, reservation: Reservation): StepCount {
  const count = { stepKey: modelCallKeys(record.turn).turn, deltas: { ...turnCounts(record), reservedTokens: -reservation.tokens, reservedMicros: -reservation.micros } };
  // A turn that asks for no tool leaves no call to count after it: its own count closes it (ledger/open-turn.ts).
  return toolUses(record).length === 0 ? { ...count, calls: { turn: record.turn, calls: [], closed: true } } : count;
}

/** Counts the recorded turn of a reserved call, its reservation taken off in the same write (idempotent per turn). */
export function settleModelCall(ledger: Pick<GuardLedger, 'countStep'>, record: TurnRecord, reservation: Reservation): Promise<boolean> {
  const { stepKey, deltas, calls } = settlement(record, reservation);
  return ledger.countStep(record.runId, stepKey, deltas, calls);
}
