import { afterEach, describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { TransientError } from '../../lambdas/shared/errors.js';
import { isStepChanged } from '../../lambdas/ledger/handed-versions.js';
import type { LedgerKind } from '../../local/runtime/local-stack.js';
import { postDecision } from '../support/agent-harness.js';
import { startHarness, type Harness } from '../support/refund-harness.js';

/**
 * A tool call that reads first — one that waited for a person, a retry — decides on its own read
 * of the run item and the global kill item, and claims its write on the condition that both are
 * still the versions it read (lambdas/ledger/handed-versions.ts): a kill (of all runs, or of the
 * run) set between that read and the claim refuses the claim, nothing is written or sent, and the
 * call reads again and stops. End to end on both ledgers; the kill is set by a decorator in front
 * of the claim, so it lands exactly in that window.
 */
const flag = { by: 'alice', at: '2026-11-29T03:00:00.000Z', reason: 'wrong day' };

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

/** The ledger the steps use, with `claimCall` replaced by `claim` (given the ledger itself). */
const aroundClaim = (claim: (target: Ledger, ...args: Parameters<Ledger['claimCall']>) => ReturnType<Ledger['claimCall']>) => (ledger: Ledger): Ledger =>
  new Proxy(ledger, {
    get: (target, method: keyof Ledger) => (method === 'claimCall' ? (...args: Parameters<Ledger['claimCall']>) => claim(target, ...args) : (target[method] as (...args: unknown[]) => unknown).bind(target)),
  });

/** What a claim came to: claimed, answered a record in the way, or refused on what its call read (StepChangedError). */
async function outcomeOf(claim: ReturnType<Ledger['claimCall']>, outcomes: string[]): ReturnType<Ledger['claimCall']> {
  try {
    const claimed = await claim;
    outcomes.push(claimed.claimed ? 'claimed' : 'in the way');
    return claimed;
  } catch (error) {
    outcomes.push(isStepChanged(error) ? 'refused' : (error as Error).name);
    throw error;
  }
}

describe.each<LedgerKind>(['embedded', 'dynalite'])('a kill between a call’s own read and its claim, %s ledger', (ledger) => {
  it('a write that waited for a person is not sent once the kill of all runs is set after its read: its claim is refused, it reads again and stops', async () => {
    // One refund, over the approval threshold: its call waits for a person, then reads and claims.
    const day = makeSampleDay(5, { plain: 0, already_refunded: 0, mismatch: 0, large: 1 });
    const outcomes: string[] = [];
    let killed = false;
    harness = await startHarness({
      day,
      ledger,
      onAsked: (approval, stack) => void postDecision(stack, approval.approvalId, { decision: 'approve' }),
      decorateLedger: aroundClaim(async (target, call, now, effect, basis) => {
        if (call.name !== 'issue_refund') return target.claimCall(call, now, effect, basis);
        if (!killed) {
          killed = true;
          await target.setGlobalKill(flag);
        }
        return outcomeOf(target.claimCall(call, now, effect, basis), outcomes);
      }),
    });
    const finished = await harness.run({ runId: 'killed-after-approval', input: { date: day.date } });
    expect(harness.approvals).toHaveLength(1);
    // Nothing paid; its one claim refused: read again, the call found the kill and made none.
    expect(harness.stack.world.payments.refunds()).toEqual([]);
    expect(outcomes).toEqual(['refused']);
    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'killed', reason: `killed (all runs) by alice at ${flag.at}: wrong day` });
    const { calls } = await harness.stack.ledger.listConversation('killed-after-approval');
    expect(calls.filter((call) => call.name === 'issue_refund')).toEqual([]);
  }, 60_000);

  it('a retried write is not sent once its run is killed after its read: its claim is refused, it reads again and stops', async () => {
    const day = makeSampleDay(5, { plain: 1, already_refunded: 0, mismatch: 0, large: 0 });
    let attempts = 0;
    const outcomes: string[] = [];
    harness = await startHarness({
      day,
      ledger,
      decorateLedger: aroundClaim(async (target, call, now, effect, basis) => {
        if (call.name !== 'issue_refund') return target.claimCall(call, now, effect, basis);
        attempts += 1;
        // The first attempt fails before its claim (the state machine retries it: the retry reads
        // first); the retry's run is killed between its read and its claim.
        if (attempts === 1) throw new TransientError('the ledger did not answer');
        if (attempts === 2) await target.killRun(call.runId, flag);
        return outcomeOf(target.claimCall(call, now, effect, basis), outcomes);
      }),
    });
    const finished = await harness.run({ runId: 'killed-on-retry', input: { date: day.date } });
    expect(attempts).toBe(2);
    expect(harness.stack.world.payments.refunds()).toEqual([]);
    expect(outcomes).toEqual(['refused']);
    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'killed', reason: `killed by alice at ${flag.at}: wrong day` });
    const { calls } = await harness.stack.ledger.listConversation('killed-on-retry');
    expect(calls.filter((call) => call.name === 'issue_refund')).toEqual([]);
  }, 60_000);
});
