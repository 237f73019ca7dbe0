import type { CallsCount, FleetLedger, GuardLedger } from '../ledger/ledger.js';
import { modelCallKeys } from '../ledger/step-keys.js';
import { DEFAULT_LEASE_MICROS, fleetCounters, fleetDay, type FleetBudget } from '../records/fleet.js';
import type { RunRecord } from '../records/ledger-records.js';
import { ModelRetryAfterError } from '../shared/errors.js';
import type { GuardTrip, Reservation } from './budgets.js';

/**
 * A fleet budget (records/fleet.ts) at a model call: the call's reservation is counted within the
 * run's lease of the day (ledger/fleet-leases.ts), or refused. Refused, the deployment's
 * `whenSpent` says what happens: `stop` (the default) records the stop on the run — the next decision
 * reads it (guards/budgets.ts budgetTrip) and ends the run with the reason — and `wait` gives the
 * run's lease back and throws `Agent.ModelRetryAfter`, which the state machine waits out before the call is tried again
 * (infra/agent-state-machine.ts WaitRetryAfter), as it does a provider's `retry-after`.
 */

/** How long a call the fleet budget refused waits before it is tried again (`whenSpent: 'wait'`): a lease may come back meanwhile; at most until the next UTC day. */
export const FLEET_WAIT_SECONDS = 60;

export function secondsToWait(now: Date): number {
  const nextDay = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.min(FLEET_WAIT_SECONDS, Math.ceil((nextDay - now.getTime()) / 1000)));
}

/**
 * Counts `reserve:<turn>` (with the open turn's `calls`: ledger/open-turn.ts) — within the fleet budget when the deployment sets one. A trip when the
 * budget refused it and the run stops; throws when it waits.
 */
export async function reserveInFleet(
  ledger: Pick<GuardLedger, 'countStep' | 'recordGuardEvent'> & Pick<FleetLedger, 'reserveInFleet' | 'returnFleetLease'>,
  { run, turn, reservation, now, budget, calls }: { run: RunRecord; turn: number; reservation: Reservation; now: Date; budget: FleetBudget | undefined; calls?: CallsCount },
): Promise<GuardTrip | undefined> {
  const stepKey = modelCallKeys(turn).reserve;
  const deltas = { reservedTokens: reservation.tokens, reservedMicros: reservation.micros };
  const counters = fleetCounters(run.agent, budget, fleetDay(now));
  if (counters.length === 0) {
    await ledger.countStep(run.runId, stepKey, deltas, calls);
    return undefined;
  }
  const leaseMicros = budget?.leaseDollars === undefined ? DEFAULT_LEASE_MICROS : Math.round(budget.leaseDollars * 1_000_000);
  const answer = await ledger.reserveInFleet({ runId: run.runId, stepKey, deltas, ...(calls && { calls }), counters, leaseMicros }, now);
  if (answer.reserved) return undefined;
  if (budget?.whenSpent === 'wait') {
    // It waits holding nothing: runs that waited holding their leases could hold the whole day
    // between them, each waiting for another's. Its next call leases anew.
    await ledger.returnFleetLease(run.runId, now);
    throw new ModelRetryAfterError(secondsToWait(now), `${answer.reason}: waiting for budget`);
  }
  await ledger.recordGuardEvent(run.runId, { guard: 'fleet', action: 'stopped', reason: answer.reason, at: now.toISOString() });
  return { guard: 'fleet', reason: answer.reason };
}

/** Gives the run's lease back (the run ended or handed off), if it holds one: its unused part is others' to spend. */
export async function returnFleetLease(ledger: Pick<FleetLedger, 'returnFleetLease'>, run: Pick<RunRecord, 'runId' | 'fleetLease'> | undefined, now: Date): Promise<void> {
  if (run?.fleetLease && !run.fleetLease.returned) await ledger.returnFleetLease(run.runId, now);
}
