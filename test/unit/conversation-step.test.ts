import { describe, expect, it } from 'vitest';
import { countingLedger } from '../../lambdas/ledger/counting-ledger.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { RunRecord, ToolCallRecord, TurnRecord } from '../../lambdas/records/ledger-records.js';
import type { MessageResponse } from '../../lambdas/records/messages.js';
import { answerNames, completedCallsOf, loadConversationStep, recordedResponse } from '../../lambdas/conversation/turns.js';
import { runRecord } from '../support/records.js';

// The conversation a step reads, kept per run and completed by one batched read: it must always
// equal what the ledger holds, whoever wrote it and however far behind this process is.

const run: RunRecord = runRecord({ agent: 'refund-reconciler', executionArn: 'arn:1' });

const turn = (number: number, tools: number): TurnRecord => ({
  kind: 'turn',
  runId: 'r',
  turn: number,
  model: 'm',
  content: Array.from({ length: tools }, (_, index) => ({ type: 'tool_use' as const, id: `t${number}_${index + 1}`, name: 'get_order', input: { n: index } })),
  stopReason: tools > 0 ? 'tool_use' : 'end_turn',
  usage: { input_tokens: 1, output_tokens: 1 },
  costMicros: 0,
  latencyMs: 0,
  recordedAt: '2026-11-29T02:00:00.000Z',
});

const completed = (number: number, call: number): ToolCallRecord & { status: 'completed' } => ({
  kind: 'tool',
  runId: 'r',
  turn: number,
  call,
  toolCallId: `t${number}_${call}`,
  name: 'get_order',
  args: {},
  effect: 'read',
  idempotencyKey: `r:${number}:t${number}_${call}`,
  status: 'completed',
  leaseUntil: '2026-11-29T02:00:00.000Z',
  attempts: 0,
  outcome: 'ok',
  result: '{}',
  latencyMs: 0,
});

const now = new Date('2026-11-29T02:00:00.000Z');

async function writeTurn(ledger: EmbeddedLedger, number: number, tools: number, done = tools) {
  await ledger.recordTurn(turn(number, tools));
  for (let call = 1; call <= done; call++) await ledger.recordCall(completed(number, call), now);
}

async function expectWhole(step: Awaited<ReturnType<typeof loadConversationStep>>, ledger: EmbeddedLedger) {
  const stored = await ledger.listConversation('r');
  expect(step.turns).toEqual(stored.turns);
  const key = (call: ToolCallRecord) => `${call.turn}:${call.call}`;
  expect(step.calls.map(key).sort()).toEqual(stored.calls.filter((call) => call.status === 'completed').map(key).sort());
}

