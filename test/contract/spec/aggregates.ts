import { describe, expect, it } from 'vitest';
import { at } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/**
 * The aggregates role (`AggregateLedger`): the amounts a tool moves per key, reserved across the
 * agent's runs before each call is sent — within a threshold, atomically, once per call.
 */
export function aggregatesSpec(make: MakeLedger): void {
  describe('aggregates reserved across runs, within a threshold', () => {
    const { ledger } = useLedger(make);
    const key = 'refunds:issue_refund:pay_025';
    const reserve = (holder: string, amount: number, threshold?: number) => ledger.reserveAggregate({ key, holder, amount, ...(threshold !== undefined && { threshold }) }, at(0));

    it('adds a reservation within the threshold and refuses the one that would pass it, adding nothing', async () => {
      expect(await reserve('r1:2:1', 49_999, 50_000)).toEqual({ reserved: true, total: 49_999 });
      expect(await reserve('r2:2:1', 49_999, 50_000)).toEqual({ reserved: false, total: 49_999 });
      expect(await reserve('r2:3:1', 1, 50_000)).toEqual({ reserved: true, total: 50_000 });
      expect(await ledger.getAggregate(key)).toMatchObject({ kind: 'aggregate', key, total: 50_000, holders: ['r1:2:1', 'r2:3:1'] });
    });

    it('adds a holder once: a retried call is answered as reserved, whatever the threshold now says', async () => {
      await reserve('r1:2:1', 30_000, 50_000);
      await reserve('r2:2:1', 20_000, 50_000);
      expect(await reserve('r1:2:1', 30_000, 50_000)).toEqual({ reserved: true, total: 50_000 });
      expect((await ledger.getAggregate(key))!.total).toBe(50_000);
    });

    it('adds an approved call (no threshold) whatever the total', async () => {
      await reserve('r1:2:1', 49_999, 50_000);
      expect(await reserve('r1:3:1', 129_900)).toEqual({ reserved: true, total: 179_899 });
    });

    it('lets exactly one of two runs racing stay under the threshold, and of 50 racers as many as fit', async () => {
      const two = await Promise.all([reserve('a:1:1', 30_000, 50_000), reserve('b:1:1', 30_000, 50_000)]);
      expect(two.filter((answer) => answer.reserved)).toHaveLength(1);
      expect((await ledger.getAggregate(key))!.total).toBe(30_000);
      const other = 'refunds:issue_refund:pay_026';
      const many = await Promise.all(Array.from({ length: 50 }, (_, index) => ledger.reserveAggregate({ key: other, holder: `r${index}:1:1`, amount: 10_000, threshold: 50_000 }, at(0))));
      expect(many.filter((answer) => answer.reserved)).toHaveLength(5);
      expect((await ledger.getAggregate(other))!.total).toBe(50_000);
    });

    it('keeps each key apart, and has no record for a key never reserved', async () => {
      await reserve('r1:1:1', 40_000, 50_000);
      expect(await ledger.reserveAggregate({ key: 'refunds:issue_refund:pay_001', holder: 'r1:1:2', amount: 40_000, threshold: 50_000 }, at(0))).toEqual({ reserved: true, total: 40_000 });
      expect(await ledger.getAggregate('refunds:issue_refund:pay_999')).toBeUndefined();
    });
  });
}
