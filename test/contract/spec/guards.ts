import { describe, expect, it } from 'vitest';
import { at, call, holder, run, kill, guardEvent, breaker, turn } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/** The guards role (`GuardLedger`, `BreakerStore`): kill switches, guard events, counted steps, breakers. */
export function guardsSpec(make: MakeLedger): void {
  describe('guards', () => {
    const { ledger } = useLedger(make);

    describe('kill switches', () => {
      it('kills a run; the first kill stands', async () => {
        await ledger.createRun(run('r1'));
        expect(await ledger.killRun('r1', kill('alice'))).toBe(true);
        expect(await ledger.killRun('r1', kill('bob'))).toBe(true);
        expect((await ledger.getRun('r1'))!.killed).toEqual(kill('alice'));
      });

      it('does not kill an unknown run', async () => {
        expect(await ledger.killRun('nope', kill('alice'))).toBe(false);
        expect(await ledger.getRun('nope')).toBeUndefined();
      });

      it('sets, reads and clears the global kill', async () => {
        expect(await ledger.getGlobalKill()).toBeUndefined();
        await ledger.setGlobalKill(kill('ops'));
        expect(await ledger.getGlobalKill()).toEqual(kill('ops'));
        await ledger.setGlobalKill(undefined);
        expect(await ledger.getGlobalKill()).toBeUndefined();
      });
    });

    describe('guard events', () => {
      it('appends an event once per distinct reason, in order', async () => {
        await ledger.createRun(run('r1'));
        await ledger.recordGuardEvent('r1', guardEvent('steps at 80%', 1));
        await ledger.recordGuardEvent('r1', guardEvent('steps at 80%', 2));
        await ledger.recordGuardEvent('r1', guardEvent('tokens at 80%', 3));
        expect((await ledger.getRun('r1'))!.guardEvents).toEqual([guardEvent('steps at 80%', 1), guardEvent('tokens at 80%', 3)]);
      });

      it('records a reason once when it is reported concurrently', async () => {
        await ledger.createRun(run('r1'));
        await Promise.all(Array.from({ length: 20 }, (_, index) => ledger.recordGuardEvent('r1', guardEvent('loop', index))));
        expect((await ledger.getRun('r1'))!.guardEvents).toHaveLength(1);
      });

      it('ignores an event for an unknown run', async () => {
        await ledger.recordGuardEvent('nope', guardEvent('loop', 1));
        expect(await ledger.getRun('nope')).toBeUndefined();
      });
    });

    describe('counting steps', () => {
      it('counts a step once, however often it is retried', async () => {
        await ledger.createRun(run('r1'));
        expect(await ledger.countStep('r1', 'turn:1', { steps: 1, inputTokens: 10, costMicros: 7 })).toBe(true);
        expect(await ledger.countStep('r1', 'turn:1', { steps: 1, inputTokens: 10, costMicros: 7 })).toBe(false);
        expect(await ledger.countStep('r1', 'call:1:1', { steps: 1, toolCalls: 1 })).toBe(true);
        expect(await ledger.getRun('r1')).toMatchObject({ steps: 2, inputTokens: 10, costMicros: 7, toolCalls: 1, outputTokens: 0 });
      });

      it('counts 50 concurrent retries of the same step once', async () => {
        await ledger.createRun(run('r1'));
        const results = await Promise.all(Array.from({ length: 50 }, () => ledger.countStep('r1', 'turn:9', { steps: 1, inputTokens: 5 })));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await ledger.getRun('r1')).toMatchObject({ steps: 1, inputTokens: 5 });
      });

      it('adds every one of 50 concurrent distinct steps: no lost update', async () => {
        await ledger.createRun(run('r1'));
        await Promise.all(Array.from({ length: 50 }, (_, index) => ledger.countStep('r1', `call:1:${index}`, { steps: 1, costMicros: 3 })));
        expect(await ledger.getRun('r1')).toMatchObject({ steps: 50, costMicros: 150 });
      });

      it('counts a step retried after 160 other steps once (the window of counted keys keeps the newest, in order)', async () => {
        await ledger.createRun(run('r1'));
        for (let turn = 1; turn <= 40; turn++) {
          expect(await ledger.countStep('r1', `turn:${turn}`, { steps: 1, modelTurns: 1 })).toBe(true);
          for (let call = 1; call <= 3; call++) expect(await ledger.countStep('r1', `call:${turn}:${call}`, { steps: 1, toolCalls: 1 })).toBe(true);
          // The retry of the step just counted (a Lambda that died after the count) counts nothing.
          expect(await ledger.countStep('r1', `call:${turn}:3`, { steps: 1, toolCalls: 1 })).toBe(false);
        }
        expect(await ledger.getRun('r1')).toMatchObject({ steps: 160, modelTurns: 40, toolCalls: 120 });
      });

      it('counts a step on an ended run, once: a child\'s settle after its parent was killed (tools/child-runs.ts), two racers', async () => {
        await ledger.createRun(run('r1'));
        await ledger.countStep('r1', 'child:1:1:reserve', { costMicros: 1_000_000, inputTokens: 10_000 });
        await ledger.finishRun('r1', { status: 'killed', stopReason: 'killed by alice' }, at(5));
        const settle = () => ledger.countStep('r1', 'child:1:1:settle', { costMicros: 250_000 - 1_000_000, inputTokens: 3_000 - 10_000, outputTokens: 200 });
        expect((await Promise.all([settle(), settle()])).filter(Boolean)).toHaveLength(1);
        expect(await settle()).toBe(false);
        expect(await ledger.getRun('r1')).toMatchObject({ status: 'killed', costMicros: 250_000, inputTokens: 3_000, outputTokens: 200 });
      });

      it('counts a child\'s reservation and its settle once however many steps come between them; a settle without its reservation open counts nothing (records/child-budget.ts)', async () => {
        await ledger.createRun(run('r1'));
        const others = async (from: string) => {
          for (let index = 0; index < 70; index++) expect(await ledger.countStep('r1', `wait:${from}:${index}`, { approvalWaitMs: 1 })).toBe(true);
        };
        const reserve = () => ledger.countStep('r1', 'child:1:1:reserve', { costMicros: 1_000_000, inputTokens: 10_000, childRunsOpen: 1 });
        const settle = () => ledger.countStep('r1', 'child:1:1:settle', { costMicros: 250_000 - 1_000_000, inputTokens: 3_000 - 10_000, outputTokens: 200, childRunsOpen: -1 });
        expect(await reserve()).toBe(true);
        await others('a');
        // Open: the reservation's key is still counted, however old.
        expect(await reserve()).toBe(false);
        expect(await settle()).toBe(true);
        expect(await reserve()).toBe(false);
        await others('b');
        expect(await settle()).toBe(false);
        expect(await ledger.countStep('r1', 'child:1:2:settle', { costMicros: -1_000_000, childRunsOpen: -1 })).toBe(false);
        expect(await ledger.getRun('r1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, outputTokens: 200, childRunsOpen: 0, approvalWaitMs: 140 });
      });

      it('counts the children open from zero: a reservation counted without them (0.21.0) settles to zero, and a run left at -1 (0.21.1) reserves from zero', async () => {
        await ledger.createRun(run('r1'));
        await ledger.countStep('r1', 'child:1:1:reserve', { costMicros: 1_000_000, inputTokens: 10_000 });
        expect(await ledger.countStep('r1', 'child:1:1:settle', { costMicros: -750_000, inputTokens: -7_000, childRunsOpen: -1 })).toBe(true);
        expect(await ledger.getRun('r1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, childRunsOpen: 0 });

        await ledger.createRun(run('r2', { childRunsOpen: -1 }));
        await ledger.countStep('r2', 'child:2:1:reserve', { costMicros: 1_000_000, childRunsOpen: 1 });
        expect((await ledger.getRun('r2'))!.childRunsOpen).toBe(1);
        await ledger.countStep('r2', 'child:2:1:settle', { costMicros: -750_000, childRunsOpen: -1 });
        expect(await ledger.getRun('r2')).toMatchObject({ costMicros: 250_000, childRunsOpen: 0 });
      });

      it('closes a child run for its parent once its spend is final; closed, it is not resumed (records/child-budget.ts)', async () => {
        const parent = { runId: 'p1', turn: 1, call: 1 };
        await ledger.createRun(run('c1', { parent }));
        expect(await ledger.closeChildRun('c1', at(1))).toBeUndefined();
        await ledger.finishRun('c1', { status: 'failed', error: { error: 'Agent.Transient', cause: 'outage' } }, at(2));
        // Its own child still open: not final.
        await ledger.countStep('c1', 'child:1:1:reserve', { costMicros: 500_000, childRunsOpen: 1 });
        expect(await ledger.closeChildRun('c1', at(3))).toBeUndefined();
        await ledger.countStep('c1', 'child:1:1:settle', { costMicros: 100_000 - 500_000, childRunsOpen: -1 });
        const closed = await ledger.closeChildRun('c1', at(4));
        expect(closed).toMatchObject({ status: 'failed', costMicros: 100_000, childRunsOpen: 0, settledIntoParentAt: at(4).toISOString() });
        expect(await ledger.closeChildRun('c1', at(5))).toEqual(closed);
        await expect(ledger.attachExecution('c1', 'arn:2', at(6), { previousArn: 'arn:1' })).rejects.toMatchObject({ name: 'Agent.InvalidInput', message: expect.stringMatching(/child run of p1 \(its tool call 1\/1\).*settled into it/) });
        expect(await ledger.getRun('c1')).toEqual(closed);

        // Resumed before it was closed: running again, its spend is not final, and it is not closed.
        await ledger.createRun(run('c2', { parent: { ...parent, call: 2 } }));
        await ledger.finishRun('c2', { status: 'failed', error: { error: 'Agent.Transient', cause: 'outage' } }, at(2));
        expect(await ledger.attachExecution('c2', 'arn:2', at(3), { previousArn: 'arn:1' })).toMatchObject({ status: 'running' });
        expect(await ledger.closeChildRun('c2', at(4))).toBeUndefined();
        expect((await ledger.getRun('c2'))!.settledIntoParentAt).toBeUndefined();
        expect(await ledger.closeChildRun('nope', at(4))).toBeUndefined();
      });

      it('does not count a step of an unknown run', async () => {
        expect(await ledger.countStep('nope', 'turn:1', { steps: 1 })).toBe(false);
        expect(await ledger.getRun('nope')).toBeUndefined();
      });

      describe('with the record of the step, in one write', () => {
        const read = () => ({ ...call({ effect: 'read' }), status: 'completed' as const, outcome: 'ok' as const, result: '[]' });
        const count = { stepKey: 'call:3:1', deltas: { steps: 1, toolCalls: 1 } };

        it('records a read and counts its step; a second recording counts nothing, and a step counted already is not counted again', async () => {
          await ledger.createRun(run('r1'));
          expect(await ledger.recordCall(read(), at(0), count)).toMatchObject({ recorded: true });
          expect(await ledger.recordCall({ ...read(), result: '[1]' }, at(1), count)).toMatchObject({ recorded: false, existing: { result: '[]' } });
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 1, toolCalls: 1 });
          expect(await ledger.countStep('r1', 'call:3:1', count.deltas)).toBe(false);
          // Counted already (a run whose count was written apart): the call is recorded alone.
          expect(await ledger.countStep('r1', 'call:3:2', count.deltas)).toBe(true);
          expect(await ledger.recordCall({ ...read(), call: 2, toolCallId: 'toolu_003_2' }, at(2), { ...count, stepKey: 'call:3:2' })).toMatchObject({ recorded: true });
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 2, toolCalls: 2 });
        });

        it('completes a claimed call, with its effect, and counts it, all at once; a refused completion counts nothing', async () => {
          await ledger.createRun(run('r1'));
          await ledger.claimCall(call({ effectKey: holder().key }), at(0), holder());
          const completed = await ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'ok', result: '{"id":"re_1"}', latencyMs: 4 }, now: at(1), effect: { key: holder().key }, count });
          expect(completed).toMatchObject({ status: 'completed', result: '{"id":"re_1"}' });
          expect(await ledger.getEffect(holder().key)).toMatchObject({ status: 'completed', result: '{"id":"re_1"}' });
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 1, toolCalls: 1 });
          await expect(ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'ok', result: '2', latencyMs: 0 }, now: at(2), count: { ...count, stepKey: 'call:3:9' } })).rejects.toMatchObject({ name: 'ConditionalCheckFailedException' });
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 1, toolCalls: 1 });
        });

        it('records a turn with its count once: a second recording gets the first turn back and counts nothing', async () => {
          await ledger.createRun(run('r1'));
          const settle = { stepKey: 'turn:1', deltas: { steps: 1, modelTurns: 1, inputTokens: 10 } };
          expect(await ledger.recordTurn(turn(1), settle)).toEqual(turn(1));
          expect(await ledger.recordTurn(turn(1, 'Another answer.'), settle)).toEqual(turn(1));
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 1, modelTurns: 1, inputTokens: 10 });
        });

        it('adds every one of 20 concurrent calls of a turn, each recorded with its count: no lost update', async () => {
          await ledger.createRun(run('r1'));
          const results = await Promise.all(
            Array.from({ length: 20 }, (_, index) => ledger.recordCall({ ...read(), call: index + 1, toolCallId: `toolu_${index}` }, at(0), { stepKey: `call:3:${index + 1}`, deltas: { steps: 1, toolCalls: 1 } })),
          );
          expect(results.every((result) => result.recorded)).toBe(true);
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 20, toolCalls: 20 });
        });
      });

      describe("an open turn's calls, counted by another step's write (ledger/open-turn.ts)", () => {
        const read = (n: number) => ({ ...call({ effect: 'read', call: n, toolCallId: `toolu_003_${n}` }), status: 'completed' as const, outcome: 'ok' as const, result: '[]' });
        const reserve = { reservedTokens: 100 };

        it('counts each call once with the reservation that carries them, and holds them in callsCounted; a retry counts nothing again', async () => {
          await ledger.createRun(run('r1', { modelTurns: 3, steps: 3 }));
          await ledger.recordCall(read(1), at(0));
          await ledger.recordCall(read(2), at(0));
          // Recorded without a count: the run item is not written while the turn's calls run.
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 3, toolCalls: 0 });
          expect(await ledger.countStep('r1', 'reserve:4', reserve, { turn: 3, calls: [1, 2] })).toBe(true);
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 5, toolCalls: 2, reservedTokens: 100, callsCounted: { turn: 3, calls: [1, 2] } });
          expect(await ledger.countStep('r1', 'reserve:4', reserve, { turn: 3, calls: [1, 2] })).toBe(false);
          // Another write naming the same turn (a compaction's reservation, a retried end) counts none of them again.
          expect(await ledger.countStep('r1', 'reserve:5', reserve, { turn: 3, calls: [1, 2] })).toBe(true);
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 5, toolCalls: 2, reservedTokens: 200, callsCounted: { turn: 3, calls: [1, 2] } });
        });

        it('does not count again a call that counted itself (a run recorded before calls stopped counting)', async () => {
          await ledger.createRun(run('r1', { modelTurns: 3, steps: 3 }));
          expect(await ledger.countStep('r1', 'call:3:1', { steps: 1, toolCalls: 1 })).toBe(true);
          expect(await ledger.countStep('r1', 'reserve:4', reserve, { turn: 3, calls: [1, 2] })).toBe(true);
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 5, toolCalls: 2, callsCounted: { turn: 3, calls: [1, 2] } });
        });

        it("counts the open turn's completed calls when the run ends before another model turn, once", async () => {
          await ledger.createRun(run('r1', { modelTurns: 3, steps: 3, callsCounted: { turn: 2, calls: [1] } }));
          await ledger.recordTurn({ ...turn(3), content: [{ type: 'tool_use', id: 'toolu_003_1', name: 'list', input: {} }, { type: 'tool_use', id: 'toolu_003_2', name: 'list', input: {} }] });
          await ledger.recordCall(read(1), at(0));
          // Call 2 never completed (the run was stopped first): not a step made.
          await ledger.claimCall(call({ call: 2, toolCallId: 'toolu_003_2' }), at(0));
          const finished = await ledger.finishRun('r1', { status: 'stopped', stopReason: 'budget' }, at(1));
          expect(finished).toMatchObject({ status: 'stopped', steps: 4, toolCalls: 1, callsCounted: { turn: 3, calls: [1] } });
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 4, toolCalls: 1 });
          expect(await ledger.finishRun('r1', { status: 'stopped', stopReason: 'budget' }, at(2))).toMatchObject({ steps: 4, toolCalls: 1 });
          // Taken up again (a run that failed by accident is recovered): the rest of its turn is counted by the next reservation, once.
          await ledger.completeCall({ runId: 'r1', turn: 3, call: 2, outcome: { outcome: 'ok', result: '[]', latencyMs: 1 }, now: at(3) });
          expect(await ledger.countStep('r1', 'reserve:4', reserve, { turn: 3, calls: [2] })).toBe(true);
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 5, toolCalls: 2, callsCounted: { turn: 3, calls: [1, 2] } });
          expect(await ledger.countStep('r1', 'reserve:5', reserve, { turn: 3, calls: [1, 2] })).toBe(true);
          expect(await ledger.getRun('r1')).toMatchObject({ steps: 5, toolCalls: 2 });
        });

        it("ends a run whose open turn's calls are counted already without counting anything more", async () => {
          await ledger.createRun(run('r1', { modelTurns: 3, steps: 5, toolCalls: 2, callsCounted: { turn: 3, calls: [1] } }));
          await ledger.recordCall(read(1), at(0));
          expect(await ledger.finishRun('r1', { status: 'succeeded', stopReason: 'done' }, at(1))).toMatchObject({ steps: 5, toolCalls: 2 });
        });
      });

      it('keeps the rest of the run record as it was', async () => {
        await ledger.createRun(run('r1'));
        await ledger.countStep('r1', 'turn:1', { steps: 1 });
        expect(await ledger.getRun('r1')).toEqual({ ...run('r1'), steps: 1 });
      });
    });

    describe('the breaker store', () => {
      it('has no state for a breaker never saved', async () => {
        expect(await ledger.getBreaker('model')).toBeUndefined();
      });

      it('creates a breaker with version 1 and reads it back', async () => {
        expect(await ledger.saveBreaker(breaker('model', 1))).toBe(true);
        expect(await ledger.getBreaker('model')).toMatchObject(breaker('model', 1));
      });

      it('saves only on top of the version read', async () => {
        await ledger.saveBreaker(breaker('model', 1));
        expect(await ledger.saveBreaker(breaker('model', 1, 'open'))).toBe(false);
        expect(await ledger.saveBreaker(breaker('model', 3, 'open'))).toBe(false);
        expect(await ledger.saveBreaker(breaker('model', 2, 'open'))).toBe(true);
        expect(await ledger.getBreaker('model')).toMatchObject(breaker('model', 2, 'open'));
      });

      it('does not create a breaker from a later version', async () => {
        expect(await ledger.saveBreaker(breaker('model', 2))).toBe(false);
        expect(await ledger.getBreaker('model')).toBeUndefined();
      });

      it('keeps breakers apart by name', async () => {
        await ledger.saveBreaker(breaker('model', 1, 'open'));
        expect(await ledger.saveBreaker(breaker('tools', 1))).toBe(true);
        expect(await ledger.getBreaker('model')).toMatchObject({ state: 'open' });
        expect(await ledger.getBreaker('tools')).toMatchObject({ state: 'closed' });
      });

      it('lets one of 20 concurrent saves of the same version win', async () => {
        await ledger.saveBreaker(breaker('model', 1));
        const saves = await Promise.all(
          Array.from({ length: 20 }, (_, index) => ledger.saveBreaker({ ...breaker('model', 2), trips: index })),
        );
        expect(saves.filter(Boolean)).toHaveLength(1);
        expect(await ledger.getBreaker('model')).toMatchObject({ version: 2, trips: saves.indexOf(true) });
      });
    });
  });
}