describe('loading a step with its conversation', () => {
  it('reads one turn at a time in one round trip once it knows the run', async () => {
    const ledger = EmbeddedLedger.open();
    await ledger.createRun(run);
    const counting = countingLedger(ledger);
    await loadConversationStep(counting.ledger, 'r');
    for (let number = 1; number <= 5; number++) {
      await writeTurn(ledger, number, 3);
      counting.reset();
      const step = await loadConversationStep(counting.ledger, 'r', 'model');
      expect(counting.counts()).toEqual({ loadStep: 1 });
      await expectWhole(step, ledger);
    }
  });

  it('catches up on many turns written elsewhere with one more query', async () => {
    const ledger = EmbeddedLedger.open();
    await ledger.createRun(run);
    const counting = countingLedger(ledger);
    await writeTurn(ledger, 1, 2);
    await loadConversationStep(counting.ledger, 'r');
    for (let number = 2; number <= 9; number++) await writeTurn(ledger, number, 2);
    counting.reset();
    await expectWhole(await loadConversationStep(counting.ledger, 'r'), ledger);
    expect(counting.counts()).toEqual({ loadStep: 1, listConversation: 1 });
  });

  it('sees a call completed after it was last read in flight, and a turn with more calls than it guesses', async () => {
    const ledger = EmbeddedLedger.open();
    await ledger.createRun(run);
    await writeTurn(ledger, 1, 12, 0);
    await ledger.claimCall({ ...completed(1, 1), status: 'in_flight', leaseUntil: '2026-11-29T03:00:00.000Z' }, now);
    const first = await loadConversationStep(ledger, 'r');
    await expectWhole(first, ledger);
    expect(completedCallsOf(first.turns[0]!, first.calls)).toBe(0);
    await ledger.completeCall({ runId: 'r', turn: 1, call: 1, outcome: { outcome: 'ok', result: '{}', latencyMs: 0 }, now });
    for (let call = 2; call <= 12; call++) await ledger.recordCall(completed(1, call), now);
    const second = await loadConversationStep(ledger, 'r');
    await expectWhole(second, ledger);
    expect(completedCallsOf(second.turns[0]!, second.calls)).toBe(12);
  });

  it('guesses no calls of the turn its caller is about to record, and still finds them when a retry meets it recorded', async () => {
    const ledger = EmbeddedLedger.open();
    await ledger.createRun(run);
    await writeTurn(ledger, 1, 2);
    const asked: unknown[] = [];
    const spying = { ...ledger, loadStep: (runId: string, want?: Parameters<EmbeddedLedger['loadStep']>[1]) => (asked.push(want), ledger.loadStep(runId, want)) } as unknown as EmbeddedLedger;
    const counting = countingLedger(spying);
    await expectWhole(await loadConversationStep(counting.ledger, 'r', 'model', 2), ledger);
    // Turn 1's calls were guessed (it was not known); turn 2, the one about to be recorded, is read without its calls.
    await loadConversationStep(counting.ledger, 'r', 'model', 2);
    expect(asked.at(-1)).toMatchObject({ turns: [2, 3], calls: [] });
    // A retry of turn 2 after it was recorded with its calls: one more query, and the whole conversation.
    await writeTurn(ledger, 2, 3);
    counting.reset();
    await expectWhole(await loadConversationStep(counting.ledger, 'r', 'model', 2), ledger);
    expect(counting.counts()).toEqual({ loadStep: 1, listConversation: 1 });
  });

  it('keeps ledgers apart: the same run id in a fresh ledger is another conversation', async () => {
    const first = EmbeddedLedger.open();
    await first.createRun(run);
    await writeTurn(first, 1, 1);
    expect((await loadConversationStep(first, 'r')).turns).toHaveLength(1);
    const second = EmbeddedLedger.open();
    await second.createRun(run);
    expect((await loadConversationStep(second, 'r')).turns).toEqual([]);
  });

  it('names a run that does not exist', async () => {
    await expect(loadConversationStep(EmbeddedLedger.open(), 'nope')).rejects.toThrow(/no run nope/);
  });
});

describe("the provider's names for its answer (a turn's responseId, responseModel)", () => {
  const answer: MessageResponse = { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } };

  it('keeps the id and the model an answer names, and gives them back as the answer the turn recorded', () => {
    const names = answerNames({ ...answer, id: 'msg_01XFDUDYJgAACzvnptvVoYEL', model: 'claude-haiku-4-5-20251001' });
    expect(names).toEqual({ responseId: 'msg_01XFDUDYJgAACzvnptvVoYEL', responseModel: 'claude-haiku-4-5-20251001' });
    expect(recordedResponse({ ...turn(1, 0), ...names })).toMatchObject({ id: 'msg_01XFDUDYJgAACzvnptvVoYEL', model: 'claude-haiku-4-5-20251001' });
  });

  it('makes up none: an answer that names nothing (Bedrock Converse) records none, and a turn that recorded none is answered without them', () => {
    expect(answerNames(answer)).toEqual({});
    const replayed = recordedResponse(turn(1, 0));
    expect(replayed).not.toHaveProperty('id');
    expect(replayed).not.toHaveProperty('model');
    // So the turn a replay records from it is the one recorded before turns kept them, field for field.
    expect(answerNames(replayed)).toEqual({});
  });

  it('leaves out, rather than clips, a name no provider writes: empty, or over 256 characters', () => {
    expect(answerNames({ ...answer, id: '', model: 'm'.repeat(257) })).toEqual({});
    expect(answerNames({ ...answer, id: 'i'.repeat(256), model: 'm' })).toEqual({ responseId: 'i'.repeat(256), responseModel: 'm' });
  });
});
