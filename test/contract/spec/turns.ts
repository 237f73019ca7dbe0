import { describe, expect, it } from 'vitest';
import { at, run, turn, call, approval, budgetApproval, kill, breaker } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/** The turns role (`TurnLedger`): model turns written once, the conversation, what a step loads at once. */
export function turnsSpec(make: MakeLedger, options: { sharedReads?: boolean } = {}): void {
  describe('turns', () => {
    const { ledger } = useLedger(make);

    describe('model turns', () => {
      it('records a turn once: a second recording returns the first', async () => {
        expect(await ledger.recordTurn(turn(1))).toEqual(turn(1));
        expect(await ledger.recordTurn(turn(1, 'a different answer'))).toEqual(turn(1));
        expect(await ledger.getTurn('r1', 1)).toEqual(turn(1));
      });

      it('returns the same first turn to every concurrent recording', async () => {
        const recorded = await Promise.all(Array.from({ length: 10 }, (_, index) => ledger.recordTurn(turn(1, `answer ${index}`))));
        const first = (await ledger.getTurn('r1', 1))!;
        for (const each of recorded) expect(each).toEqual(first);
      });

      it('stores a tool use from the model as given, keys that name object methods included', async () => {
        const input = JSON.parse('{"constructor":"refund","hasOwnProperty":true}') as Record<string, unknown>;
        const recorded = { ...turn(1), content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'lookup', input }] };
        expect(await ledger.recordTurn(recorded)).toEqual(recorded);
        expect(await ledger.getTurn('r1', 1)).toEqual(recorded);
      });

      it('is undefined for a turn never recorded', async () => {
        await ledger.recordTurn(turn(1));
        expect(await ledger.getTurn('r1', 2)).toBeUndefined();
        expect(await ledger.getTurn('r2', 1)).toBeUndefined();
      });
    });

    describe('the conversation', () => {
      it('lists turns, calls and approvals of one run in conversation order, whatever the write order', async () => {
        await ledger.createRun(run('r1'));
        await ledger.recordTurn(turn(2));
        await ledger.claimCall(call({ turn: 2, call: 1 }), at(0));
        await ledger.upsertApproval(approval({ turn: 1, call: 2 }), 'token-1');
        await ledger.claimCall(call({ turn: 1, call: 2 }), at(0));
        await ledger.recordTurn(turn(1));
        await ledger.claimCall(call({ turn: 1, call: 1 }), at(0));
        await ledger.recordTurn(turn(10));
        await ledger.recordTurn(turn(1, 'other run', 'r2'));
        await ledger.claimCall(call({ runId: 'r2' }), at(0));
        const { turns, calls, approvals } = await ledger.listConversation('r1');
        expect(turns.map((each) => each.turn)).toEqual([1, 2, 10]);
        expect(turns[0]).toEqual(turn(1));
        expect(calls.map((each) => [each.turn, each.call])).toEqual([
          [1, 1],
          [1, 2],
          [2, 1],
        ]);
        expect(approvals).toEqual([approval({ turn: 1, call: 2 })]);
      });

      it('lists budget approvals with the call approvals', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        await ledger.upsertApproval(budgetApproval(1), 'token-1');
        expect((await ledger.listConversation('r1')).approvals.map((each) => each.approvalId).sort()).toEqual([
          'apv_0123456789abcdef',
          'apv_budget_steps_1',
        ]);
      });

      it('answers the run record with the whole conversation, as getRun does (the same read), and not from a turn on', async () => {
        await ledger.createRun(run('r1'));
        await ledger.recordTurn(turn(1));
        await ledger.killRun('r1', { by: 'me', reason: 'a change after the first write', at: at(0).toISOString() });
        expect((await ledger.listConversation('r1')).run).toEqual(await ledger.getRun('r1'));
        expect((await ledger.listConversation('r1')).run?.killed?.by).toBe('me');
        expect((await ledger.listConversation('r1', { fromTurn: 1 })).run).toBeUndefined();
      });

      it('is empty for an unknown run', async () => {
        expect(await ledger.listConversation('nope')).toEqual({ turns: [], calls: [], approvals: [] });
      });

      it('lists from a turn on: that turn, its calls and approvals, and the later ones', async () => {
        await ledger.createRun(run('r1'));
        await ledger.upsertApproval(budgetApproval(1), 'token-1');
        for (const number of [1, 2, 3]) {
          await ledger.recordTurn(turn(number));
          await ledger.claimCall(call({ turn: number }), at(0));
        }
        await ledger.upsertApproval(approval({ turn: 2, call: 1 }), 'token-1');
        const { turns, calls, approvals } = await ledger.listConversation('r1', { fromTurn: 2 });
        expect(turns.map((each) => each.turn)).toEqual([2, 3]);
        expect(calls.map((each) => each.turn)).toEqual([2, 3]);
        expect(approvals).toEqual([approval({ turn: 2, call: 1 })]);
        expect(await ledger.listConversation('r1', { fromTurn: 4 })).toEqual({ turns: [], calls: [], approvals: [] });
      });

      it('shows a call as last written', async () => {
        await ledger.claimCall(call(), at(0));
        await ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'ok', result: 'done', latencyMs: 1 }, now: at(1) });
        expect((await ledger.listConversation('r1')).calls).toEqual([await ledger.getCall('r1', 3, 1)]);
      });
    });

    describe('loading what a step needs at once', () => {
      it('reads the run, the global kill, the turns, calls and breaker asked for', async () => {
        await ledger.createRun(run('r1'));
        await ledger.setGlobalKill(kill('ops'));
        await ledger.recordTurn(turn(1));
        await ledger.recordTurn(turn(2));
        await ledger.claimCall(call({ turn: 2, call: 1 }), at(0));
        await ledger.claimCall(call({ turn: 2, call: 2 }), at(0));
        await ledger.saveBreaker(breaker('model', 1));
        const read = await ledger.loadStep('r1', {
          turns: [2, 1],
          calls: [
            { turn: 2, call: 2 },
            { turn: 2, call: 1 },
          ],
          breaker: 'model',
        });
        expect(read).toEqual({
          run: await ledger.getRun('r1'),
          globalKill: kill('ops'),
          turns: [turn(2), turn(1)],
          calls: [await ledger.getCall('r1', 2, 2), await ledger.getCall('r1', 2, 1)],
          breaker: await ledger.getBreaker('model'),
        });
      });

      it('leaves out what does not exist', async () => {
        await ledger.setGlobalKill(undefined);
        expect(await ledger.loadStep('nope', { turns: [1], calls: [{ turn: 1, call: 1 }], breaker: 'model' })).toEqual({ turns: [], calls: [] });
        expect(await ledger.loadStep('nope')).toEqual({ turns: [], calls: [] });
      });

      it('reads a key asked for twice once', async () => {
        await ledger.createRun(run('r1'));
        await ledger.recordTurn(turn(1));
        expect((await ledger.loadStep('r1', { turns: [1, 1] })).turns).toEqual([turn(1), turn(1)]);
      });

      it('refuses more keys than one batch reads', async () => {
        await expect(ledger.loadStep('r1', { turns: Array.from({ length: 99 }, (_, index) => index + 1) })).rejects.toThrow(/at most 100/);
      });

      it('hands out copies (or, sharing what it reads, frozen records): changing what it read changes nothing stored', async () => {
        await ledger.createRun(run('r1'));
        const read = await ledger.loadStep('r1');
        const change = () => (read.run!.config.maxSteps = 1);
        if (options.sharedReads) expect(change).toThrow(TypeError);
        else change();
        expect((await ledger.loadStep('r1')).run).toEqual(run('r1'));
      });
    });
  });
}
