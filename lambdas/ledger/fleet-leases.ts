import type { RunRecord } from '../records/ledger-records.js';
import type { FleetReservation, FleetReserveRequest } from './ledger.js';
import { FLEET_SK, LEASE_SHARE_OF_REMAINING, type FleetCounter, type FleetDayRecord, type FleetLease } from '../records/fleet.js';
import { ConditionalWriteError, countStep, expiresAt, type Current, type ItemsStep, type Key, type Stored } from './protocol.js';

/**
 * The ledger's rules for a fleet budget (records/fleet.ts), in protocol.ts's shape: a model call's
 * reservation (`countStep reserve:N`, guards/reservation.ts) made within the run's lease of the
 * day, and the lease taken from the day's counters — one item per scope, a hot key — only when it
 * does not cover the call, in chunks:
 *
 *   reserve(N): the run item read ─► counted already (a retry) ─► reserved, nothing written
 *                                ─► the lease covers it      ─► countStep alone (the run's own item)
 *                                └► it does not: lease ─► [run, counters] read ─► every counter has the shortfall
 *                                                       (and a runs slot, for a new holder) ─► take a chunk from each
 *                                                       and count the step, in one write (IF_UNCHANGED, all) ✓
 *                                                  └► a counter has not ─► refused, nothing written
 *   end (Finalize, Handoff, ExecutionStopped) ─► return: the unused part back to each counter, the slot freed, in one write
 *
 * Never over a limit, however many runs lease at once: a counter's `leased` only grows by a write
 * conditional on the counter read, whose `leased + chunk ≤ limit` the transition checked; a run
 * counts a reservation only within its lease (`spending` − base ≤ leased); and a settled call
 * costs at most its reservation (guards/budgets.ts reservationFor). So the day's spending is
 * within the sum of the leases, within the limit. A run's `spending` is its own model calls': a
 * child run's dollars, in its parent's costMicros for the parent's hard budget, are leased by the
 * child run alone, so that the counters count each dollar once. A lease of an earlier day (or of
 * counters the deployment no longer names) is given back to its own counters when the run leases anew.
 */

export const fleetKey = (pk: string): Key => ({ pk, sk: FLEET_SK });

/**
 * What the run's lease covers: its own model calls, spent and reserved, and not its child runs'
 * dollars (`childCostMicros`, in its costMicros for its hard budget) — each child run leases its
 * own spend, so counted here too they would be counted twice, and a child's reservation settled
 * after the parent's lease went back would stay counted. A negative part (a reservation counted
 * before the part was, settled after) is none: such a child counts here as it did.
 */
const spending = (run: RunRecord) => run.costMicros + (run.reservedMicros ?? 0) - Math.max(0, run.childCostMicros ?? 0);
const sameCounters = (lease: FleetLease, counters: readonly FleetCounter[]) => lease.counters.length === counters.length && lease.counters.every((pk, index) => pk === counters[index]!.pk);
/** The run's lease that covers `request` today, if it holds one. */
const heldLease = (run: RunRecord, request: FleetReserveRequest, day: string) => {
  const lease = run.fleetLease;
  return lease && !lease.returned && lease.day === day && sameCounters(lease, request.counters) ? lease : undefined;
};
const counted = (current: Stored<RunRecord>, stepKey: string) => current.meta.countedSteps?.includes(stepKey) === true;
const micros = (request: FleetReserveRequest) => request.deltas.reservedMicros ?? 0;
const usd = (value: number) => `$${(value / 1_000_000).toFixed(2)}`;

/**
 * The counters a reservation must read beside the run item, from the run item as read: none when
 * it was counted already or the run's lease covers it (the call touches only its own run item),
 * else today's counters and those of an earlier lease to give back.
 */
export function leaseKeys(current: Current<RunRecord>, request: FleetReserveRequest, day: string): string[] {
  if (!current || counted(current, request.stepKey)) return [];
  const lease = heldLease(current.record, request, day);
  if (lease && spending(current.record) - lease.base + micros(request) <= lease.leased) return [];
  const earlier = current.record.fleetLease;
  const giveBack = earlier && !earlier.returned && !lease ? earlier.counters.filter((pk) => !request.counters.some((counter) => counter.pk === pk)) : [];
  return [...giveBack, ...request.counters.map((counter) => counter.pk)];
}

/** An answer without a write, over several items. */
const stay = <R>(answer: R): ItemsStep<R> => ({ keep: answer });
const emptyDay = (pk: string, day: string, now: Date): FleetDayRecord => ({ kind: 'fleetDay', key: pk, day, leased: 0, runs: 0, leases: 0, updatedAt: now.toISOString() });
const dayOf = (pk: string) => pk.slice(pk.lastIndexOf(':') + 1);

/**
 * The reservation, over the run item and the counters `keys` names (`leaseKeys`, after the run):
 * counted within the run's lease; or an earlier lease given back to its counters, a chunk taken
 * from today's, and the call counted, in one write; or refused, nothing written.
 */
