import { describe, expect, it } from 'vitest';
import type { FleetReserveRequest } from '../../../lambdas/ledger/ledger.js';
import type { Ledger } from '../../../lambdas/ledger/ledger.js';
import { agentCounterPk, fleetCounters, stackCounterPk, type FleetBudget } from '../../../lambdas/records/fleet.js';
import { at, run } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/**
 * The fleet role (`FleetLedger`, ledger/fleet-leases.ts): a model call's reservation counted
 * within its run's lease of the day, the lease taken in chunks from the day's counters of the
 * agent and of the stack, never past their limits however many runs lease at once, and given back
 * once when the run ends.
 */
const DAY = at(0).toISOString().slice(0, 10);
const CHUNK = 50_000;

/** Run `runId`'s reservation of `micros` for turn `turn` under `budget`. */
function request(runId: string, turn: number, micros: number, budget: FleetBudget, now = at(0), agent = 'refund-reconciler'): FleetReserveRequest {
  return { runId, stepKey: `reserve:${turn}`, deltas: { reservedTokens: 1, reservedMicros: micros }, counters: fleetCounters(agent, budget, now.toISOString().slice(0, 10)), leaseMicros: CHUNK };
}

/** The call of `turn` settled at `cost` (its reservation taken off, guards/reservation.ts settlement). */
const settle = (ledger: Ledger, runId: string, turn: number, reserved: number, cost: number) => ledger.countStep(runId, `turn:${turn}`, { costMicros: cost, reservedMicros: -reserved, reservedTokens: -1 });

