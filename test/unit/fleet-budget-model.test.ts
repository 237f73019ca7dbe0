import { describe, expect, it } from 'vitest';
import { runBudgetModel } from '../../bench/fleet-budget.js';

/**
 * bench/fleet-budget.ts, short: the ledger's own lease rules run by a model of the day counter as
 * one DynamoDB partition (1,000 WCU/s), 1,000 runs started at 100/s. The figures are the model's
 * (seeded: the same every time), not timings.
 */
describe('a fleet budget counter under 1,000 runs (the model)', () => {
  const base = { runs: 1_000, callsPerRun: 5, dollarsPerDay: 25, reservationMicros: 20_000, costMicros: 5_000, startsPerSecond: 100 };
  const perCall = runBudgetModel({ ...base, leaseMicros: 0 });
  const leased = runBudgetModel({ ...base, leaseMicros: 50_000 });

  it('never spends past the day, however the runs race, with or without leases', () => {
    for (const figures of [perCall, leased]) {
      expect(figures.spentMicros).toBeLessThanOrEqual(figures.limitMicros);
      expect(figures.callsMade * base.costMicros).toBe(figures.spentMicros);
    }
  });

  it('writes the counter once per chunk, not per call: a throttling storm per call, none with leases', () => {
    expect(perCall.counterWrites).toBeGreaterThanOrEqual(perCall.callsMade);
    expect(leased.counterWrites).toBeLessThan(perCall.counterWrites / 4);
    expect(perCall.throttled).toBeGreaterThan(1_000);
    expect(leased.throttled).toBe(0);
    expect(leased.peakWritesPerSecond).toBeLessThan(500);
  });
});
