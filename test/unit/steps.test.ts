import { historyAtStart } from '../../lambdas/guards/history.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { RunConfig, type RunRecord, type ToolCallRecord, type TurnRecord } from '../../lambdas/records/ledger-records.js';
import { decide } from '../../lambdas/steps/budget-check.js';
import { conversation, withNotes } from '../../lambdas/steps/call-model.js';
import { runRequestFromEvent } from '../../lambdas/runs/run-request.js';
import { createStartRun } from '../../lambdas/steps/start-run.js';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { DEFAULT_PRICE_TABLE } from '../../lambdas/models/prices.js';
import { agentFingerprint as fingerprintOf } from '../../lambdas/define.js';
import { runRecord } from '../support/records.js';

const agentFingerprint = (codeVersion: string) => fingerprintOf(refundReconciler, codeVersion, DEFAULT_PRICE_TABLE.version);

const baseRun: RunRecord = runRecord({
  agent: 'refund-reconciler',
  input: { date: '2026-11-28' },
  prompt: 'Reconcile the refund requests of 2026-11-28.',
  model: 'savepoint-sim-1',
  config: RunConfig().parse({ maxSteps: 10, maxTokens: 1000 }),
  executionArn: 'arn:e1',
});

describe('the budget check', () => {
  const now = new Date('2026-11-29T02:10:00.000Z'); // 600 s after the run started
  const endTurn: TurnRecord = {
    kind: 'turn', runId: 'r', turn: 2, model: 'm', content: [{ type: 'text', text: 'done' }], stopReason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 }, costMicros: 0, latencyMs: 0, recordedAt: '',
  };
  it.each([
    ['continues within budget', { steps: 4, modelTurns: 2 }, [], { continue: true, nextTurn: 3, pending: null }],
    ['stops at the step budget before the next call', { steps: 10 }, [], { continue: false, status: 'stopped', guard: 'steps', reason: 'budget exceeded: steps 10 / 10' }],
    ['stops once the token budget is crossed', { inputTokens: 900, outputTokens: 150 }, [], { continue: false, status: 'stopped', guard: 'tokens', reason: 'budget exceeded: tokens 1050 / 1000' }],
    ['stops once the dollar budget is crossed', { costMicros: 4_020_000, config: { ...baseRun.config, maxDollars: 4 } }, [], { continue: false, status: 'stopped', guard: 'dollars', reason: 'budget exceeded: dollars 4.02 / 4.00' }],
    // Exactly at the limit is exhausted (`>=`, not `>`): the next call could only go over it.
    ['stops at the token budget exactly', { inputTokens: 900, outputTokens: 100 }, [], { continue: false, status: 'stopped', guard: 'tokens', reason: 'budget exceeded: tokens 1000 / 1000' }],
    ['continues a token short of the token budget', { inputTokens: 900, outputTokens: 99, steps: 4, modelTurns: 2 }, [], { continue: true, nextTurn: 3, pending: null }],
    ['stops at the dollar budget exactly', { costMicros: 4_000_000, config: { ...baseRun.config, maxDollars: 4 } }, [], { continue: false, status: 'stopped', guard: 'dollars', reason: 'budget exceeded: dollars 4.00 / 4.00' }],
    ['continues a micro-dollar short of the dollar budget', { costMicros: 3_999_999, steps: 4, modelTurns: 2, config: { ...baseRun.config, maxDollars: 4 } }, [], { continue: true, nextTurn: 3, pending: null }],
    ['continues a step short of the step budget', { steps: 9, modelTurns: 2 }, [], { continue: true, nextTurn: 3, pending: null }],
    ['states the dollars spent to the micro-dollar, not rounded to cents', { costMicros: 32_100, config: { ...baseRun.config, maxDollars: 0.03 } }, [], { continue: false, status: 'stopped', guard: 'dollars', reason: 'budget exceeded: dollars 0.0321 / 0.03' }],
    ['stops on the wall clock since the run first started', { config: { ...baseRun.config, maxWallSeconds: 600 } }, [], { continue: false, status: 'stopped', guard: 'wallClock', reason: 'budget exceeded: wall clock 600 s / 600 s' }],
    ['stops a killed run, saying who killed it and when', { killed: { by: 'alice', at: '2026-11-29T02:05:00.000Z', reason: 'wrong day' } }, [], { continue: false, status: 'killed', guard: 'kill', reason: 'killed by alice at 2026-11-29T02:05:00.000Z: wrong day' }],
    ['ends when the model gave its final answer', { steps: 9 }, [endTurn], { continue: false, status: 'succeeded', reason: 'done' }],
    ['stops a run that is no longer running', { status: 'failed' as const }, [], { continue: false, status: 'stopped', reason: 'run is failed' }],
  ])('%s', (_case, overrides, turns, expected) => {
    expect(decide(refundReconciler, { ...baseRun, ...overrides } as RunRecord, turns as TurnRecord[], now)).toEqual(expected);
  });

  it('sends a turn recorded but never counted (its CallModel died in between) back to CallModel, which counts it', () => {
    const asking: TurnRecord = { ...endTurn, turn: 3, stopReason: 'tool_use', content: [{ type: 'tool_use', id: 'a', name: 'get_order', input: {} }] };
    expect(decide(refundReconciler, { ...baseRun, modelTurns: 2, steps: 4 }, [{ ...endTurn, stopReason: 'tool_use' }, asking], now)).toEqual({ continue: true, nextTurn: 3, pending: null });
    // Counted, it is a turn whose tool calls come first.
    expect(decide(refundReconciler, { ...baseRun, modelTurns: 3, steps: 5 }, [{ ...endTurn, stopReason: 'tool_use' }, asking], now)).toMatchObject({ nextTurn: 4, pending: [{ turn: 3, call: 1, name: 'get_order' }] });
  });

  it('stops every run while the global kill switch is on', () => {
    expect(decide(refundReconciler, baseRun, [], now, { globalKill: { by: 'ops', at: '2026-11-29T02:06:00.000Z', reason: 'provider incident' } })).toEqual({
      continue: false,
      status: 'killed',
      guard: 'kill',
      reason: 'killed (all runs) by ops at 2026-11-29T02:06:00.000Z: provider incident',
    });
  });
});

