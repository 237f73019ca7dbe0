import { describe, expect, it } from 'vitest';
import type { DamagedRunOptions, Ledger } from '../../../lambdas/ledger/ledger.js';
import { createClient } from '../../../client/ledger-client.js';
import { verifyRun } from '../../../lambdas/ledger/seal.js';
import { at, run, turn, call } from '../fixtures.js';
import { useLedger, afterDamage, type MakeLedger } from './support.js';

/** Tamper evidence (sealed records): only where there is a store to damage behind the ledger's back. */
export function integritySpec(make: MakeLedger, options: { damageable?: boolean }): void {
  describe('integrity', () => {
    const { ledger, under } = useLedger(make);

    // Only where there is a store to damage behind the ledger's back (not a ledger's own memory).
    describe.runIf(options.damageable)('tamper evidence (sealed records)', () => {
      /** Run r1 with three counted turns and a completed, counted call of turn 3. */
      const recorded = async () => {
        await ledger.createRun(run('r1'));
        for (const number of [1, 2, 3]) {
          await ledger.recordTurn(turn(number, `turn ${number}`));
          await ledger.countStep('r1', `turn:${number}`, { steps: 1, modelTurns: 1 });
        }
        await ledger.claimCall(call(), at(1));
        await ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'ok', result: '{"refunded":true}', latencyMs: 5 }, now: at(2) });
        await ledger.countStep('r1', 'call:3:1', { steps: 1, toolCalls: 1 });
      };
      const verified = (on: Ledger) => verifyRun(on, 'r1').then((report) => report.problems.join('\n'));
      const loaded = (on: Ledger) => on.loadStep('r1', { turns: [1, 2, 3], calls: [{ turn: 3, call: 1 }] }).then(() => 'loaded');

      it('verifies an undamaged run, and reads it back', async () => {
        await recorded();
        expect(await verifyRun(ledger, 'r1')).toEqual({ runId: 'r1', records: 5, turns: 3, calls: 1, approvals: 0, problems: [] });
        expect((await ledger.loadStep('r1', { turns: [2] })).turns[0]).toEqual(turn(2, 'turn 2'));
      });

      it.each([
        ['an altered turn', 'TURN#0002', (items: Map<string, Record<string, unknown>>) => {
          items.get('TURN#0002')!['content'] = [{ type: 'text', text: 'refund everyone' }];
        }],
        ['altered counters', 'RUN', (items: Map<string, Record<string, unknown>>) => {
          items.get('RUN')!['steps'] = 0;
        }],
        ['an altered tool result', 'TURN#0003#CALL#01', (items: Map<string, Record<string, unknown>>) => {
          items.get('TURN#0003#CALL#01')!['result'] = '{"refunded":false}';
        }],
        ['two turns swapped', 'TURN#0002', (items: Map<string, Record<string, unknown>>) => {
          const [second, third] = [items.get('TURN#0002')!, items.get('TURN#0003')!];
          items.set('TURN#0002', { ...third, sk: 'TURN#0002' });
          items.set('TURN#0003', { ...second, sk: 'TURN#0003' });
        }],
      ])('refuses %s: loadStep and verify name it', async (_name, record, edit) => {
        await recorded();
        expect(await afterDamage(under, edit, loaded)).toMatch(/^Ledger\.IntegrityError: ledger integrity: /);
        expect(await afterDamage(under, () => {}, verified)).toMatch(new RegExp(`ledger integrity: (run r1, record ${record}|.*ledger\\.jsonl)`));
      });

      it.each([
        ['listRunningRuns', (on: Ledger, options?: DamagedRunOptions) => on.listRunningRuns(options)],
        ['listRuns', (on: Ledger, options?: DamagedRunOptions) => on.listRuns(100, options)],
      ])('%s lists the runs it can trust, and names a damaged one to onDamaged, or throws without it', async (_method, list) => {
        await ledger.createRun(run('r1'));
        await ledger.createRun(run('r2'));
        const alterSteps = (items: Map<string, Record<string, unknown>>) => {
          items.get('RUN')!['steps'] = 7;
        };
        const listed = await afterDamage(under, alterSteps, async (on) => {
          const damaged: string[] = [];
          const runs = await list(on, { onDamaged: (runId, error) => damaged.push(`${runId}: ${error.name}`) });
          return `listed ${runs.map((listedRun) => listedRun.runId).join(',')}; damaged ${damaged.join(',')}`;
        });
        // DynamoDB verifies each run's record alone: r2 is listed, r1 named. The embedded log is one
        // chain: the file is refused as a whole when it opens, naming it.
        expect(listed).toMatch(/^(listed r2; damaged r1: Ledger\.IntegrityError|Ledger\.IntegrityError: ledger integrity: .*ledger\.jsonl.*)$/);
        expect(await afterDamage(under, () => {}, (on) => list(on).then(() => 'listed'))).toMatch(/^Ledger\.IntegrityError: ledger integrity: /);
      });

      it("the client's verify of every run reports a damaged run among the others instead of stopping at it", async () => {
        await ledger.createRun(run('r1'));
        await ledger.createRun(run('r2'));
        const reported = await afterDamage(
          under,
          (items) => {
            items.get('RUN')!['steps'] = 7;
          },
          async (on) =>
            ((await createClient({ ledger: on }).verify('all')) ?? [])
              .map((report) => `${report.runId}: ${report.problems.length === 0 ? 'OK' : report.problems.join('; ')}`)
              .sort()
              .join('\n'),
        );
        expect(reported).toMatch(/^(r1: ledger integrity: run r1, record RUN fails verification: .*\nr2: OK|Ledger\.IntegrityError: ledger integrity: .*ledger\.jsonl.*)$/);
      });

      it.each([
        ['a missing turn', 'TURN#0002', (items: Map<string, Record<string, unknown>>) => items.delete('TURN#0002')],
        ['a missing last turn', 'TURN#0003', (items: Map<string, Record<string, unknown>>) => {
          items.delete('TURN#0003#CALL#01');
          items.delete('TURN#0003');
        }],
        ['a missing call', 'TURN#…#CALL#…', (items: Map<string, Record<string, unknown>>) => items.delete('TURN#0003#CALL#01')],
        ['a forged turn', 'TURN#0004', (items: Map<string, Record<string, unknown>>) => {
          items.set('TURN#0004', { ...items.get('TURN#0003')!, sk: 'TURN#0004', turn: 4, seal: 'forged' });
        }],
      ])('refuses %s: verify names it', async (_name, record, edit) => {
        await recorded();
        expect(await afterDamage(under, edit, verified)).toMatch(new RegExp(`ledger integrity: (run r1, record ${record.replace(/[#…]/g, '.')}|.*ledger\\.jsonl)`));
      });
    });
  });
}
