import { describe, expect, it } from 'vitest';
import { at, holder } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/** The effects role (`EffectLedger`): an effect named by a business key, claimed once across the agent's runs. */
export function effectsSpec(make: MakeLedger): void {
  describe('effects claimed across runs', () => {
    const { ledger } = useLedger(make);
    const runB = { runId: 'r2', turn: 5, call: 2 };
    const ok = { outcome: 'ok' as const, result: '{"id":"re_1"}', latencyMs: 4 };

    it('lets exactly one of 50 runs claiming the same effect at once hold it; the others see the holder', async () => {
      const claims = await Promise.all(Array.from({ length: 50 }, (_, index) => ledger.claimEffect(holder({ runId: `r${index}` }), at(0))));
      const winners = claims.filter((claim) => claim.claimed);
      expect(winners).toHaveLength(1);
      const winner = winners[0]!.record.runId;
      for (const claim of claims) if (!claim.claimed) expect(claim.existing).toMatchObject({ runId: winner, status: 'in_flight', attempts: 1 });
      expect(await ledger.getEffect(holder().key)).toMatchObject({ runId: winner, attempts: 1 });
    });

    it('returns the completed result to another run, and never reclaims a completed effect', async () => {
      await ledger.claimEffect(holder(), at(0));
      await ledger.completeEffect(holder(), ok, at(1));
      expect(await ledger.claimEffect(holder(runB), at(3600))).toMatchObject({ claimed: false, existing: { runId: 'r1', status: 'completed', result: ok.result } });
      expect(await ledger.completeEffect(holder(runB), { ...ok, result: '2' }, at(3601))).toMatchObject({ result: ok.result });
    });

    it('refuses another run while the holder’s lease is live, and lets it take over a dead holder’s effect after lease and settle time', async () => {
      await ledger.claimEffect(holder({ settleMs: 5_000 }), at(0));
      expect(await ledger.claimEffect(holder(runB), at(20))).toMatchObject({ claimed: false, existing: { runId: 'r1' } });
      expect(await ledger.claimEffect(holder(runB), at(35))).toMatchObject({ claimed: false });
      const takeover = await ledger.claimEffect(holder({ ...runB, args: { other: true }, leaseUntil: at(100).toISOString() }), at(36));
      expect(takeover).toMatchObject({ claimed: true, record: { runId: 'r2', attempts: 2, args: holder().args } });
    });

    it('lets exactly one of 50 concurrent takeovers of a dead holder’s effect win', async () => {
      await ledger.claimEffect(holder(), at(0));
      const claims = await Promise.all(Array.from({ length: 50 }, (_, index) => ledger.claimEffect(holder({ runId: `t${index}`, leaseUntil: at(200).toISOString() }), at(100))));
      expect(claims.filter((claim) => claim.claimed)).toHaveLength(1);
      expect((await ledger.getEffect(holder().key))!.attempts).toBe(2);
    });

    it('a release by the holder lets the next claim in after the settle time only', async () => {
      await ledger.claimEffect(holder({ settleMs: 10_000 }), at(0));
      await ledger.releaseEffect(holder(runB), at(1)); // not the holder's: nothing changes
      expect((await ledger.getEffect(holder().key))!.leaseUntil).toBe(at(30).toISOString());
      await ledger.releaseEffect(holder(), at(2));
      expect(await ledger.claimEffect(holder(runB), at(12))).toMatchObject({ claimed: false });
      expect(await ledger.claimEffect(holder(runB), at(13))).toMatchObject({ claimed: true, record: { attempts: 2 } });
    });

    it('renews the holder’s live lease while its call runs, never another’s, never one that ended', async () => {
      await ledger.claimEffect(holder(), at(0));
      expect(await ledger.renewEffect(holder(runB), 1, at(10), at(60))).toBe(false);
      expect(await ledger.renewEffect(holder(), 2, at(10), at(60))).toBe(false); // not this attempt's
      expect(await ledger.renewEffect(holder(), 1, at(10), at(60))).toBe(true);
      expect(await ledger.claimEffect(holder(runB), at(45))).toMatchObject({ claimed: false });
      await ledger.releaseEffect(holder(), at(50));
      expect(await ledger.renewEffect(holder(), 1, at(51), at(100))).toBe(false);
    });

    it('an effect that ended rejected or refused is no claim: the next run claims it as a first attempt', async () => {
      await ledger.claimEffect(holder(), at(0));
      expect(await ledger.completeEffect(holder(), { outcome: 'rejected', result: '{}', latencyMs: 0 }, at(1))).toMatchObject({ status: 'released' });
      expect(await ledger.claimEffect(holder(runB), at(2))).toMatchObject({ claimed: true, record: { runId: 'r2', attempts: 1 } });
    });

    it('keeps effects of other keys apart, and is undefined for one never claimed', async () => {
      await ledger.claimEffect(holder(), at(0));
      expect(await ledger.claimEffect(holder({ key: 'refunds:issue_refund:rr_2', ...runB }), at(0))).toMatchObject({ claimed: true });
      expect(await ledger.getEffect('refunds:issue_refund:rr_3')).toBeUndefined();
    });
  });
}
