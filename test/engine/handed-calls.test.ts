import { afterEach, describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { isStepChanged } from '../../lambdas/ledger/handed-versions.js';
import { toolUses } from '../../lambdas/conversation/turns.js';
import type { LedgerKind } from '../../local/runtime/local-stack.js';
import { duplicatePayments, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * A turn's calls handed what its write left (lambdas/steps/handed-step.ts), end to end on both
 * ledgers: a call reads nothing. A read records its result as any read does (a kill while it ran
 * keeps it, as for any call in flight); a write claims on the versions of the run item and the kill
 * item it was handed, and whatever changed those since, its claim refuses, and the call reads and
 * decides as every call did: a write of a killed run is refused before the provider is called; a
 * retry finds its record.
 */
const day = makeSampleDay(5, { plain: 2, already_refunded: 0, mismatch: 0, large: 0 });
const flag = { by: 'alice', at: '2026-11-29T03:00:00.000Z', reason: 'wrong day' };

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

/** The ledger the steps use, with `around` in front of the methods it names. */
function decorated(around: Partial<{ [M in keyof Ledger]: (target: Ledger, ...args: Parameters<Ledger[M]>) => ReturnType<Ledger[M]> }>) {
  return (ledger: Ledger): Ledger =>
    new Proxy(ledger, {
      get: (target, method: keyof Ledger) => {
        const wrap = around[method] as ((target: Ledger, ...args: unknown[]) => unknown) | undefined;
        return wrap ? (...args: unknown[]) => wrap(target, ...args) : (target[method] as (...args: unknown[]) => unknown).bind(target);
      },
    });
}

describe.each<LedgerKind>(['embedded', 'dynalite'])('a turn’s calls handed its write’s state, %s ledger', (ledger) => {
  const start = (around: Parameters<typeof decorated>[0]) => startHarness({ day, ledger, decorateLedger: decorated(around) });
  it('a run killed while a handed read call runs keeps its result, as any call in flight, and ends killed', async () => {
    let killedAt: { turn: number; call: number } | undefined;
    harness = await start({
      recordCall: async (target, call, now, count, basis) => {
        // The first read recorded on what it was handed: the run is killed as its result comes back.
        if (basis && !killedAt) {
          killedAt = { turn: call.turn, call: call.call };
          await target.killRun(call.runId, flag);
        }
        return target.recordCall(call, now, count, basis);
      },
    });
    const finished = await harness.run({ runId: 'killed-mid-read', input: { date: day.date } });
    expect(killedAt).toBeDefined();
    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'killed', reason: `killed by alice at ${flag.at}: wrong day` });
    expect(await harness.stack.ledger.getCall('killed-mid-read', killedAt!.turn, killedAt!.call)).toMatchObject({ status: 'completed', outcome: 'ok' });
  }, 60_000);

  it('a write of a run killed after its turn was recorded is refused before the provider is called, handed state or not', async () => {
    let paidAtKill: number | undefined;
    harness = await start({
      recordTurn: async (target, turn, count) => {
        const stored = await target.recordTurn(turn, count);
        // The first turn that asks for a refund: killed as soon as it is recorded (its calls are handed the run as it stood before).
        if (paidAtKill === undefined && toolUses(stored).some((use) => use.name === 'issue_refund')) {
          paidAtKill = harness!.stack.world.payments.refunds().length;
          await target.killRun(turn.runId, flag);
        }
        return stored;
      },
    });
    const finished = await harness.run({ runId: 'killed-before-write', input: { date: day.date } });
    expect(paidAtKill).toBeDefined();
    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'killed' });
    expect(harness.stack.world.payments.refunds()).toHaveLength(paidAtKill!);
  }, 60_000);

  it('a retry of a read call whose record is there finds it: its handed record is refused, and answered the first', async () => {
    let retried: { turn: number; call: number; recordedAt: string } | undefined;
    const answered: unknown[] = [];
    harness = await start({
      recordCall: async (target, call, now, count, basis) => {
        if (!basis || retried) return target.recordCall(call, now, count, basis);
        // The first attempt recorded the call, and died before it answered: the retry records again.
        const first = await target.recordCall(call, now, count, basis);
        retried = { turn: call.turn, call: call.call, recordedAt: first.recorded ? first.record.recordedAt! : '' };
        const again = await target.recordCall({ ...call, recordedAt: new Date(Date.parse(call.recordedAt!) + 1).toISOString() }, now, count, basis);
        answered.push(again);
        return again;
      },
    });
    const finished = await harness.run({ runId: 'retried-read', input: { date: day.date } });
    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'succeeded' });
    // The retry's record is refused, and answered the first: that is what the call returns.
    expect(answered).toEqual([{ recorded: false, existing: expect.objectContaining({ recordedAt: retried!.recordedAt }) }]);
    expect(await harness.stack.ledger.getCall('retried-read', retried!.turn, retried!.call)).toMatchObject({ status: 'completed', recordedAt: retried!.recordedAt, attempts: 1 });
  }, 60_000);

  it('a handed state other than the one sealed with its versions (made up on the way) is refused before anything of it is sent: the calls read, and the run goes on as recorded', async () => {
    const refused: string[] = [];
    const written: string[] = [];
    harness = await start({
      // What the turn's calls are handed says the run may take far more steps than it may.
      recordTurn: (target, turn, count) => {
        const handing = count?.handing;
        const madeUp = (text: string) => {
          const state = JSON.parse(text) as { run: RunRecord };
          return JSON.stringify({ ...state, run: { ...state.run, config: { ...state.run.config, maxSteps: 1_000_000 } } });
        };
        return target.recordTurn(turn, handing ? { ...count, handing: (seen) => handing({ ...seen, ...(seen.basis && { basis: { ...seen.basis, content: madeUp(seen.basis.content!) } }) }) } : count);
      },
      checkHanded: (target, runId, basis) =>
        target.checkHanded(runId, basis).catch((error: unknown) => {
          if (isStepChanged(error)) refused.push(runId);
          throw error;
        }),
      recordCall: (target, call, now, count, basis) => (basis && written.push(`record ${call.name}`), target.recordCall(call, now, count, basis)),
      // A claim on what was handed carries its seal; one on the call's own read, the versions it read.
      claimCall: (target, call, now, effect, basis) => (basis && 'mac' in basis && written.push(`claim ${call.name}`), target.claimCall(call, now, effect, basis)),
    });
    const finished = await harness.run({ runId: 'made-up', input: { date: day.date } });
    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'succeeded' });
    // Every call handed it was refused at its seal's check, read instead, and wrote nothing on it.
    expect(refused.length).toBeGreaterThan(0);
    expect(written).toEqual([]);
    const { calls } = await harness.stack.ledger.listConversation('made-up');
    expect(calls.every((call) => call.status === 'completed')).toBe(true);
    expect(duplicatePayments(harness.stack)).toEqual([]);
  }, 60_000);
});
