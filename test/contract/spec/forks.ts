import { describe, expect, it } from 'vitest';
import { verifyRun } from '../../../lambdas/ledger/seal.js';
import { run } from '../fixtures.js';
import { afterDamage, useLedger, type MakeLedger } from './support.js';

/** Forks (lambdas/runs/fork.ts): the lineage, sealed in both runs' records. */
export function forksSpec(make: MakeLedger, options: { damageable?: boolean }): void {
  describe('forks', () => {
    const { ledger, under } = useLedger(make);
    const lineage = { runId: 'p0', turn: 3, effects: 'reuse' as const };

    it('records a fork on its parent once, however often it is asked', async () => {
      await ledger.createRun(run('p0'));
      await ledger.createRun(run('r1', { forkedFrom: lineage }));
      expect(await ledger.recordFork('p0', { runId: 'r1', turn: 3 })).toBe(true);
      expect(await ledger.recordFork('p0', { runId: 'r1', turn: 3 })).toBe(true);
      expect((await ledger.getRun('p0'))!.forks).toEqual([{ runId: 'r1', turn: 3 }]);
      expect((await ledger.getRun('r1'))!.forkedFrom).toEqual(lineage);
      expect((await verifyRun(ledger, 'p0')).problems).toEqual([]);
      expect((await verifyRun(ledger, 'r1')).problems).toEqual([]);
    });

    it('answers false for a parent that does not exist, and writes nothing', async () => {
      expect(await ledger.recordFork('nobody', { runId: 'r1', turn: 1 })).toBe(false);
      expect(await ledger.getRun('nobody')).toBeUndefined();
    });

    describe.runIf(options.damageable)('tamper evidence', () => {
      it("refuses a fork whose forkedFrom was altered: verify names the run's record", async () => {
        await ledger.createRun(run('p0'));
        await ledger.createRun(run('r1', { forkedFrom: lineage }));
        await ledger.recordFork('p0', { runId: 'r1', turn: 3 });
        const verified = await afterDamage(
          under,
          (items) => void (items.get('RUN')!['forkedFrom'] = { ...lineage, turn: 1 }),
          (on) => verifyRun(on, 'r1').then((report) => report.problems.join('\n')),
        );
        expect(verified).toMatch(/ledger integrity: (run r1, record RUN|.*ledger\.jsonl)/);
      });
    });
  });
}
