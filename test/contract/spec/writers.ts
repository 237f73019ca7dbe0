import { describe, expect, it } from 'vitest';
import { approval, at, call, run } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/**
 * Two writers on one store (two Lambdas on one table): each update is conditional on the item it
 * read, so a writer whose read is stale has its put refused and redoes the rule on what is there.
 * Only where a second ledger can share the store (`LedgerUnderTest.another`).
 */
export function writersSpec(make: MakeLedger, options: { sharesStore?: boolean }): void {
  describe('two writers on one store', () => {
    const { ledger, under } = useLedger(make);

    describe.runIf(options.sharesStore)('a stale read', () => {
      it('loses no update: a count on a run another writer changed since it was read is redone on the new record', async () => {
        const other = await under.another!();
        await ledger.createRun(run('r1'));
        await ledger.loadStep('r1');
        expect(await other.countStep('r1', 'turn:1', { steps: 1, inputTokens: 10 })).toBe(true);
        expect(await ledger.countStep('r1', 'turn:2', { steps: 1, inputTokens: 5 })).toBe(true);
        expect(await ledger.countStep('r1', 'turn:1', { steps: 1 })).toBe(false);
        expect(await other.getRun('r1')).toMatchObject({ steps: 2, inputTokens: 15 });
      });

      it('claims a call once: a claim read as absent before another writer claimed it finds that claim', async () => {
        const other = await under.another!();
        await ledger.loadStep('r1', { calls: [{ turn: 3, call: 1 }] });
        expect(await other.claimCall(call(), at(0))).toMatchObject({ claimed: true });
        expect(await ledger.claimCall(call({ idempotencyKey: 'mine' }), at(0))).toMatchObject({ claimed: false, existing: { attempts: 1, idempotencyKey: 'r1:3:toolu_003_1' } });
      });

      it('reserves an aggregate within its threshold across writers: two runs racing cannot each stay under it', async () => {
        const other = await under.another!();
        const key = 'refunds:issue_refund:pay_025';
        await ledger.reserveAggregate({ key, holder: 'r0:1:1', amount: 10_000, threshold: 50_000 }, at(0));
        // Both writers read a total of 10,000 (each would stay under alone); one put is refused and redone on the new total.
        await Promise.all([ledger.getAggregate(key), other.getAggregate(key)]);
        const answers = await Promise.all([ledger.reserveAggregate({ key, holder: 'r1:1:1', amount: 30_000, threshold: 50_000 }, at(1)), other.reserveAggregate({ key, holder: 'r2:1:1', amount: 30_000, threshold: 50_000 }, at(1))]);
        expect(answers.map((answer) => answer.reserved).sort()).toEqual([false, true]);
        expect(await ledger.getAggregate(key)).toMatchObject({ total: 40_000 });
      });

      it('decides an approval once across writers', async () => {
        const other = await under.another!();
        await ledger.createRun(run('r1'));
        await ledger.upsertApproval(approval(), 'token-1');
        await ledger.getApproval('r1', 3, 1);
        expect((await other.decideApproval(approval(), { status: 'approved', decidedBy: 'alice' }, at(5))).decided).toBe(true);
        expect(await ledger.decideApproval(approval(), { status: 'rejected', decidedBy: 'bob' }, at(6))).toMatchObject({ decided: false, record: { status: 'approved', decidedBy: 'alice' } });
      });
    });
  });
}