describe('the run request', () => {
  it.each([
    ['the nightly event reconciles the day before, as the same run as a manual run of that day', { 'detail-type': 'Scheduled Event', source: 'aws.events', time: '2026-12-01T02:00:00Z' }, { runId: 'refunds-2026-11-30', input: { date: '2026-11-30'} }],
    ['across a year boundary', { 'detail-type': 'Scheduled Event', source: 'aws.events', time: '2027-01-01T00:30:00Z' }, { runId: 'refunds-2026-12-31', input: { date: '2026-12-31'} }],
    ["a run request's input names its day", { input: { date: '2026-11-28' } }, { runId: 'refunds-2026-11-28', input: { date: '2026-11-28'} }],
    ['and may name its run', { input: { date: '2026-11-28' }, runId: 'rerun-1' }, { runId: 'rerun-1', input: { date: '2026-11-28'} }],
  ])('%s', (_case, event, expected) => {
    expect(runRequestFromEvent(refundReconciler, event)).toMatchObject(expected);
  });
});

describe('the conversation', () => {
  const turn = (number: number, content: TurnRecord['content']): TurnRecord => ({
    kind: 'turn', runId: 'r', turn: number, model: 'm', content, stopReason: 'tool_use', usage: { input_tokens: 1, output_tokens: 1 }, costMicros: 0, latencyMs: 0, recordedAt: '',
  });
  const result = (number: number, callNumber: number, outcome: ToolCallRecord['outcome'], text: string): ToolCallRecord => ({
    kind: 'tool', runId: 'r', turn: number, call: callNumber, toolCallId: `t${callNumber}`, name: 'x', args: {}, effect: 'read', idempotencyKey: '', status: 'completed', leaseUntil: '', attempts: 1, outcome, result: text,
  });

  it('is rebuilt from the ledger: prompt, then each turn and the results of its calls, errors marked', () => {
    const turns = [turn(1, [{ type: 'text', text: 'hi' }, { type: 'tool_use', id: 'a', name: 'get_order', input: {} }, { type: 'tool_use', id: 'b', name: 'issue_refund', input: {} }])];
    const messages = conversation(baseRun, turns, [result(1, 2, 'rejected', '{"error":"approval_rejected"}'), result(1, 1, 'ok', '{"id":"o"}')]);
    expect(messages).toEqual([
      { role: 'user', content: baseRun.prompt },
      { role: 'assistant', content: turns[0]!.content },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'a', content: '{"id":"o"}' },
          { type: 'tool_result', tool_use_id: 'b', content: '{"error":"approval_rejected"}', is_error: true },
        ],
      },
    ]);
  });

  it('refuses to call the model while a tool call of an earlier turn has no result', () => {
    const turns = [turn(1, [{ type: 'tool_use', id: 'a', name: 'get_order', input: {} }])];
    expect(() => conversation(baseRun, turns, [])).toThrow(/tool call 1 of turn 1 \(get_order\) has no recorded result/);
  });

  // A process renders a run's conversation again each turn, from what it rendered the turn before
  // (call-model.ts `conversation`): the same messages as a rebuild from records it has never seen.
  const uses = (number: number) => turn(number, [{ type: 'tool_use', id: `u${number}`, name: 'get_order', input: { n: number } }]);
  const rebuilt = (turns: TurnRecord[], calls: ToolCallRecord[], tools?: ReadonlySet<string>) =>
    conversation({ ...baseRun, runId: `fresh-${Math.random()}` }, structuredClone(turns), structuredClone(calls), tools);

  it('renders each turn on from the last, as a rebuild from the same records would', () => {
    const turns = [uses(1), uses(2), uses(3), turn(4, [{ type: 'text', text: 'done' }])].map((recorded, index) => ({ ...recorded, notes: [`note ${index + 1}`] }));
    const calls = [result(1, 1, 'ok', 'one'), result(2, 1, 'error', 'two'), result(3, 1, 'ok', 'three')];
    for (const tools of [undefined, new Set(['issue_refund'])]) {
      for (let through = 0; through <= turns.length; through += 1) {
        expect(conversation(baseRun, turns.slice(0, through), calls, tools)).toEqual(rebuilt(turns.slice(0, through), calls, tools));
      }
    }
  });

  it('renders what the records it is given say, never what another ledger of the run said', () => {
    const turns = [uses(1), uses(2)];
    expect(conversation(baseRun, turns, [result(1, 1, 'ok', 'first ledger'), result(2, 1, 'ok', 'x')]).at(2)).toMatchObject({ content: [{ content: 'first ledger' }] });
    // The same run, turns and call numbers, read from another ledger (a fork, a restore): its own records.
    const other = [result(1, 1, 'ok', 'second ledger'), result(2, 1, 'ok', 'x')];
    expect(conversation(baseRun, structuredClone(turns), other)).toEqual(rebuilt(turns, other));
    expect(conversation(baseRun, structuredClone(turns), other).at(2)).toMatchObject({ content: [{ content: 'second ledger' }] });
    // The same turn records, another call record of a turn: rendered again.
    const again = [result(1, 1, 'error', 'third ledger'), result(2, 1, 'ok', 'x')];
    expect(conversation(baseRun, turns, again)).toEqual(rebuilt(turns, again));
    // Another prompt (the opening): rendered again.
    expect(conversation({ ...baseRun, prompt: 'another prompt' }, turns, again)[0]).toEqual({ role: 'user', content: 'another prompt' });
  });

  it('hands each caller a list of its own: the notes one caller appends are not in the next render', () => {
    const turns = [uses(1)];
    const calls = [result(1, 1, 'ok', 'one')];
    const first = conversation(baseRun, turns, calls);
    withNotes(first, ['[harness] a note of this call only']);
    first.push({ role: 'assistant', content: 'not recorded' });
    expect(conversation(baseRun, turns, calls)).toEqual(rebuilt(turns, calls));
  });
});

