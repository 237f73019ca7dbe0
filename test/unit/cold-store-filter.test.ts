import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { COLD_DIR, ColdStore, KeyFilter } from '../../lambdas/ledger/cold-store.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';

/**
 * The cold store's filter of the keys it noted (cold-store.ts KeyFilter): a key asked for that
 * was never noted is answered without reading its bucket. A false "not here" would lose a group
 * (a finished run, an effect already claimed): there must be none.
 */
describe("the cold store's filter of noted keys", () => {
  it('never answers "not here" for a key it holds, and rarely "maybe" for one it does not', () => {
    const filter = new KeyFilter();
    const added = 100_000;
    for (let i = 0; i < added; i++) filter.add(`EFFECT#refund-${i}`);
    let missed = 0;
    for (let i = 0; i < added; i++) if (!filter.mayHold(`EFFECT#refund-${i}`)) missed++;
    expect(missed).toBe(0);
    let maybe = 0;
    for (let i = 0; i < added; i++) if (filter.mayHold(`EFFECT#other-${i}`)) maybe++;
    // Four bits a key in 2^23: about 4.7 in a million at 100,000 keys, so 0.5 expected here.
    expect(maybe).toBeLessThanOrEqual(5);
  });

  describe('in the store', () => {
    let dir: string | undefined;
    afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

    it('reads no bucket for a key never noted, and still names a damaged bucket for one it noted', () => {
      dir = mkdtempSync(join(tmpdir(), 'savepoint-cold-filter-'));
      const store = ColdStore.create(join(dir, COLD_DIR), ephemeralSealer());
      const noted = Array.from({ length: 600 }, (_, i) => `RUN#noted-${i}`);
      store.putAll(noted.map((group) => ({ group, items: [{ pk: group, sk: 'RUN', offset: 0, bytes: 10, seal: 's' }], approvals: [`approval-${group}`] })));
      expect(store.get('RUN#noted-7')?.items).toEqual([{ pk: 'RUN#noted-7', sk: 'RUN', offset: 0, bytes: 10, seal: 's' }]);
      expect(store.groupOfApproval('approval-RUN#noted-7')).toBe('RUN#noted-7');
      // Every bucket gone: 1,200 keys noted leave few of the 256 unwritten, so reading the bucket of a
      // key never noted would nearly always name it missing (without the filter, this fails).
      rmSync(join(dir, COLD_DIR), { recursive: true });
      for (let i = 0; i < 1_000; i++) expect(store.get(`RUN#never-${i}`)).toBeUndefined();
      expect(store.groupOfApproval('approval-never')).toBeUndefined();
      expect(() => store.get('RUN#noted-7')).toThrow(/the bucket file is missing/);
    });
  });
});
