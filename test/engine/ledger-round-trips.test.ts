import { afterEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { countingLedger, type CountingLedger } from '../../lambdas/ledger/counting-ledger.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { LedgerKind } from '../../local/runtime/local-stack.js';
import { startHarness, type Harness } from '../support/refund-harness.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';

/**
 * Ledger round trips per agent step (what every step pays in latency on AWS), counted by a
 * decorator around the ledger the steps use, on both ledgers: the embedded default and the
 * DynamoDB ledger on dynalite (the conditional writes that deploy, end to end).
 */
const day = makeSampleDay(3, { plain: 6, already_refunded: 1, mismatch: 1, large: 0 });

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

describe.each<LedgerKind>(['embedded', 'dynalite'])('ledger round trips, %s ledger', (ledger) => {
  it('a fault-free run makes at most 2.6 ledger calls per agent step, the claim and record around each side effect included, an effect named by a business key with its call, each model turn counted in the write that records it and its calls in the reservation of the next, and 2 per function for its first read of the run', async () => {
    let counter: CountingLedger | undefined;
    // The tool calls each batched read asks for and does not find (a guess: on DynamoDB each a read unit billed).
    let absentCalls = 0;
    const loadStep = (inner: Ledger): Ledger['loadStep'] => async (runId, want) => {
      const read = await inner.loadStep(runId, want);
      absentCalls += (want?.calls?.length ?? 0) - read.calls.length;
      return read;
    };
    // The calls recorded (a read) or claimed (a write) on what their turn's write handed them
    // (steps/handed-step.ts), and the writes on handed versions refused (an item changed).
    const handed = { recordCall: 0, claimCall: 0 };
    let changed = 0;
    const onBasis = <M extends 'recordCall' | 'claimCall'>(method: M, basisAt: number) => (inner: Ledger) => async (...args: unknown[]) => {
      const write = () => (inner[method] as (...a: unknown[]) => Promise<unknown>)(...args);
      if (args[basisAt] === undefined) return write();
      try {
        const written = await write();
        handed[method] += 1;
        return written;
      } catch (error) {
        changed += 1;
        throw error;
      }
    };
    const wrapped: Partial<Record<keyof Ledger, (inner: Ledger) => unknown>> = { loadStep, recordCall: onBasis('recordCall', 3), claimCall: onBasis('claimCall', 3) };
    const guessing = (inner: Ledger): Ledger => new Proxy(inner, { get: (target, property, receiver) => wrapped[property as keyof Ledger]?.(target) ?? Reflect.get(target, property, receiver) });
    harness = await startHarness({ day, ledger, decorateLedger: (inner) => (counter = countingLedger(guessing(inner))).ledger });
    const finished = await harness.run({ runId: 'round-trips', input: { date: day.date } });
    expect(finished.status).toBe('SUCCEEDED');
    // Counted before the report is read: its reads are not the steps'.
    const counts = counter!.counts();
    const calls = counter!.total();
    const report = (await loadReport(harness.stack.ledger, 'round-trips', new Date(), refundReconciler))!;
    expect(report).toMatchObject({ status: 'succeeded', inFlight: 0, summary: { issued: 6, flagged: 1, skipped: 1 } });

    // A write named by a business key (issue_refund, flag_for_review) claims and completes its
    // effect across runs in the same write as its call: no round trip more (there were two).
    // Each function that reads the conversation (BudgetCheck, CallModel, CallTool, RequestApproval)
    // knows none of a new run at first — its cache is its own, as each Lambda function's is — and
    // reads it once (a query and a batched read): two round trips a function a run, not a step.
    const firstReads = 2 * 4;
    expect(counts['listConversation'] ?? 0, JSON.stringify(counts)).toBeLessThanOrEqual(4);
    // 2.59 here (2.62 while the decision after the final answer read the run again): a call more a run fails.
    expect((calls - firstReads) / report.steps, JSON.stringify(counts)).toBeLessThanOrEqual(2.6);
    // One read a step, before its work: the decision after the final answer reads nothing (what the
    // turn's own write saw, turn-seen.ts), nor does a step after its write — nor a call handed what
    // its turn's write left (handed-step.ts): every read here, and every write no person approves
    // (none does on this day), none of whose items changed.
    const reads = counts['recordCall'] ?? 0;
    const writes = report.toolCalls - reads;
    expect({ handed, changed }, JSON.stringify(counts)).toEqual({ handed: { recordCall: reads, claimCall: writes }, changed: 0 });
    expect(counts['loadStep']).toBe(report.modelTurns);
    // Every side effect is still claimed and recorded; every read recorded once.
    expect(counts['claimCall']).toBe(writes);
    expect(counts['completeCall']).toBe(writes);
    // The refunds and the review are effects (the report is the run's own), each completed by this run's call.
    const { calls: recorded } = await harness.stack.ledger.listConversation('round-trips');
    const keyed = recorded.filter((call) => call.effectKey !== undefined);
    expect(keyed).toHaveLength(writes - 1);
    for (const call of keyed) expect(await harness.stack.ledger.getEffect(call.effectKey!)).toMatchObject({ status: 'completed', runId: 'round-trips', turn: call.turn, call: call.call });
    // Each model call reserved once before it went out (countStep), the last turn's calls counted
    // in that same write (ledger/open-turn.ts); each turn counted in the write that recorded it — no
    // countStep of a step's own, and none for a call.
    expect(counts['countStep']).toBe(report.modelTurns);
    // Only BudgetCheck guesses the calls of the turn it has not seen (CallModel's cache knows the
    // turn it recorded, and asks for its calls by their keys): 8.7 absent keys a turn here, about
    // GUESSED_CALLS (8) less the calls found, and the first read of each function; 14.6 when
    // CallModel guessed too.
    expect(absentCalls / report.modelTurns).toBeLessThanOrEqual(10);
    expect(await harness.stack.ledger.getRun('round-trips')).toMatchObject({ steps: report.steps, modelTurns: report.modelTurns, toolCalls: report.toolCalls, reservedTokens: 0, reservedMicros: 0 });
  });
});
