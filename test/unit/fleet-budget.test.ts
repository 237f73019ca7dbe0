import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fleetBudgetFile } from '../../cli/run.js';
import { budgetTrip } from '../../lambdas/guards/budgets.js';
import { reserveInFleet, secondsToWait } from '../../lambdas/guards/fleet.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { agentCounterPk, fleetCounters, type FleetBudget } from '../../lambdas/records/fleet.js';
import { ErrorNames } from '../../lambdas/shared/errors.js';
import { localFleetBudget } from '../../local/runtime/fleet-budget.js';
import { resultMetrics } from '../../lambdas/adapters/step-telemetry.js';
import { MetricNames } from '../../lambdas/shared/metrics.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { runRecord } from '../support/records.js';

const now = new Date('2026-12-02T08:00:00.000Z');
const reservation = { tokens: 1_000, micros: 600_000 };

/** A ledger with run `r` of agent `refunds`, and the reservation of its turn `turn` under `budget`. */
async function reserved(budget: FleetBudget | undefined, turn = 1, ledger = EmbeddedLedger.open()) {
  if (!(await ledger.getRun('r'))) await ledger.createRun(runRecord({ runId: 'r', agent: 'refunds' }));
  const run = (await ledger.getRun('r'))!;
  const trip = await reserveInFleet(ledger, { run, turn, reservation, now, budget }).catch((error: unknown) => error as Error);
  return { ledger, trip, run: (await ledger.getRun('r'))! };
}

describe('a model call under the fleet budget (guards/fleet.ts)', () => {
  it('is counted as before without a budget, and touches no counter', async () => {
    const { ledger, trip, run } = await reserved(undefined);
    expect(trip).toBeUndefined();
    expect(run).toMatchObject({ reservedMicros: 600_000, reservedTokens: 1_000 });
    expect(run.fleetLease).toBeUndefined();
    expect(await ledger.getFleetDay(agentCounterPk('refunds', '2026-12-02'))).toBeUndefined();
  });

  it('stops the run when spent (the default), recording why: BudgetCheck then stops it with that reason', async () => {
    const budget: FleetBudget = { agent: { dollarsPerDay: 1 } };
    const first = await reserved(budget);
    expect(first.trip).toBeUndefined();
    const { trip, run } = await reserved(budget, 2, first.ledger);
    const reason = 'fleet budget spent: agent refunds has $0.60 of $1.00 for 2026-12-02 spent or held, and the next model call may cost up to $0.60';
    expect(trip).toEqual({ guard: 'fleet', reason });
    expect(run.guardEvents).toEqual([{ guard: 'fleet', action: 'stopped', reason, at: now.toISOString() }]);
    expect(budgetTrip(run, now)).toEqual({ guard: 'fleet', reason });
  });

  it("waits instead with whenSpent 'wait': Agent.ModelRetryAfter, the seconds first, nothing recorded", async () => {
    const budget: FleetBudget = { agent: { dollarsPerDay: 1 }, whenSpent: 'wait' };
    const first = await reserved(budget);
    const { trip, run } = await reserved(budget, 2, first.ledger);
    expect(trip).toMatchObject({ name: ErrorNames.ModelRetryAfter, message: expect.stringMatching(/^60 s to wait \(retry-after\): fleet budget spent: agent refunds has \$0\.60 of \$1\.00 .*: waiting for budget$/) });
    expect(run.guardEvents ?? []).toEqual([]);
    expect(budgetTrip(run, now)?.guard).not.toBe('fleet');
    // It waits holding nothing: its lease went back (what it reserved stays counted).
    expect(run.fleetLease).toMatchObject({ returned: true, leased: 600_000 });
    expect(await first.ledger.getFleetDay(agentCounterPk('refunds', '2026-12-02'))).toMatchObject({ leased: 600_000, runs: 0 });
  });

  it('counts a call the budget refused in the metric its alarm watches, and no other skipped call', () => {
    const skipped = { turn: 2, stopReason: 'harness_stop', toolCalls: 0, calls: [], skipped: 'fleet budget spent: …' };
    expect(resultMetrics(Steps.CallModel, { ...skipped, skippedBy: 'fleet' })).toEqual([{ name: MetricNames.FleetBudgetSpent, unit: 'Count', value: 1 }]);
    expect(resultMetrics(Steps.CallModel, { ...skipped, skippedBy: 'dollars' })).toEqual([]);
  });

  it('waits a minute, or less when the day ends sooner', () => {
    expect(secondsToWait(now)).toBe(60);
    expect(secondsToWait(new Date('2026-12-02T23:59:30.500Z'))).toBe(30);
  });

  it('keys the counters by agent and by stack, only for a scope that sets a limit', () => {
    expect(fleetCounters('refunds', { agent: { concurrentRuns: 3 }, stack: { name: 'Prod', dollarsPerDay: 10 } }, '2026-12-02')).toEqual([
      { pk: 'FLEET#refunds:2026-12-02', scope: 'agent refunds', concurrentRuns: 3 },
      { pk: 'STACKFLEET#Prod:2026-12-02', scope: 'stack Prod', limitMicros: 10_000_000 },
    ]);
    expect(fleetCounters('refunds', { agent: {}, whenSpent: 'wait' }, '2026-12-02')).toEqual([]);
  });
});

describe('the local fleet budget', () => {
  it("names the stack's counters for the local template's stack", () => {
    expect(localFleetBudget({ stack: { dollarsPerDay: 5 } }, 'arn:aws:states:us-east-1:000000000000:stateMachine:Savepoint-refunds:live', 'refunds')).toEqual({ stack: { name: 'Savepoint', dollarsPerDay: 5 } });
    expect(localFleetBudget({ agent: { dollarsPerDay: 5 } }, 'arn:aws:states:us-east-1:000000000000:stateMachine:Savepoint-refunds', 'refunds')).toEqual({ agent: { dollarsPerDay: 5 } });
  });

  it('refuses a --fleet-budget file with a bad field, naming the file and the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-'));
    try {
      const file = join(dir, 'budget.json');
      writeFileSync(file, JSON.stringify({ agent: { dollarsPerDay: -1 }, whenSpent: 'later' }));
      expect(() => fleetBudgetFile(file)).toThrow(new RegExp(`^--fleet-budget ${file}: agent\\.dollarsPerDay: .*; whenSpent: `));
      writeFileSync(file, '{');
      expect(() => fleetBudgetFile(file)).toThrow(/not valid JSON/);
      writeFileSync(file, JSON.stringify({ agent: { dollarsPerDay: 2 }, stack: { concurrentRuns: 4 } }));
      expect(fleetBudgetFile(file)).toEqual({ agent: { dollarsPerDay: 2 }, stack: { concurrentRuns: 4 } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
