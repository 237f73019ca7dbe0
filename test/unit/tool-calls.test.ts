import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, type RunFacts } from '../../lambdas/define.js';
import { deriveRecordedCall, deriveToolCall, plannedCalls, runFacts } from '../../lambdas/conversation/tool-calls.js';
import { countingLedger } from '../../lambdas/ledger/counting-ledger.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { failureOf } from '../../lambdas/tools/failures.js';
import { AttemptCut } from '../../lambdas/tools/attempt.js';
import { InvalidInputError, MalformedResponseError, OutcomeUnknownError, TerminalError, TransientError } from '../../lambdas/shared/errors.js';
import type { ToolCallRecord, TurnRecord } from '../../lambdas/records/ledger-records.js';
import { call, turn } from '../contract/fixtures.js';
import { runRecord } from '../support/records.js';

/** Every `facts` the pay rule was asked with. */
const asked: RunFacts[] = [];
const pay = defineTool({
  name: 'pay',
  description: 'Pays.',
  input: z.object({ invoice: z.string(), cents: z.number().int() }).strict(),
  effect: 'write',
  idempotencyKeys: true,
  idempotencyKey: (args) => args.invoice,
  needsApproval: (args, _run, facts) => {
    asked.push(facts);
    const paid = facts.calls.filter((c) => c.name === 'pay' && (c.outcome ?? 'ok') === 'ok').reduce((sum, c) => sum + Number(c.args['cents']), 0);
    return paid + args.cents > 1_000 ? { summary: `pay ${args.invoice}` } : undefined;
  },
  execute: async () => ({}),
});
const lookup = defineTool({ name: 'lookup', description: 'Reads.', input: z.object({ invoice: z.string() }).strict(), effect: 'read', execute: async () => ({}) });
const agent = defineAgent({ name: 'a', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p', tools: [pay, lookup] });

const run = runRecord({ runId: 'r1', agent: 'a' });
/** Turn 2: three payments and a lookup asked for at once, and one call of a tool that does not exist. */
const second: TurnRecord = {
  ...turn(2),
  stopReason: 'tool_use',
  content: [
    { type: 'tool_use', id: 'u1', name: 'pay', input: { invoice: 'i1', cents: 400 } },
    { type: 'tool_use', id: 'u2', name: 'lookup', input: { invoice: 'i1' } },
    { type: 'tool_use', id: 'u3', name: 'pay', input: { invoice: 'i2', cents: 500 } },
    { type: 'tool_use', id: 'u4', name: 'pay', input: { invoice: 'i3', cents: 'lots' } },
    { type: 'tool_use', id: 'u5', name: 'refund_all', input: {} },
  ],
};
/** Turn 1 paid 200 cents; a call of turn 2 completed meanwhile must not change what its neighbours are asked. */
const earlier = [call({ turn: 1, call: 1, name: 'pay', args: { invoice: 'i0', cents: 200 }, status: 'completed', outcome: 'ok' })];
const meanwhile = [...earlier, call({ turn: 2, call: 1, name: 'pay', args: { invoice: 'i1', cents: 400 }, status: 'completed', outcome: 'rejected' })];

describe('a tool call derived from its turn', () => {
  it('weighs the completed calls of earlier turns and, without an outcome, the calls of its turn before it', () => {
    asked.length = 0;
    const third = deriveToolCall(agent, run, second, 3, { completed: earlier });
    expect(asked[0]!.calls).toEqual([
      { turn: 1, call: 1, name: 'pay', args: { invoice: 'i0', cents: 200 }, outcome: 'ok' },
      { turn: 2, call: 1, name: 'pay', args: { invoice: 'i1', cents: 400 } },
      { turn: 2, call: 2, name: 'lookup', args: { invoice: 'i1' } },
    ]);
    // 200 + 400 (alongside, counted as paid) + 500 > 1,000: held for a person.
    expect(third.approval).toEqual({ summary: 'pay i2' });
    expect(third).toMatchObject({ args: { invoice: 'i2', cents: 500 }, idempotencyKey: 'a:pay:i2', effectKey: 'a:pay:i2' });
  });

  it('is the same however many of its turn have completed when it is asked', () => {
    expect(deriveToolCall(agent, run, second, 3, { completed: meanwhile })).toEqual(deriveToolCall(agent, run, second, 3, { completed: earlier }));
  });

  it("answers the model's mistakes instead of running them", () => {
    expect(deriveToolCall(agent, run, second, 4, { completed: earlier })).toMatchObject({ mistake: { error: 'invalid_arguments', issues: [{ path: 'cents' }] }, idempotencyKey: 'r1:2:u4' });
    expect(deriveToolCall(agent, run, second, 5, { completed: earlier }).mistake).toEqual({ error: 'unknown_tool', message: 'there is no tool "refund_all"; the tools are: pay, lookup' });
    expect(() => deriveToolCall(agent, run, second, 6, { completed: earlier })).toThrow('call: run r1 has no tool call 6 in turn 2');
  });

  it('answers a business key too long as the mistake it is: its length and the limit, the key clipped', () => {
    const long = 'i'.repeat(300);
    const asks: TurnRecord = { ...turn(3), stopReason: 'tool_use', content: [{ type: 'tool_use', id: 'u1', name: 'pay', input: { invoice: long, cents: 1 } }] };
    const derived = deriveToolCall(agent, run, asks, 1, { completed: [] });
    // 'a:pay:' leaves 249 of the provider's 255 characters for the business key.
    expect(derived.mistake).toEqual({ error: 'invalid_arguments', message: `pay: the business key these arguments give is too long: 300 characters, at most 249 (255 with the agent and tool names, "a:pay:"): "${'i'.repeat(79)}…"` });
    expect(derived).toMatchObject({ idempotencyKey: 'r1:3:u1' });
    expect(derived.effectKey).toBeUndefined();
    // A business key of exactly the limit is a key.
    const fits: TurnRecord = { ...asks, content: [{ type: 'tool_use', id: 'u1', name: 'pay', input: { invoice: 'i'.repeat(249), cents: 1 } }] };
    expect(deriveToolCall(agent, run, fits, 1, { completed: [] })).toMatchObject({ effectKey: `a:pay:${'i'.repeat(249)}` });
  });

  it('plans the Map: the calls without a completed record, in call order (pointers only: CallTool derives each when it runs)', () => {
    expect(plannedCalls(second, meanwhile)).toEqual([
      { turn: 2, call: 2, name: 'lookup' },
      { turn: 2, call: 3, name: 'pay' },
      { turn: 2, call: 4, name: 'pay' },
      { turn: 2, call: 5, name: 'refund_all' },
    ]);
  });
});

describe('what the run did, as an approval rule reads it (runFacts, the one builder)', () => {
  it('is the completed calls of earlier turns in conversation order, then the calls of its turn before it as the model sent them', () => {
    const later = call({ turn: 3, call: 1, name: 'pay', args: { invoice: 'i9', cents: 1 }, status: 'completed', outcome: 'ok' });
    const open = call({ turn: 1, call: 3, name: 'pay', args: { invoice: 'ix', cents: 1 }, status: 'in_flight' });
    const first = call({ turn: 1, call: 2, name: 'lookup', args: { invoice: 'i0' }, status: 'completed', outcome: 'ok' });
    // Handed out of order, with a later turn's call, an open one and one of its own turn: only the earlier completed ones count.
    expect(runFacts(agent, second, 5, [later, ...meanwhile, open, first])).toEqual({
      calls: [
        { turn: 1, call: 1, name: 'pay', args: { invoice: 'i0', cents: 200 }, outcome: 'ok' },
        { turn: 1, call: 2, name: 'lookup', args: { invoice: 'i0' }, outcome: 'ok' },
        { turn: 2, call: 1, name: 'pay', args: { invoice: 'i1', cents: 400 } },
        { turn: 2, call: 2, name: 'lookup', args: { invoice: 'i1' } },
        { turn: 2, call: 3, name: 'pay', args: { invoice: 'i2', cents: 500 } },
        // Arguments the schema refused are what the model sent.
        { turn: 2, call: 4, name: 'pay', args: { invoice: 'i3', cents: 'lots' } },
      ],
    });
    expect(runFacts(agent, second, 1, [])).toEqual({ calls: [] });
  });

  it('is made from the records it is given each time, however often its turn asked before (another ledger, another read)', () => {
    const pays = (cents: number) => [call({ turn: 1, call: 1, name: 'pay', args: { invoice: 'i0', cents }, status: 'completed', outcome: 'ok' }), call({ turn: 1, call: 2, name: 'lookup', args: { invoice: 'i0' }, status: 'completed', outcome: 'ok' })];
    const one = pays(200);
    expect(runFacts(agent, second, 1, one).calls.map((fact) => fact.args)).toEqual([{ invoice: 'i0', cents: 200 }, { invoice: 'i0' }]);
    expect(runFacts(agent, second, 2, one).calls.map((fact) => fact.args)).toEqual([{ invoice: 'i0', cents: 200 }, { invoice: 'i0' }, { invoice: 'i1', cents: 400 }]);
    // As many records of the same calls, read from another ledger: their own facts.
    expect(runFacts(agent, second, 1, pays(300)).calls.map((fact) => fact.args)).toEqual([{ invoice: 'i0', cents: 300 }, { invoice: 'i0' }]);
    // The same records handed in another order: in conversation order still.
    expect(runFacts(agent, second, 1, [...one].reverse()).calls.map((fact) => fact.call)).toEqual([1, 2]);
  });

  it('is what a step handed the call reads from the ledger: the verdict it was planned with, and no read for a tool without a rule', async () => {
    const ledger = EmbeddedLedger.open();
    await ledger.createRun(run);
    const now = new Date('2026-11-29T02:00:00.000Z');
    await ledger.recordTurn({ ...turn(1), stopReason: 'tool_use', content: [{ type: 'tool_use', id: 'u0', name: 'pay', input: { invoice: 'i0', cents: 200 } }] });
    await ledger.recordCall({ ...earlier[0]!, runId: 'r1' } as ToolCallRecord & { status: 'completed' }, now);
    await ledger.recordTurn(second);
    const counting = countingLedger(ledger);
    for (const at of [1, 2, 3]) {
      const planned = deriveToolCall(agent, run, second, at, { completed: (await ledger.listConversation('r1')).calls });
      expect(await deriveRecordedCall(counting.ledger, agent, run, second, at)).toEqual(planned);
    }
    expect((await deriveRecordedCall(counting.ledger, agent, run, second, 3)).approval).toEqual({ summary: 'pay i2' });
    counting.reset();
    await deriveRecordedCall(counting.ledger, agent, run, second, 2);
    expect(counting.total()).toBe(0);
  });
});

describe('what a failed tool attempt comes to (one table)', () => {
  const read = { name: 'lookup', effect: 'read' as const };
  const keyed = { name: 'pay', effect: 'write' as const, idempotencyKeys: true };
  const blind = { name: 'mail', effect: 'write' as const };
  const answer = (failure: ReturnType<typeof failureOf>) => (failure.kind === 'answer' ? (JSON.parse(failure.outcome.result) as { error: string }).error : failure.kind);

  it('answers the model where nothing was sent twice, releases for a retry where the key or reconcile makes it safe', () => {
    const timeout = new AttemptCut({ kind: 'timeout', message: 'lookup took over 20 s' });
    expect(answer(failureOf(read, timeout, 5))).toBe('timeout');
    expect(answer(failureOf(read, new Error('socket hang up'), 5))).toBe('tool_failed');
    expect(failureOf(keyed, new Error('socket hang up'), 5)).toMatchObject({ kind: 'release', error: expect.any(TransientError) });
    // A write with neither keys nor reconcile whose outcome is unknown: a person decides, never a second send.
    expect(failureOf(blind, new Error('socket hang up'), 5)).toMatchObject({ kind: 'undecidable', outcome: { outcome: 'error' } });
    expect(JSON.parse((failureOf(blind, timeout, 5) as { outcome: { result: string } }).outcome.result)).toMatchObject({ error: 'outcome_unknown', escalated: true });
    // Sent, no answer (a client's deadline, a dropped answer): an unknown outcome, not a plain transient fault.
    const lost = new OutcomeUnknownError('POST /v1/mail/send failed: network error', { timedOut: false });
    expect(failureOf(blind, lost, 5)).toMatchObject({ kind: 'undecidable' });
    expect(failureOf(keyed, lost, 5)).toMatchObject({ kind: 'release', unknown: true });
    expect(failureOf(keyed, new TransientError('503'), 5)).toMatchObject({ kind: 'release', unknown: false });
    // A read that timed out is told to the model; one whose answer was dropped is retried.
    expect(answer(failureOf(read, new OutcomeUnknownError('GET /x failed: timed out', { timedOut: true }), 5))).toBe('timeout');
    expect(failureOf(read, lost, 5)).toMatchObject({ kind: 'release', unknown: false });
    expect(answer(failureOf(keyed, new InvalidInputError('more than is left'), 5))).toBe('invalid_request');
    expect(answer(failureOf(read, new MalformedResponseError('garbled'), 5))).toBe('malformed_response');
    expect(failureOf(keyed, new MalformedResponseError('garbled'), 5)).toMatchObject({ kind: 'fail' });
    expect(failureOf(keyed, new TerminalError('card declined'), 5)).toMatchObject({ kind: 'fail', outcome: { outcome: 'error', latencyMs: 5 } });
    expect(failureOf(keyed, new AttemptCut({ kind: 'wallClock', message: 'the run is out of time' }), 5)).toEqual({ kind: 'cut', reason: 'the run is out of time' });
    expect(failureOf(read, new TransientError('throttled'), 5)).toMatchObject({ kind: 'release', error: expect.any(TransientError) });
  });
});