// Each test on a ledger of its own (the embedded one: the same contract as DynamoDB's, no emulator).
describe('StartRun', () => {
  let ledger: EmbeddedLedger;
  let live: Set<string>;
  // What the state machine passes StartRun about its definition (infra/agent-state-machine.ts).
  const definitionV1 = 'a1b2c3d4e5f60718';
  const start = (codeVersion = 'v1', hash = definitionV1) => {
    const startRun = createStartRun({
      agent: refundReconciler,
      ledger,
      executions: { isRunning: async (arn) => live.has(arn), stop: async () => undefined },
      clock: { now: () => new Date('2026-11-29T02:00:00Z') },
      codeVersion,
    });
    return (input: { event: unknown; executionArn: string }) => startRun({ ...input, definition: { hash } });
  };
  const event = { runId: 'r1', input: { date: '2026-11-28' } };

  /** Run r1, started by execution arn:e1 (not live: an orphan unless the test says otherwise). */
  const startedByE1 = () => start()({ event, executionArn: 'arn:e1' });

  beforeEach(() => {
    ledger = EmbeddedLedger.open();
    live = new Set();
  });
  afterEach(() => ledger.close());

  it('starts a new run, and the same execution resumes it', async () => {
    expect(await start()({ event, executionArn: 'arn:e1' })).toEqual({ runId: 'r1', action: 'start', status: 'running', history: historyAtStart(0) });
    expect(await start()({ event, executionArn: 'arn:e1' })).toMatchObject({ action: 'resume' });
    expect((await ledger.getRun('r1'))!.fingerprint).toBe(agentFingerprint('v1'));
  });

  it('leaves a run alone while another live execution drives it', async () => {
    await startedByE1();
    live.add('arn:e1');
    expect(await start()({ event, executionArn: 'arn:e2' })).toMatchObject({ action: 'duplicate' });
    live.delete('arn:e1');
  });

  it('refuses to resume on a different agent version', async () => {
    await startedByE1();
    await expect(start('v2')({ event, executionArn: 'arn:e3' })).rejects.toThrow(
      /run r1 started on other code: agent \w+ → \w+ \(code version, prompt, model, tool schemas or price table\)\. .*pass --force/,
    );
  });

  it('refuses to resume on a changed state machine definition, naming it', async () => {
    await startedByE1();
    const changed = 'ffee0011ddcc2233';
    await expect(start('v1', changed)({ event, executionArn: 'arn:e3' })).rejects.toThrow(new RegExp(`state machine definition ${definitionV1} → ${changed}`));
    expect((await ledger.getRun('r1'))!.executionArn).toBe('arn:e1');
  });

  it('resumes an orphaned run under the new execution', async () => {
    await startedByE1();
    expect(await start()({ event, executionArn: 'arn:e4' })).toMatchObject({ action: 'resume' });
    expect(await ledger.getRun('r1')).toMatchObject({ executionArn: 'arn:e4', executions: ['arn:e1', 'arn:e4'] });
  });

  it('lets only one of two executions resuming the same orphaned run at once drive it', async () => {
    await startedByE1();
    const [first, second] = await Promise.all([start()({ event, executionArn: 'arn:e5a' }), start()({ event, executionArn: 'arn:e5b' })]);
    expect([first.action, second.action].sort()).toEqual(['duplicate', 'resume']);
    const driver = first.action === 'resume' ? 'arn:e5a' : 'arn:e5b';
    expect((await ledger.getRun('r1'))!.executionArn).toBe(driver);
  });

  it('resumes on changed code when forced, and the run adopts the new fingerprint', async () => {
    await startedByE1();
    const changed = 'ffee0011ddcc2233';
    expect(await start('v2', changed)({ event: { ...event, force: true }, executionArn: 'arn:e5c' })).toMatchObject({ action: 'resume' });
    expect(await ledger.getRun('r1')).toMatchObject({ executionArn: 'arn:e5c', fingerprint: agentFingerprint('v2'), definitionHash: changed });
    // From now on the new code is the run's code: resuming on it needs no force.
    expect(await start('v2', changed)({ event, executionArn: 'arn:e5d' })).toMatchObject({ action: 'resume' });
  });

  it('refuses a run id that was started with another input, and reports a finished run as finished', async () => {
    await startedByE1();
    await expect(start()({ event: { ...event, input: { date: '2026-11-27' } }, executionArn: 'arn:e5' })).rejects.toThrow(/runId: run r1 was started with the input .*2026-11-28.*, not .*2026-11-27/);
    await ledger.finishRun('r1', { status: 'succeeded', stopReason: 'done' }, new Date());
    expect(await start()({ event, executionArn: 'arn:e6' })).toMatchObject({ action: 'finished', status: 'succeeded' });
  });

  it("refuses, naming the input, a run whose record would not fit DynamoDB's item with room to grow: nothing written", async () => {
    // An agent whose prompt quotes its input: the record holds both.
    const agent = { ...refundReconciler, input: z.object({ text: z.string() }).strict(), prompt: (input: unknown) => `Note: ${(input as { text: string }).text}` };
    const startRun = createStartRun({ agent: agent as never, ledger, executions: { isRunning: async () => false, stop: async () => undefined }, clock: { now: () => new Date('2026-11-29T02:00:00Z') }, codeVersion: 'v1' });
    const big = { runId: 'big', input: { text: 'x'.repeat(180 * 1024) } };
    await expect(startRun({ event: big, executionArn: 'arn:big', definition: { hash: definitionV1 } })).rejects.toThrow(
      expect.objectContaining({ name: 'Agent.InvalidInput', message: expect.stringMatching(/^input: the run's record would hold \d+ bytes of its input and the prompt the agent makes of it, over the 344064 a run record has for them/) }),
    );
    expect(await ledger.getRun('big')).toBeUndefined();
    // Half of it fits.
    expect(await startRun({ event: { runId: 'half', input: { text: 'x'.repeat(90 * 1024) } }, executionArn: 'arn:half', definition: { hash: definitionV1 } })).toMatchObject({ action: 'start' });
  });
});

describe("the agent's budgets", () => {
  it('are the defaults of its runs; a run request overrides only the settings it names', () => {
    const agent = { ...refundReconciler, budgets: { maxSteps: 20, maxDollars: 1 } };
    const request = runRequestFromEvent(agent, { input: { date: '2026-11-28' }, config: { maxDollars: 2 } });
    expect(request.config).toEqual({ maxDollars: 2 });
    expect(RunConfig().parse({ ...agent.budgets, ...request.config })).toMatchObject({ maxSteps: 20, maxDollars: 2, maxTokens: 600_000 });
  });
});
