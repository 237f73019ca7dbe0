import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../../lambdas/define.js';
import { CircuitBreaker } from '../../lambdas/guards/breaker.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { singleModel } from '../../lambdas/models/registry.js';
import type { MessageResponse } from '../../lambdas/records/messages.js';
import { TransientError } from '../../lambdas/shared/errors.js';
import { createCallModel } from '../../lambdas/steps/call-model.js';
import { RUN_STARTED_AT, runRecord } from '../support/records.js';

/**
 * CallModel after the model's final answer (lambdas/steps/call-model.ts): the run's next decision
 * made in the same invocation; and when that decision's read fails, the turn goes back as it is,
 * for the CallModel after it to decide (the engine tests, test/engine/stops.test.ts, run both on
 * the definition).
 */

const MODEL = 'sim:savepoint-sim-1';
const clock = { now: () => new Date(Date.parse(RUN_STARTED_AT) + 60_000) };
const lookup = defineTool({ name: 'lookup', description: 'Looks a record up.', input: z.object({ id: z.string() }), effect: 'read', execute: async ({ id }) => ({ id }) });
const agent = defineAgent({ name: 'final', model: MODEL, system: 'Answer.', input: z.object({}), prompt: () => 'Answer.', tools: [lookup] });
const answer: MessageResponse = { id: 'm1', type: 'message', role: 'assistant', model: 'savepoint-sim-1', content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 5 } };

/**
 * CallModel on run `r`, its ledger's `loadStep` failing (Agent.Transient) on the reads `fails` names
 * (1: the first). `seen: false`: its `recordTurn` tells nothing of what the turn's write saw, as the
 * remote ledger's cannot (a callback does not cross the loopback), so the decision after a final
 * answer reads. `during`: what happens while the model answers.
 */
async function callModelOn(fails: (read: number) => boolean, { seen = true, during }: { seen?: boolean; during?: (ledger: EmbeddedLedger) => Promise<void> } = {}) {
  const ledger = EmbeddedLedger.open();
  await ledger.createRun(runRecord({ runId: 'r', agent: agent.name, model: MODEL }));
  let reads = 0;
  const faulty = new Proxy(ledger, {
    get(target, key) {
      if (key === 'loadStep') {
        return async (...args: Parameters<EmbeddedLedger['loadStep']>) => {
          reads += 1;
          if (fails(reads)) throw new TransientError('the read failed');
          return target.loadStep(...args);
        };
      }
      if (key === 'recordTurn' && !seen) {
        return (turn: Parameters<EmbeddedLedger['recordTurn']>[0], count: Parameters<EmbeddedLedger['recordTurn']>[1]) => {
          const { seen: _seen, ...counted } = count ?? { stepKey: '', deltas: {} };
          return target.recordTurn(turn, count && counted);
        };
      }
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  const createMessage = async () => {
    await during?.(ledger);
    return answer;
  };
  const callModel = createCallModel({ agent, fingerprint: () => 'f', ledger: faulty, clock, models: singleModel({ createMessage }), breaker: new CircuitBreaker(ledger, clock) });
  return { callModel, ledger, reads: () => reads };
}

describe("CallModel after the model's final answer", () => {
  it('returns the run’s end with the turn: the decision the next CallModel would make', async () => {
    const { callModel, ledger, reads } = await callModelOn(() => false);
    expect(await callModel({ runId: 'r' })).toMatchObject({ continue: false, status: 'succeeded', reason: 'done', turn: 1, stopReason: 'end_turn', toolCalls: 0, calls: [], counted: true });
    expect(await ledger.getRun('r')).toMatchObject({ modelTurns: 1, steps: 1 });
    // Decided from what the turn's own write saw: the read before the call is the only one.
    expect(reads()).toBe(1);
  });

  it('sees a kill of all runs made while the model answered: the turn’s write checks the kill flag, and the run is killed, not succeeded', async () => {
    const { callModel, ledger, reads } = await callModelOn(() => false, { during: (target) => target.setGlobalKill({ by: 'operator', reason: 'stop everything', at: RUN_STARTED_AT }) });
    expect(await callModel({ runId: 'r' })).toMatchObject({ continue: false, status: 'killed', turn: 1, counted: true });
    expect(await ledger.getRun('r')).toMatchObject({ modelTurns: 1, steps: 1, reservedTokens: 0 });
    expect(reads()).toBe(1);
  });

  it('decides from a read when the ledger tells nothing of what the write saw (the remote ledger)', async () => {
    const { callModel, reads } = await callModelOn(() => false, { seen: false });
    expect(await callModel({ runId: 'r' })).toMatchObject({ continue: false, status: 'succeeded', reason: 'done', turn: 1, counted: true });
    expect(reads()).toBe(2);
  });

  it('returns the turn as it is when the decision’s read fails, and the next CallModel ends the run without calling the model again', async () => {
    const { callModel, ledger } = await callModelOn((read) => read === 2, { seen: false });
    const turn = await callModel({ runId: 'r' });
    expect(turn).toMatchObject({ continue: true, nextTurn: 1, turn: 1, stopReason: 'end_turn', calls: [], counted: true });
    expect(await callModel({ runId: 'r' })).toEqual({ continue: false, status: 'succeeded', reason: 'done' });
    expect(await ledger.getRun('r')).toMatchObject({ modelTurns: 1, steps: 1 });
  });
});
