import { afterEach, describe, expect, it } from 'vitest';
import { agentCounterPk, fleetDay } from '../../lambdas/records/fleet.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import type { LedgerKind } from '../../local/state/ledger-files.js';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';
import { counterAgent } from '../support/counter-agent.js';

/**
 * A fleet budget (issue 34 item 4): 200 runs of one agent started at once against $1 a day, on
 * the real engine running the synthesized definition. Each model call is reserved within its
 * run's lease of the day before it is sent (lambdas/ledger/fleet-leases.ts); a run the budget
 * cannot take stops, saying why. The sim model priced so that the runs, unbounded, would spend
 * several dollars: the budget binds.
 */
const RUNS = 200;
const agent = counterAgent({ calls: 2, perTurn: 1 });
// Output at $150 per million tokens: a run's three calls cost a few cents, their bounds (max_tokens each) more.
const prices = { 'sim:savepoint-sim-1': { inputPerMTok: 3, outputPerMTok: 150, cacheWritePerMTok: 3.75, cacheReadPerMTok: 0.3 } };

let harness: AgentHarness<never> | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

/**
 * The agent's counters of every day the runs could have leased on (the day each started and ended
 * in, and each run's lease's), summed: a test that crosses midnight leases on two days, and the
 * counter of the day it is read on alone would miss the first.
 */
async function countersOf(runs: readonly RunRecord[], startedAt: Date): Promise<{ runs: number; leased: number; leases: number; limits: (number | undefined)[] }> {
  const days = new Set([fleetDay(startedAt), fleetDay(new Date()), ...runs.flatMap((run) => (run.fleetLease ? [run.fleetLease.day] : []))]);
  const counters = (await Promise.all([...days].map((day) => harness!.stack.ledger.getFleetDay(agentCounterPk('counter', day))))).filter((day) => day !== undefined);
  return {
    runs: counters.reduce((sum, day) => sum + day.runs, 0),
    leased: counters.reduce((sum, day) => sum + day.leased, 0),
    leases: counters.reduce((sum, day) => sum + day.leases, 0),
    limits: [...new Set(counters.map((day) => day.limitMicros))],
  };
}

describe.each<LedgerKind>(['embedded', 'dynalite'])('a $1 daily fleet budget, 200 runs at once (%s ledger)', (ledger) => {
  it('spends at most $1.00 however the runs race, none over its lease; the runs it cannot take stop saying why', async () => {
    const startedAt = new Date();
    harness = (await startAgentHarness({ agent: agent as never, ledger, prices, fleetBudget: { agent: { dollarsPerDay: 1 } } })) as AgentHarness<never>;
    const { engine } = harness.stack;
    const arns = Array.from({ length: RUNS }, (_, index) => engine.startExecution({ name: `fleet-${index}`, input: { runId: `fleet-${index}`, input: { id: String(index) }, config: { maxTokensPerTurn: 256 } } }).executionArn);
    const ended = await Promise.all(arns.map((arn) => engine.waitForExecution(arn)));
    expect(ended.filter((execution) => execution.status !== 'SUCCEEDED')).toEqual([]);

    const runs = (await Promise.all(arns.map((_, index) => harness!.stack.ledger.getRun(`fleet-${index}`)))) as RunRecord[];
    const spent = runs.reduce((sum, run) => sum + run.costMicros, 0);
    const succeeded = runs.filter((run) => run.status === 'succeeded');
    const stopped = runs.filter((run) => run.status === 'stopped');
    // At most $1.00, to the micro-dollar the price table charged.
    expect(spent).toBeLessThanOrEqual(1_000_000);
    // The budget bound: unbounded, every run would have spent what a finished one did.
    expect(Math.min(...succeeded.map((run) => run.costMicros)) * RUNS).toBeGreaterThan(1_000_000);
    expect(succeeded.length + stopped.length).toBe(RUNS);
    expect(stopped.length).toBeGreaterThan(0);
    for (const run of stopped) expect(run.stopReason).toMatch(/^fleet budget spent: agent counter has \$\d\.\d\d of \$1\.00 for \d{4}-\d\d-\d\d spent or held, and the next model call may cost up to \$0\.\d\d$/);
    // None over its lease; every lease given back when its run ended, the counter left with what was spent.
    for (const run of runs) {
      if (!run.fleetLease) continue;
      expect(run.fleetLease.returned).toBe(true);
      expect(run.costMicros + (run.reservedMicros ?? 0) - run.fleetLease.base).toBeLessThanOrEqual(run.fleetLease.leased);
    }
    const day = await countersOf(runs, startedAt);
    expect(day).toMatchObject({ runs: 0, limits: [1_000_000] });
    // Every unused part given back: the counter holds exactly what the runs spent.
    expect(day.leased).toBe(runs.reduce((sum, run) => sum + run.costMicros + (run.reservedMicros ?? 0), 0));
    console.log(`fleet budget (${ledger}): ${RUNS} runs, ${succeeded.length} finished, ${stopped.length} stopped by the budget; spent $${(spent / 1e6).toFixed(4)} of $1.00; ${day.leases} leases written to the counter for ${runs.reduce((sum, run) => sum + run.modelTurns, 0)} model calls`);
  }, 240_000);
});

