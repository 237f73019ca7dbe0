import { describe, expect, it } from 'vitest';
import type { EffectHolder, EffectOutcome, EffectResolutionRequest, EffectResolving, Ledger } from '../../../lambdas/ledger/ledger.js';
import { InvalidInputError } from '../../../lambdas/shared/errors.js';
import { EFFECT_READS_AT_ONCE } from '../../../lambdas/ledger/storage-ledger.js';
import { at, call, holder } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/**
 * A person settles an escalated business-key effect (`savepoint effects resolve`, protocol.ts
 * `resolveEffect`): on a storage engine's ledger (the embedded one, the DynamoDB one:
 * storage-ledger.ts `effectResolvingOf`).
 */
export function effectResolutionsSpec(make: MakeLedger): void {
  describe('escalated effects settled by a person', () => {
    const { ledger, under } = useLedger(make);
    const runB = { runId: 'r2', turn: 5, call: 2 };
    const claim = (target: Ledger, by: EffectHolder, now: Date) =>
      target.claimCall(call({ runId: by.runId, turn: by.turn, call: by.call, leaseUntil: by.leaseUntil, effectKey: by.key }), now, by);
    const complete = (by: EffectHolder, outcome: EffectOutcome, now: Date) =>
      ledger.completeCall({ runId: by.runId, turn: by.turn, call: by.call, outcome, now, effect: { key: by.key, ...(outcome.unknown && { unknown: true }) } });
    const unknown = { outcome: 'error' as const, result: '{"error":"outcome_unknown","escalated":true}', latencyMs: 0, unknown: true };
    const escalate = async () => {
      await claim(ledger, holder(), at(0));
      await complete(holder(), unknown, at(1));
    };
    const resolving = () => ledger as Ledger & EffectResolving;
    const notSent: EffectResolutionRequest = { as: 'not_sent', by: 'ops@example', reason: 'provider shows no refund rr_1' };

    it('lists an escalated effect, and once resolved not sent, a later run claims the key (and keeps the audit)', async () => {
      await escalate();
      expect(await claim(ledger, holder(runB), at(10))).toMatchObject({ claimed: false, effect: { status: 'completed', result: unknown.result } });
      expect(await resolving().listEffects()).toMatchObject([{ key: holder().key, status: 'completed', outcome: 'error', runId: 'r1' }]);
      const resolved = await resolving().resolveEffect(holder().key, { ...notSent, expected: { runId: 'r1', turn: 3, call: 1, attempts: 1 } }, at(20));
      expect(resolved).toMatchObject({ status: 'released', resolutions: [{ as: 'not_sent', by: 'ops@example', at: at(20).toISOString(), reason: notSent.reason, runId: 'r1', turn: 3, call: 1 }] });
      const again = await claim(ledger, holder({ ...runB, leaseUntil: at(60).toISOString() }), at(30));
      expect(again).toMatchObject({ claimed: true, effect: { runId: 'r2', status: 'in_flight', attempts: 1, resolutions: [{ as: 'not_sent' }] } });
      // The escalated call's own record stays as it was: the run's history.
      expect(await ledger.getCall('r1', 3, 1)).toMatchObject({ status: 'completed', outcome: 'error', result: unknown.result });
    });

    it(`lists every effect of a ledger that holds more than it reads at once (${EFFECT_READS_AT_ONCE})`, async () => {
      const holders = Array.from({ length: 2 * EFFECT_READS_AT_ONCE + 3 }, (_, index) => holder({ key: `refunds:issue_refund:rr_${index}`, call: index + 1 }));
      for (const by of holders) await claim(ledger, by, at(0));
      const listed = await resolving().listEffects();
      expect(listed.map((effect) => effect.key).sort()).toEqual(holders.map((by) => by.key).sort());
    });

    it('resolved as sent, a later run is answered with the given result and claims nothing', async () => {
      await escalate();
      await resolving().resolveEffect(holder().key, { as: 'sent', by: 'ops@example', reason: 'refund re_9 seen in the dashboard', result: '{"id":"re_9"}' }, at(20));
      expect(await claim(ledger, holder(runB), at(30))).toMatchObject({ claimed: false, effect: { status: 'completed', outcome: 'ok', result: '{"id":"re_9"}', resolutions: [{ as: 'sent' }] } });
      expect(await ledger.getCall('r2', 5, 2)).toBeUndefined();
    });

    it('refuses an effect that is not escalated (done, in flight, released, absent), writing nothing', async () => {
      const refused = (key = holder().key) => resolving().resolveEffect(key, notSent, at(20));
      await expect(refused('nope:nope:x')).rejects.toThrow(InvalidInputError);
      await claim(ledger, holder(), at(0));
      await expect(refused()).rejects.toThrow(/in flight in run r1 .*only an escalated effect/);
      await complete(holder(), { outcome: 'ok', result: '{"id":"re_1"}', latencyMs: 1 }, at(1));
      const done = await ledger.getEffect(holder().key);
      await expect(refused()).rejects.toThrow(/is done .*nothing changed/);
      expect(await ledger.getEffect(holder().key)).toEqual(done);
    });

    it('refuses a resolution of an effect that changed since it was read: a concurrent one, or another escalation', async () => {
      await escalate();
      // Two operators at once, each through its own ledger on the store where the driver has one (two CLIs on one table).
      const other = (under.another ? await under.another() : ledger) as Ledger & EffectResolving;
      const both = await Promise.allSettled([
        resolving().resolveEffect(holder().key, notSent, at(20)),
        other.resolveEffect(holder().key, { as: 'sent', by: 'other@example', reason: 'seen', result: '{}' }, at(20)),
      ]);
      expect(both.filter((settled) => settled.status === 'fulfilled')).toHaveLength(1);
      expect((both.find((settled) => settled.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(InvalidInputError);
      expect((await ledger.getEffect(holder().key))!.resolutions).toHaveLength(1);

      // Read as r3's escalation, r4's since: the one checked is not the one there.
      const key = 'refunds:issue_refund:rr_2';
      await claim(ledger, holder({ key, runId: 'r3' }), at(0));
      await complete(holder({ key, runId: 'r3' }), unknown, at(1));
      const read = (await ledger.getEffect(key))!;
      await resolving().resolveEffect(key, notSent, at(2));
      await claim(ledger, holder({ key, runId: 'r4', leaseUntil: at(60).toISOString() }), at(3));
      await complete(holder({ key, runId: 'r4' }), unknown, at(4));
      const now = (await ledger.getEffect(key))!;
      await expect(resolving().resolveEffect(key, { ...notSent, expected: read }, at(5))).rejects.toThrow(/changed since it was read: .*run r4/);
      expect(await ledger.getEffect(key)).toEqual(now);
    });
  });
}