export function fleetSpec(make: MakeLedger): void {
  describe('a fleet budget leased to runs in chunks', () => {
    const { ledger, under } = useLedger(make);
    const agentDay = agentCounterPk('refund-reconciler', DAY);
    const dollar: FleetBudget = { agent: { dollarsPerDay: 1 } };

    it('leases a chunk at the first call and counts the next calls within it, the counter written once', async () => {
      await ledger.createRun(run('r1'));
      expect(await ledger.reserveInFleet(request('r1', 1, 10_000, dollar), at(0))).toEqual({ reserved: true, leased: CHUNK });
      await settle(ledger, 'r1', 1, 10_000, 4_000);
      expect(await ledger.reserveInFleet(request('r1', 2, 10_000, dollar), at(1))).toEqual({ reserved: true, leased: 0 });
      expect(await ledger.getFleetDay(agentDay)).toMatchObject({ kind: 'fleetDay', day: DAY, leased: CHUNK, runs: 1, leases: 1, limitMicros: 1_000_000 });
      expect(await ledger.getRun('r1')).toMatchObject({ reservedMicros: 10_000, costMicros: 4_000, fleetLease: { day: DAY, counters: [agentDay], leased: CHUNK, base: 0 } });
    });

    it('counts a retried reservation once, leasing once', async () => {
      await ledger.createRun(run('r1'));
      await ledger.reserveInFleet(request('r1', 1, 60_000, dollar), at(0));
      expect(await ledger.reserveInFleet(request('r1', 1, 60_000, dollar), at(1))).toEqual({ reserved: true, leased: 0 });
      expect((await ledger.getRun('r1'))!.reservedMicros).toBe(60_000);
      expect(await ledger.getFleetDay(agentDay)).toMatchObject({ leased: 60_000, leases: 1 });
    });

    it("refuses a call the day's remainder cannot take, naming the scope, and writes nothing", async () => {
      await ledger.createRun(run('r1'));
      await ledger.createRun(run('r2'));
      expect(await ledger.reserveInFleet(request('r1', 1, 990_000, dollar), at(0))).toEqual({ reserved: true, leased: 990_000 });
      const refused = await ledger.reserveInFleet(request('r2', 1, 20_000, dollar), at(0));
      expect(refused).toEqual({ reserved: false, reason: `fleet budget spent: agent refund-reconciler has $0.99 of $1.00 for ${DAY} spent or held, and the next model call may cost up to $0.02` });
      expect((await ledger.getRun('r2'))!.reservedMicros ?? 0).toBe(0);
      expect((await ledger.getRun('r2'))!.fleetLease).toBeUndefined();
      expect(await ledger.getFleetDay(agentDay)).toMatchObject({ leased: 990_000, runs: 1 });
      // What is left still takes a call that fits: the lease shrinks to it.
      expect(await ledger.reserveInFleet(request('r2', 1, 10_000, dollar), at(0))).toEqual({ reserved: true, leased: 10_000 });
    });

    it('gives the unused part back once when the run ends, freeing its slot', async () => {
      await ledger.createRun(run('r1'));
      await ledger.reserveInFleet(request('r1', 1, 10_000, dollar), at(0));
      await settle(ledger, 'r1', 1, 10_000, 3_000);
      expect(await ledger.returnFleetLease('r1', at(2))).toBe(CHUNK - 3_000);
      expect(await ledger.returnFleetLease('r1', at(3))).toBe(0);
      expect(await ledger.getFleetDay(agentDay)).toMatchObject({ leased: 3_000, runs: 0 });
      expect((await ledger.getRun('r1'))!.fleetLease).toEqual({ day: DAY, counters: [agentDay], leased: 3_000, base: 0, returned: true });
      expect(await ledger.returnFleetLease('nope', at(3))).toBe(0);
    });

    it('keeps a call that died unsettled counted when the lease goes back (it may have cost its reservation)', async () => {
      await ledger.createRun(run('r1'));
      await ledger.reserveInFleet(request('r1', 1, 20_000, dollar), at(0));
      expect(await ledger.returnFleetLease('r1', at(1))).toBe(CHUNK - 20_000);
      expect(await ledger.getFleetDay(agentDay)).toMatchObject({ leased: 20_000 });
    });

    it("leaves a child run's dollars out of its parent's lease, reserved or settled: the child leases them itself", async () => {
      await ledger.createRun(run('r1'));
      await ledger.reserveInFleet(request('r1', 1, 10_000, dollar), at(0));
      await settle(ledger, 'r1', 1, 10_000, 4_000);
      // A child's budget of $0.50 reserved into the run's dollars (tools/child-runs.ts), then what it spent.
      await ledger.countStep('r1', 'child:1:1:reserve', { costMicros: 500_000, childCostMicros: 500_000, childRunsOpen: 1 });
      await ledger.countStep('r1', 'child:1:1:settle', { costMicros: 30_000 - 500_000, childCostMicros: 30_000 - 500_000, childRunsOpen: -1 });
      // The next call fits the lease of the run's own spend: nothing leased for the child's $0.03.
      expect(await ledger.reserveInFleet(request('r1', 2, 10_000, dollar), at(1))).toEqual({ reserved: true, leased: 0 });
      await settle(ledger, 'r1', 2, 10_000, 5_000);
      expect(await ledger.getRun('r1')).toMatchObject({ costMicros: 39_000, childCostMicros: 30_000 });
      expect(await ledger.returnFleetLease('r1', at(2))).toBe(CHUNK - 9_000);
      expect(await ledger.getFleetDay(agentDay)).toMatchObject({ leased: 9_000, runs: 0, leases: 1 });
    });

    it("leaves the counter as it is when a child is settled after its parent's lease went back", async () => {
      await ledger.createRun(run('r1'));
      await ledger.reserveInFleet(request('r1', 1, 10_000, dollar), at(0));
      await settle(ledger, 'r1', 1, 10_000, 4_000);
      await ledger.countStep('r1', 'child:1:1:reserve', { costMicros: 500_000, childCostMicros: 500_000, childRunsOpen: 1 });
      // The parent ends (killed) while its child runs: its lease goes back with its own spend.
      expect(await ledger.returnFleetLease('r1', at(1))).toBe(CHUNK - 4_000);
      await ledger.countStep('r1', 'child:1:1:settle', { costMicros: 30_000 - 500_000, childCostMicros: 30_000 - 500_000, childRunsOpen: -1 });
      expect(await ledger.returnFleetLease('r1', at(2))).toBe(0);
      expect(await ledger.getFleetDay(agentDay)).toMatchObject({ leased: 4_000, runs: 0 });
    });

    it('counts a child reserved before its part was counted (0.22.0) in its parent\'s lease, as it did: more, never less', async () => {
      await ledger.createRun(run('r1'));
      await ledger.reserveInFleet(request('r1', 1, 10_000, dollar), at(0));
      await settle(ledger, 'r1', 1, 10_000, 4_000);
      await ledger.countStep('r1', 'child:1:1:reserve', { costMicros: 500_000, childRunsOpen: 1 });
      // Settled by this release: the part goes below zero, and counts as none.
      await ledger.countStep('r1', 'child:1:1:settle', { costMicros: 300_000 - 500_000, childCostMicros: 300_000 - 500_000, childRunsOpen: -1 });
      // The lease covers the child's $0.30 as well: it grows by it for the next call.
      expect(await ledger.reserveInFleet(request('r1', 2, 10_000, dollar), at(1))).toEqual({ reserved: true, leased: 4_000 + 300_000 + 10_000 - CHUNK });
      await settle(ledger, 'r1', 2, 10_000, 5_000);
      expect(await ledger.returnFleetLease('r1', at(2))).toBe(5_000);
      expect(await ledger.getFleetDay(agentDay)).toMatchObject({ leased: 309_000, runs: 0 });
    });

    it("gives back at most what its lease took: a call reserved before the lease, settled for less, takes no other run's share", async () => {
      await ledger.createRun(run('r1'));
      await ledger.createRun(run('r2'));
      expect(await ledger.reserveInFleet(request('r2', 1, 10_000, dollar), at(0))).toEqual({ reserved: true, leased: CHUNK });
      // Reserved before the deployment set the budget: in r1's base when it first leases.
      await ledger.countStep('r1', 'reserve:1', { reservedMicros: 40_000 });
      await ledger.reserveInFleet(request('r1', 2, 10_000, dollar), at(0));
      await settle(ledger, 'r1', 1, 40_000, 1_000);
      expect(await ledger.returnFleetLease('r1', at(1))).toBe(CHUNK);
      expect(await ledger.getFleetDay(agentDay)).toMatchObject({ leased: CHUNK, runs: 1 });
    });

    it('admits only as many runs at once as the scope allows; a run that ends frees its slot', async () => {
      const two: FleetBudget = { agent: { concurrentRuns: 2 } };
      for (const id of ['a', 'b', 'c']) await ledger.createRun(run(id));
      expect((await ledger.reserveInFleet(request('a', 1, 1_000, two), at(0))).reserved).toBe(true);
      expect((await ledger.reserveInFleet(request('b', 1, 1_000, two), at(0))).reserved).toBe(true);
      expect(await ledger.reserveInFleet(request('c', 1, 1_000, two), at(0))).toEqual({ reserved: false, reason: 'fleet budget: agent refund-reconciler has 2 of 2 runs at once' });
      // A run holding a slot goes on.
      expect((await ledger.reserveInFleet(request('a', 2, 1_000, two), at(0))).reserved).toBe(true);
      await ledger.returnFleetLease('a', at(1));
      expect((await ledger.reserveInFleet(request('c', 1, 1_000, two), at(1))).reserved).toBe(true);
    });

    it("leases from the agent's counter and the stack's at once: the stack's limit holds across its agents", async () => {
      const budget = (agent: string): FleetBudget => ({ agent: { dollarsPerDay: 1 }, stack: { name: 'Prod', dollarsPerDay: 0.1 } });
      await ledger.createRun(run('r1'));
      await ledger.createRun(run('r2', { agent: 'triage' }));
      expect((await ledger.reserveInFleet(request('r1', 1, 60_000, budget('refund-reconciler')), at(0))).reserved).toBe(true);
      const other = await ledger.reserveInFleet(request('r2', 1, 60_000, budget('triage'), at(0), 'triage'), at(0));
      expect(other).toEqual({ reserved: false, reason: `fleet budget spent: stack Prod has $0.06 of $0.10 for ${DAY} spent or held, and the next model call may cost up to $0.06` });
      expect(await ledger.getFleetDay(stackCounterPk('Prod', DAY))).toMatchObject({ leased: 60_000, runs: 1 });
      expect(await ledger.getFleetDay(agentCounterPk('triage', DAY))).toBeUndefined();
    });

    it("leases anew on the next day, giving the earlier day's lease back to its own counter", async () => {
      await ledger.createRun(run('r1'));
      await ledger.reserveInFleet(request('r1', 1, 10_000, dollar), at(0));
      await settle(ledger, 'r1', 1, 10_000, 10_000);
      const tomorrow = at(24 * 3600);
      const nextDay = tomorrow.toISOString().slice(0, 10);
      expect(await ledger.reserveInFleet(request('r1', 2, 10_000, dollar, tomorrow), tomorrow)).toEqual({ reserved: true, leased: CHUNK });
      expect(await ledger.getFleetDay(agentDay)).toMatchObject({ leased: 10_000, runs: 0 });
      expect(await ledger.getFleetDay(agentCounterPk('refund-reconciler', nextDay))).toMatchObject({ leased: CHUNK, runs: 1 });
      expect((await ledger.getRun('r1'))!.fleetLease).toEqual({ day: nextDay, counters: [agentCounterPk('refund-reconciler', nextDay)], leased: CHUNK, base: 10_000 });
    });

    it('never leases past the limit when 100 runs reserve at once, from two writers: the counter is the sum of the leases', async () => {
      const runs = Array.from({ length: 100 }, (_, index) => `r${index}`);
      for (const id of runs) await ledger.createRun(run(id));
      const second = under.another ? await under.another() : ledger;
      // Each run makes three calls of $0.012; a dollar takes at most 83 of the 300.
      const answers = await Promise.all(
        runs.map(async (id, index) => {
          const writer = index % 2 === 0 ? ledger : second;
          const results = [];
          for (const turn of [1, 2, 3]) results.push(await writer.reserveInFleet(request(id, turn, 12_000, dollar), at(0)));
          return results;
        }),
      );
      const reserved = answers.flat().filter((answer) => answer.reserved).length;
      const records = await Promise.all(runs.map((id) => ledger.getRun(id)));
      const leased = records.reduce((sum, record) => sum + (record!.fleetLease?.leased ?? 0), 0);
      const day = (await ledger.getFleetDay(agentDay))!;
      expect(day.leased).toBe(leased);
      expect(day.leased).toBeLessThanOrEqual(1_000_000);
      expect(reserved * 12_000).toBeLessThanOrEqual(1_000_000);
      // Each run's reservations stay within its lease.
      for (const record of records) expect(record!.reservedMicros ?? 0).toBeLessThanOrEqual(record!.fleetLease?.leased ?? 0);
      // The budget was used, not held back: less than one call's worth of it left unleased.
      expect(1_000_000 - day.leased).toBeLessThan(12_000);
      expect(reserved).toBeGreaterThan(60);
    }, 60_000);
  });
}