describe("a fleet budget that makes runs wait (whenSpent: 'wait')", () => {
  it('lets all 200 runs finish within $5 a day: a call the budget cannot take yet waits for a lease to come back', async () => {
    // Unbounded the runs spend less than $5, but their calls' bounds, held at once, are more.
    // The calls the budget could not take yet, counted from outside the ledger (each then waited).
    let refused = 0;
    const counting = (ledger: Ledger): Ledger =>
      new Proxy(ledger, {
        get: (target, property, receiver) =>
          property === 'reserveInFleet'
            ? async (...args: Parameters<Ledger['reserveInFleet']>) => {
                const answer = await target.reserveInFleet(...args);
                if (!answer.reserved) refused += 1;
                return answer;
              }
            : Reflect.get(target, property, receiver),
      });
    const startedAt = new Date();
    harness = (await startAgentHarness({ agent: agent as never, prices, retryAfterWaitMs: 5, decorateLedger: counting, fleetBudget: { agent: { dollarsPerDay: 5 }, whenSpent: 'wait' } })) as AgentHarness<never>;
    const { engine } = harness.stack;
    const arns = Array.from({ length: RUNS }, (_, index) => engine.startExecution({ name: `wait-${index}`, input: { runId: `wait-${index}`, input: { id: String(index) }, config: { maxTokensPerTurn: 256 } } }).executionArn);
    const ended = await Promise.all(arns.map((arn) => engine.waitForExecution(arn)));
    expect(ended.filter((execution) => execution.status !== 'SUCCEEDED')).toEqual([]);
    const runs = (await Promise.all(arns.map((_, index) => harness!.stack.ledger.getRun(`wait-${index}`)))) as RunRecord[];
    expect(runs.filter((run) => run.status !== 'succeeded').map((run) => `${run.runId}: ${run.stopReason}`)).toEqual([]);
    const spent = runs.reduce((sum, run) => sum + run.costMicros, 0);
    expect(spent).toBeLessThanOrEqual(5_000_000);
    // The bounds of the first calls alone were more than the day: some waited.
    const waits = refused;
    expect(waits).toBeGreaterThan(0);
    const day = await countersOf(runs, startedAt);
    expect(day).toMatchObject({ runs: 0 });
    expect(day.leased).toBe(runs.reduce((sum, run) => sum + run.costMicros + (run.reservedMicros ?? 0), 0));
    console.log(`fleet budget (wait): ${RUNS} runs finished; spent $${(spent / 1e6).toFixed(4)} of $5.00; ${waits} waits for budget; ${day.leases} leases for ${runs.reduce((sum, run) => sum + run.modelTurns, 0)} model calls`);
  }, 240_000);
});
