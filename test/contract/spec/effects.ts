import { describe, expect, it } from 'vitest';
import type { EffectHolder, EffectOutcome, Ledger } from '../../../lambdas/ledger/ledger.js';
import { at, call, holder, releasedAt } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/**
 * The effects role (`EffectLedger`): an effect named by a business key, claimed once across the
 * agent's runs — with the call that holds it, in the same write (`claimCall` and the other call
 * methods with `effect`).
 */
export function effectsSpec(make: MakeLedger): void {
  describe('effects claimed across runs, each with its call in one write', () => {
    const { ledger } = useLedger(make);
    const runB = { runId: 'r2', turn: 5, call: 2 };
    const ok = { outcome: 'ok' as const, result: '{"id":"re_1"}', latencyMs: 4 };
    // The holder's call: the same run, turn, call, lease and settle time.
    const claim = (target: Ledger, by: EffectHolder, now: Date) =>
      target.claimCall(call({ runId: by.runId, turn: by.turn, call: by.call, leaseUntil: by.leaseUntil, effectKey: by.key, ...(by.settleMs !== undefined && { settleMs: by.settleMs }) }), now, by);
    const complete = (by: EffectHolder, outcome: EffectOutcome, now: Date) =>
      ledger.completeCall({ runId: by.runId, turn: by.turn, call: by.call, outcome, now, effect: { key: by.key, ...(outcome.unknown && { unknown: true }) } });
    const release = (by: EffectHolder, now: Date) => ledger.releaseCall(by.runId, by.turn, by.call, now, { effect: { key: by.key } });

    it('lets exactly one of 50 runs claiming the same effect at once hold it, with its call; the others see the holder and claim no call', async () => {
      const claims = await Promise.all(Array.from({ length: 50 }, (_, index) => claim(ledger, holder({ runId: `r${index}` }), at(0))));
      const winners = claims.filter((claimed) => claimed.claimed);
      expect(winners).toHaveLength(1);
      const winner = winners[0]!.record.runId;
      expect(winners[0]).toMatchObject({ record: { runId: winner, status: 'in_flight', attempts: 1 }, effect: { runId: winner, attempts: 1 } });
      for (const claimed of claims) if (!claimed.claimed) expect(claimed.effect).toMatchObject({ runId: winner, status: 'in_flight', attempts: 1 });
      expect(await ledger.getEffect(holder().key)).toMatchObject({ runId: winner, attempts: 1 });
      const calls = await Promise.all(Array.from({ length: 50 }, (_, index) => ledger.getCall(`r${index}`, 3, 1)));
      expect(calls.filter((record) => record !== undefined).map((record) => record!.runId)).toEqual([winner]);
    });

    it('returns the completed result to another run, never reclaims a completed effect, and writes nothing for that run', async () => {
      await claim(ledger, holder(), at(0));
      expect(await complete(holder(), ok, at(1))).toMatchObject({ status: 'completed', result: ok.result });
      expect(await ledger.getEffect(holder().key)).toMatchObject({ status: 'completed', result: ok.result });
      expect(await claim(ledger, holder(runB), at(3600))).toMatchObject({ claimed: false, effect: { runId: 'r1', status: 'completed', result: ok.result } });
      expect(await ledger.getCall('r2', 5, 2)).toBeUndefined();
    });

    it('refuses another run while the holder’s lease is live, and lets it take over a dead holder’s effect after lease and settle time', async () => {
      await claim(ledger, holder({ settleMs: 5_000 }), at(0));
      expect(await claim(ledger, holder(runB), at(20))).toMatchObject({ claimed: false, effect: { runId: 'r1' } });
      expect(await claim(ledger, holder(runB), at(35))).toMatchObject({ claimed: false });
      const takeover = await claim(ledger, holder({ ...runB, args: { other: true }, leaseUntil: at(100).toISOString() }), at(36));
      expect(takeover).toMatchObject({ claimed: true, record: { runId: 'r2', attempts: 1 }, effect: { runId: 'r2', attempts: 2, args: holder().args } });
    });

    it('lets exactly one of 50 concurrent takeovers of a dead holder’s effect win', async () => {
      await claim(ledger, holder(), at(0));
      const claims = await Promise.all(Array.from({ length: 50 }, (_, index) => claim(ledger, holder({ runId: `t${index}`, leaseUntil: at(200).toISOString() }), at(100))));
      expect(claims.filter((claimed) => claimed.claimed)).toHaveLength(1);
      expect((await ledger.getEffect(holder().key))!.attempts).toBe(2);
    });

    it('claims neither when the call is in the way: its record, the effect untouched', async () => {
      await ledger.claimCall(call(), at(0));
      expect(await claim(ledger, holder(), at(10))).toMatchObject({ claimed: false, existing: { runId: 'r1', attempts: 1 } });
      expect(await ledger.getEffect(holder().key)).toBeUndefined();
    });

    it('a release by the holder ends both leases: its call is claimed again at once, the effect by another run after the settle time only', async () => {
      await claim(ledger, holder({ settleMs: 10_000 }), at(0));
      await release(holder(runB), at(1)); // neither is run B's: nothing changes
      expect((await ledger.getEffect(holder().key))!.leaseUntil).toBe(at(30).toISOString());
      await release(holder(), at(2));
      expect(await ledger.getCall('r1', 3, 1)).toMatchObject({ leaseUntil: releasedAt(at(2)).toISOString() });
      expect(await claim(ledger, holder(runB), new Date(releasedAt(at(2)).getTime() + 10_000))).toMatchObject({ claimed: false });
      expect(await claim(ledger, holder(runB), at(12))).toMatchObject({ claimed: true, effect: { attempts: 2 } });
    });

    it('renews the holder’s live leases while its call runs, never another’s, never one that ended', async () => {
      await claim(ledger, holder(), at(0));
      const renew = (by: EffectHolder, attempts: number, now: Date, until: Date) => ledger.renewCall({ runId: by.runId, turn: by.turn, call: by.call, attempts, now, leaseUntil: until, effect: { key: by.key, attempts } });
      expect(await renew(holder(runB), 1, at(10), at(60))).toBe(false);
      expect(await renew(holder(), 2, at(10), at(60))).toBe(false); // not this attempt's
      expect(await renew(holder(), 1, at(10), at(60))).toBe(true);
      expect(await ledger.getEffect(holder().key)).toMatchObject({ leaseUntil: at(60).toISOString() });
      expect(await claim(ledger, holder(runB), at(45))).toMatchObject({ claimed: false });
      await release(holder(), at(50));
      expect(await renew(holder(), 1, at(51), at(100))).toBe(false);
    });

    it('an effect that ended rejected or refused is no claim: the next run claims it as a first attempt; the call keeps its outcome', async () => {
      await claim(ledger, holder(), at(0));
      expect(await complete(holder(), { outcome: 'rejected', result: '{}', latencyMs: 0 }, at(1))).toMatchObject({ status: 'completed', outcome: 'rejected' });
      expect(await ledger.getEffect(holder().key)).toMatchObject({ status: 'released' });
      expect(await claim(ledger, holder(runB), at(2))).toMatchObject({ claimed: true, effect: { runId: 'r2', attempts: 1 } });
    });

    it('an outcome that may have taken effect (unknown) completes the effect like ok', async () => {
      await claim(ledger, holder(), at(0));
      await complete(holder(), { outcome: 'error', result: '{"escalated":true}', latencyMs: 0, unknown: true }, at(1));
      expect(await ledger.getEffect(holder().key)).toMatchObject({ status: 'completed', outcome: 'error' });
    });

    it('refuses to complete a call not in flight, writing neither', async () => {
      await claim(ledger, holder(), at(0));
      await complete(holder(), ok, at(1));
      await expect(complete(holder(), { ...ok, result: '2' }, at(2))).rejects.toThrow(/conditional/i);
      expect(await ledger.getEffect(holder().key)).toMatchObject({ result: ok.result });
    });

    it('keeps effects of other keys apart, and is undefined for one never claimed', async () => {
      await claim(ledger, holder(), at(0));
      expect(await claim(ledger, holder({ key: 'refunds:issue_refund:rr_2', ...runB }), at(0))).toMatchObject({ claimed: true });
      expect(await ledger.getEffect('refunds:issue_refund:rr_3')).toBeUndefined();
    });
  });
}
