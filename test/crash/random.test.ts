import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../sim/random.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { duplicates, ledgerOf, providerJournal, savepoint, workspace } from '../support/cli-process.js';

/**
 * Seeded runs under transient failures and crashes: crash injection at random step boundaries,
 * and SIGKILLs from outside at a random moment of the engine's life. A dead engine's run is
 * resumed by the watchdog of the next engine, started for another run. Every run must finish,
 * every refund and review be made once.
 */

const SEEDS = [11, 12, 13];
const MAX_ENGINES = 25;

interface Outcome {
  seed: number;
  engines: number;
  injected: number;
  killed: number;
  status: string | undefined;
  inFlight: number;
  duplicates: string[];
  refunds: number;
  expectedRefunds: number;
}

async function survive(seed: number): Promise<Outcome> {
  // Two plain refunds, one already refunded, one mismatch: about twenty agent steps.
  const day = makeSampleDay(seed, { plain: 2, already_refunded: 1, mismatch: 1, large: 0 });
  const { stateDir, args } = await workspace(`random-${seed}`, day);
  const random = seededRandom(seed);
  const runId = `random-${seed}`;
  let injected = 0;
  let killed = 0;
  let engines = 0;
  for (; engines < MAX_ENGINES; engines++) {
    const { run } = await ledgerOf(stateDir, runId).catch(() => ({ run: undefined }));
    if (run?.status === 'succeeded') break;
    // The first engine starts the run and is killed from outside at a random moment of it; the
    // next ones are started for another run, and their watchdog finds this one orphaned.
    const command = run ? ['run', '--run-id', `side-${seed}-${engines}`, '--input', '{"date":"2026-11-27"}'] : ['run', '--run-id', runId];
    // Killed at a random agent step of the first ten (of about twenty), whatever the machine's speed.
    const killAtStep = engines === 0 ? 1 + Math.floor(random() * 10) : undefined;
    const exit = await savepoint(
      args(...command, '--fail-rate', '0.1', '--seed', String(seed), '--crash-rate', engines === 0 ? '0' : '0.02', '--crash-seed', String(seed * 100 + engines), '--max-recoveries', '10'),
      { killAtStep },
    );
    if (exit.signal === 'SIGKILL') {
      if (exit.stderr.includes('crash injected')) injected++;
      else killed++;
    } else {
      expect(exit.code, exit.stderr).toBe(0);
    }
  }
  const { run, calls } = await ledgerOf(stateDir, runId);
  return {
    seed,
    engines,
    injected,
    killed,
    status: run?.status,
    inFlight: calls.filter((call) => call.status !== 'completed').length,
    duplicates: duplicates(stateDir),
    refunds: providerJournal(stateDir).filter((entry) => entry.kind === 'refund').length,
    expectedRefunds: 2,
  };
}

describe('seeded runs with transient failures and random crashes', () => {
  it('lose no run and pay nothing twice', async () => {
    const outcomes = await Promise.all(SEEDS.map(survive));
    const lost = outcomes.filter((outcome) => outcome.status !== 'succeeded' || outcome.inFlight > 0);
    expect(lost, JSON.stringify(outcomes)).toEqual([]);
    expect(outcomes.flatMap((outcome) => outcome.duplicates)).toEqual([]);
    for (const outcome of outcomes) expect(outcome.refunds, `seed ${outcome.seed}`).toBe(outcome.expectedRefunds);
    // The runs did die, both ways: otherwise this test would prove nothing.
    expect(outcomes.map((outcome) => outcome.killed)).toEqual(SEEDS.map(() => 1));
    expect(outcomes.reduce((sum, outcome) => sum + outcome.injected, 0)).toBeGreaterThan(0);
    console.log(`random crashes: ${outcomes.map((o) => `seed ${o.seed}: ${o.engines} engines, ${o.injected} injected + ${o.killed} killed`).join('; ')}`);
  }, 400_000);
});