export function leaseAndReserve(currents: readonly Current<never>[], keys: readonly string[], request: FleetReserveRequest, day: string, now: Date): ItemsStep<FleetReservation> {
  const [runItem, ...counterItems] = currents as [Current<RunRecord>, ...Current<FleetDayRecord>[]];
  if (!runItem) return { fail: new ConditionalWriteError(`reserveInFleet: no run ${request.runId}`) };
  if (counted(runItem, request.stepKey)) return stay({ reserved: true, leased: 0 });
  const run = runItem.record;
  const held = heldLease(run, request, day);
  const next = new Map(keys.map((pk, index) => [pk, counterItems[index]?.record ?? emptyDay(pk, dayOf(pk), now)]));
  // An unreturned lease of another day or other counters: its unused part back to its own counters.
  const earlier = run.fleetLease;
  if (earlier && !earlier.returned && !held) {
    for (const pk of earlier.counters) {
      const counter = next.get(pk);
      if (!counter) return { fail: new ConditionalWriteError(`reserveInFleet: run ${request.runId}'s lease changed while it leased`) };
      next.set(pk, given(counter, unusedOf(run, earlier), now));
    }
  }
  const base = held ? held.base : spending(run);
  const before = held ? held.leased : 0;
  const shortfall = spending(run) - base + micros(request) - before;
  if (shortfall <= 0) {
    // Covered after all (another attempt leased meanwhile): the run's own count, the counters left out.
    const step = countStep(runItem, request.stepKey, request.deltas, request.calls);
    return 'write' in step ? { writes: [step.write, ...keys.map(() => null)], answer: { reserved: true, leased: 0 } } : stay({ reserved: true, leased: 0 });
  }
  // Read as covered, covered no more (another writer of this run): read again with the counters.
  if (request.counters.some((counter) => !next.has(counter.pk))) return { fail: new ConditionalWriteError(`reserveInFleet: run ${request.runId}'s lease changed while it reserved`) };
  let chunk = Math.max(shortfall, request.leaseMicros);
  for (const counter of request.counters) {
    const record = next.get(counter.pk)!;
    if (!held && counter.concurrentRuns !== undefined && record.runs >= counter.concurrentRuns) {
      return stay({ reserved: false, reason: `fleet budget: ${counter.scope} has ${record.runs} of ${counter.concurrentRuns} runs at once` });
    }
    if (counter.limitMicros === undefined) continue;
    const left = counter.limitMicros - record.leased;
    if (left < shortfall) {
      return stay({ reserved: false, reason: `fleet budget spent: ${counter.scope} has ${usd(record.leased)} of ${usd(counter.limitMicros)} for ${record.day} spent or held, and the next model call may cost up to ${usd(shortfall)}` });
    }
    // Less as the day runs low, never under what the call needs.
    chunk = Math.min(chunk, Math.max(shortfall, Math.floor(left * LEASE_SHARE_OF_REMAINING)));
  }
  for (const counter of request.counters) {
    const record = next.get(counter.pk)!;
    next.set(counter.pk, { ...record, leased: record.leased + chunk, runs: record.runs + (held ? 0 : 1), leases: record.leases + 1, ...(counter.limitMicros !== undefined && { limitMicros: counter.limitMicros }), updatedAt: now.toISOString() });
  }
  const step = countStep(runItem, request.stepKey, request.deltas, request.calls);
  if (!('write' in step)) return stay({ reserved: true, leased: 0 });
  const lease: FleetLease = { day, counters: request.counters.map((counter) => counter.pk), leased: before + chunk, base };
  const runWrite: Stored = { record: { ...step.write.record, fleetLease: lease }, meta: step.write.meta };
  return { writes: [runWrite, ...keys.map((pk, index) => counterWrite(next.get(pk)!, counterItems[index], now))], answer: { reserved: true, leased: chunk } };
}

// Never more than the lease took: a spend below its base (an earlier reservation settled for less) gives back no other run's share.
const unusedOf = (run: RunRecord, lease: FleetLease) => Math.min(lease.leased, Math.max(0, lease.leased - (spending(run) - lease.base)));
const given = (counter: FleetDayRecord, unused: number, now: Date): FleetDayRecord => ({ ...counter, leased: Math.max(0, counter.leased - unused), runs: Math.max(0, counter.runs - 1), updatedAt: now.toISOString() });
const counterWrite = (record: FleetDayRecord, current: Current<FleetDayRecord>, now: Date): Stored => ({ record: record as unknown as Record<string, unknown>, meta: { ...current?.meta, expiresAt: expiresAt(now) } });

/** The counters a run's lease must be given back to (`returnFleetLease`): none when it holds none. */
export function leaseToReturn(run: RunRecord | undefined): readonly string[] {
  const lease = run?.fleetLease;
  return lease && !lease.returned ? lease.counters : [];
}

/**
 * The run's lease given back (it ended, or handed off): its unused part back to each counter and
 * its slot freed, the lease marked returned with what it used, in one write. Once: a returned lease
 * gives nothing back again. Answers the micro-dollars given back.
 */
export function returnLease(currents: readonly Current<never>[], keys: readonly string[], runId: string, now: Date): ItemsStep<number> {
  const [runItem, ...counterItems] = currents as [Current<RunRecord>, ...Current<FleetDayRecord>[]];
  const lease = runItem?.record.fleetLease;
  if (!runItem || !lease || lease.returned) return stay(0);
  if (lease.counters.length !== keys.length || lease.counters.some((pk, index) => pk !== keys[index])) return { fail: new ConditionalWriteError(`returnFleetLease: run ${runId}'s lease changed while it was returned`) };
  const unused = unusedOf(runItem.record, lease);
  const returned: FleetLease = { ...lease, leased: lease.leased - unused, returned: true };
  const counters = keys.map((pk, index) => counterWrite(given(counterItems[index]?.record ?? emptyDay(pk, dayOf(pk), now), unused, now), counterItems[index], now));
  return { writes: [{ record: { ...runItem.record, fleetLease: returned }, meta: runItem.meta }, ...counters], answer: unused };
}
