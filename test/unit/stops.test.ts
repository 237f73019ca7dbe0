import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { assertToolsFitTimeout, DEFAULT_TOOL_TIMEOUT_MS, defineAgent, defineTool, maxToolTimeoutMs, toolNames, toolSpecs, type LoopOptions, type ToolDefinition } from '../../lambdas/define.js';
import { FRAMING_TOKENS, NOTES_BYTES, reservationFor, reservationTrip } from '../../lambdas/guards/budgets.js';
import { RunConfig, ZERO_COUNTERS, type RunRecord, type ToolCallRecord, type TurnRecord } from '../../lambdas/records/ledger-records.js';
import { conversation } from '../../lambdas/steps/call-model.js';
import { requestBytes } from '../../lambdas/guards/request-size.js';
import { DEFAULT_PRICE_TABLE } from '../../lambdas/models/prices.js';
import { cutResult } from '../../lambdas/ledger/blobs.js';
import { AttemptCut, boundedAttempt } from '../../lambdas/tools/attempt.js';
import { manualClock } from '../support/manual-clock.js';

const tool = (options: Partial<ToolDefinition> = {}) =>
  defineTool({ name: 'look', description: 'Looks.', input: z.object({}), effect: 'read', execute: async () => ({}), ...options });
const agent = (options: { loops?: LoopOptions; tools?: ToolDefinition[] } = {}) =>
  defineAgent({ name: 'a', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p', tools: options.tools ?? [tool()], ...(options.loops && { loops: options.loops }) });

describe('defineTool and defineAgent: the settings of what stops a run', () => {
  it.each([
    ['timeoutMs is not a whole number', { timeoutMs: 1.5 }, /defineTool look: timeoutMs must be a whole number of milliseconds from 1 to 840000, got 1.5/],
    ['timeoutMs is over what a Lambda can run', { timeoutMs: 900_000 }, /timeoutMs must be .* got 900000/],
    ['maxResultTokens is too small to show anything', { maxResultTokens: 10 }, /defineTool look: maxResultTokens must be a whole number of tokens ≥ 256, got 10/],
  ])('fails when %s', (_case, options, message) => {
    expect(() => tool(options)).toThrow(message);
  });

  it.each([
    ['loops.warnAt is not below loops.repeats', { warnAt: 5, repeats: 5 }, /defineAgent a: loops.warnAt \(5\) must be below loops.repeats \(5\): the model is warned before the detector trips/],
    ['loops.repeats does not fit in loops.window', { window: 4 }, /defineAgent a: loops.repeats \(5\) must fit in loops.window \(4\)/],
    ['loops.cycleLength is 1', { cycleLength: 1 }, /defineAgent a: loops.cycleLength must be a whole number from 2 to 50, got 1/],
  ])('fails when %s', (_case, loops, message) => {
    expect(() => agent({ loops })).toThrow(message);
  });

  it('gives the longest tool timeout of an agent, for the CallTool function to outlast', () => {
    expect(maxToolTimeoutMs(agent())).toBe(DEFAULT_TOOL_TIMEOUT_MS);
    expect(maxToolTimeoutMs(agent({ tools: [tool(), tool({ name: 'slow', timeoutMs: 120_000 }), tool({ name: 'quick', timeoutMs: 500 })] }))).toBe(120_000);
  });

  it('refuses, at the agent\'s load, tools that wait longer than the stack\'s toolTimeout, naming both', () => {
    const slow = agent({ tools: [tool(), tool({ name: 'slow', timeoutMs: 120_000 })] });
    expect(() => assertToolsFitTimeout(slow, 20_000)).toThrow(
      'agent a: tool slow may take 120000 ms (maxToolTimeoutMs), longer than the stack\'s toolTimeout of 20000 ms: set toolTimeout: Duration.millis(120000) on its DurableAgent',
    );
    expect(() => assertToolsFitTimeout(slow, 120_000)).not.toThrow();
    // A handler loaded without the variable (the local stack, an older template) checks nothing.
    expect(() => assertToolsFitTimeout(slow, undefined)).not.toThrow();
  });
});

describe('the pre-call reservation', () => {
  const price = DEFAULT_PRICE_TABLE.models['sim:savepoint-sim-1']!;
  const run = (counters: Partial<RunRecord>, config: Partial<RunConfig> = {}) => ({ ...ZERO_COUNTERS, ...counters, config: RunConfig().parse(config) }) as RunRecord;

  it('bounds input by the request bytes plus framing and notes, at the dearest input price, and output by max_tokens', () => {
    const reservation = reservationFor(10_000, 2_048, [price]);
    const input = 10_000 + NOTES_BYTES + FRAMING_TOKENS;
    expect(reservation.tokens).toBe(input + 2_048);
    // Claude's cache writes (1.25 × input) are the dearest input tokens.
    expect(reservation.micros).toBe(Math.ceil(input * price.cacheWritePerMTok + 2_048 * price.outputPerMTok));
    // A fallback that costs more raises the bound.
    expect(reservationFor(10_000, 2_048, [price, { ...price, outputPerMTok: 75 }]).micros).toBeGreaterThan(reservation.micros);
  });

  it('refuses a call that might not fit in the tokens or dollars left, and lets one that fits through', () => {
    const reservation = { tokens: 10_000, micros: 100_000 };
    expect(reservationTrip(run({ inputTokens: 580_000, outputTokens: 10_000 }), reservation)).toBeUndefined();
    expect(reservationTrip(run({ inputTokens: 580_000, outputTokens: 10_001 }), reservation)).toEqual({
      guard: 'tokens',
      reason: 'budget exceeded: tokens 590001 / 600000, and the next model call may use up to 10000 (raise the run\'s maxTokens, or give tools with large results a maxResultTokens)',
    });
    expect(reservationTrip(run({ costMicros: 4_900_001 }), reservation)).toEqual({
      guard: 'dollars',
      // To the micro-dollar: rounded to cents, 4.90 + 0.10 would read as fitting in 5.00.
      reason: 'budget exceeded: dollars 4.900001 / 5.00, and the next model call may cost up to 0.10 (raise the run\'s maxDollars, or give tools with large results a maxResultTokens)',
    });
  });
});

describe('the request bytes a reservation counts', () => {
  it('are at least the bytes of the request conversation() renders, unknown tools, quotes and notes included', () => {
    const lookup = tool();
    const subject = agent({ tools: [lookup] });
    const base = { kind: 'turn', runId: 'r', model: 'sim:savepoint-sim-1', stopReason: 'tool_use', usage: { input_tokens: 1, output_tokens: 1 }, costMicros: 0, latencyMs: 0, recordedAt: '' } as const;
    const turns: TurnRecord[] = [1, 2, 3].map((n) => ({
      ...base,
      turn: n,
      notes: [`[harness] Budget left for this run: ${n} steps "quoted"`],
      content: [
        { type: 'text', text: `thinking "${n}"\n` },
        { type: 'tool_use', id: `toolu_${'x'.repeat(40)}_${n}`, name: 'look', input: { q: 'a"b'.repeat(n) } },
        { type: 'tool_use', id: `toolu_${n}_b`, name: 'not_a_tool', input: {} },
      ],
    }));
    const calls: ToolCallRecord[] = turns.flatMap((turn) =>
      [1, 2].map((call) => ({ kind: 'tool', runId: 'r', turn: turn.turn, call, toolCallId: 't', name: 'look', args: {}, effect: 'read', idempotencyKey: 'k', status: 'completed', leaseUntil: '', attempts: 1, outcome: call === 1 ? 'ok' : 'error', result: JSON.stringify({ text: '"🙂"\n'.repeat(50 * call) }) }) as ToolCallRecord),
    );
    const run = { ...ZERO_COUNTERS, runId: 'r', prompt: 'Do "it".', model: 'sim:savepoint-sim-1', config: RunConfig().parse({}) } as RunRecord;
    const messages = conversation(run, turns, calls, toolNames(subject));
    const sent = Buffer.byteLength(JSON.stringify({ system: subject.system, messages, tools: toolSpecs(subject) }));
    const counted = requestBytes(subject, run, turns, calls);
    expect(counted).toBeGreaterThanOrEqual(sent);
    // An over-estimate, not a wild one.
    expect(counted).toBeLessThan(sent * 2);
  });
});

describe('a result cut for the model', () => {
  it('is at most the bytes allowed, starts with the head of the result and names where the whole is stored', async () => {
    const whole = JSON.stringify({ text: 'a"b🙂'.repeat(10_000) }); // quotes grow when escaped, emoji are 4 bytes
    const stored: string[] = [];
    const shown = await cutResult(whole, 1_000, async (text) => (stored.push(text), 'blob:v1:ref'));
    expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(1_000);
    const cut = JSON.parse(shown) as { truncated: boolean; bytes: number; head: string; stored: string };
    expect(cut).toMatchObject({ truncated: true, bytes: Buffer.byteLength(whole), stored: 'blob:v1:ref' });
    expect(cut.head.length).toBeGreaterThan(500);
    expect(whole.startsWith(cut.head)).toBe(true);
    expect(stored).toEqual([whole]);
    expect(await cutResult('{"short":true}', 1_000, async () => 'never')).toBe('{"short":true}');
  });
});

describe('a bounded attempt', () => {
  const far = new Date(Date.now() + 3600_000);
  const clock = { now: () => new Date() };

  it('returns what the work returns, and cuts off work that outlives its timeout even when it ignores its signal', async () => {
    expect(await boundedAttempt(async () => 42, { timeoutMs: 1_000, clock, stopAt: far, what: 'w' })).toBe(42);
    // The timeout runs on the attempt's clock, which fires it as it is moved.
    const moved = manualClock();
    let signal: AbortSignal | undefined;
    const hung = boundedAttempt((given) => ((signal = given), new Promise(() => undefined)), { timeoutMs: 5, clock: moved, stopAt: far, what: 'w' });
    moved.advance(4);
    expect(signal!.aborted).toBe(false);
    // Cut as the clock reaches the timeout, not on a real timer later.
    moved.advance(1);
    expect(signal!.aborted).toBe(true);
    await expect(hung).rejects.toMatchObject({ name: 'AttemptCut', cut: { kind: 'timeout', message: 'w did not answer within 5 ms (its timeoutMs)' } });
    expect(signal!.aborted).toBe(true);
    expect(signal!.reason).toBeInstanceOf(AttemptCut);
  });

  it('is cut off when the run clock passes the wall-clock limit, however far the clock jumps', async () => {
    const moved = manualClock();
    let signal: AbortSignal | undefined;
    const hung = boundedAttempt((given) => ((signal = given), new Promise(() => undefined)), { clock: moved, stopAt: new Date(moved.now().getTime() + 60_000), what: 'w' });
    moved.advance(59_999);
    expect(signal!.aborted).toBe(false);
    moved.advance(3600_000);
    expect(signal!.aborted).toBe(true);
    await expect(hung).rejects.toMatchObject({ cut: { kind: 'wallClock', message: "w was cut off: the run's wall-clock budget ran out" } });
  });

  it('passes the step signal on to the work and lets the work say what an abort is', async () => {
    const outer = new AbortController();
    const attempt = boundedAttempt((signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('client: aborted')))), { signal: outer.signal, clock, stopAt: far, what: 'w' });
    outer.abort();
    await expect(attempt).rejects.toThrow('client: aborted');
  });
});
