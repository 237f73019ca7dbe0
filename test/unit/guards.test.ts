import { describe, expect, it } from 'vitest';
import { BREAKER, admit, afterCall } from '../../lambdas/guards/breaker.js';
import type { BreakerState } from '../../lambdas/records/breaker-state.js';
import { callFingerprint, loopSettings, loopVerdict } from '../../lambdas/guards/loops.js';
import type { TurnRecord } from '../../lambdas/records/ledger-records.js';
import { ModelThrottledError, TerminalError, TransientError } from '../../lambdas/shared/errors.js';

const t0 = Date.parse('2026-11-29T02:00:00.000Z');
const at = (ms: number) => new Date(t0 + ms);
const closed: BreakerState = { name: 'model', state: 'closed', failures: [], trips: 0, version: 0 };

/** Applies `afterCall` like the breaker does: a change is saved, no change keeps the state. */
const after = (state: BreakerState, ms: number, error?: unknown, probe = false) => afterCall(state, at(ms), probe, error) ?? state;

describe('the circuit breaker', () => {
  it('opens on the 5th outage failure within 60 s, and not on failures spread wider', () => {
    let state = closed;
    for (let i = 0; i < 4; i++) state = after(state, i * 1_000, new TransientError('503'));
    expect(state.state).toBe('closed');
    state = after(state, 59_000, new ModelThrottledError('529'));
    expect(state).toMatchObject({ state: 'open', trips: 1, openedAt: at(59_000).toISOString() });

    let spread = closed;
    for (let i = 0; i < 10; i++) spread = after(spread, i * 20_000, new TransientError('503'));
    expect(spread.state).toBe('closed');
  });

  it('does not count errors retrying cannot fix, nor successes', () => {
    let state = closed;
    for (let i = 0; i < 10; i++) state = after(state, i, new TerminalError('401 invalid api key'));
    state = after(state, 11);
    expect(state).toEqual(closed);
  });

  it('fails fast while open, lets one probe through after 30 s, and closes or re-opens on its answer', () => {
    const open: BreakerState = { ...closed, state: 'open', openedAt: at(0).toISOString(), trips: 1, version: 5 };
    expect(admit(open, at(BREAKER.openMs - 1))).toEqual({ allowed: false, retryAt: at(BREAKER.openMs).toISOString() });

    const probe = admit(open, at(BREAKER.openMs));
    expect(probe).toMatchObject({ allowed: true, probe: true, next: { state: 'half_open', version: 6 } });
    const halfOpen = (probe as { next: BreakerState }).next;
    expect(admit(halfOpen, at(BREAKER.openMs + 1))).toMatchObject({ allowed: false });

    expect(after(halfOpen, BREAKER.openMs + 100, undefined, true)).toMatchObject({ state: 'closed', failures: [] });
    expect(after(halfOpen, BREAKER.openMs + 100, new TransientError('503'), true)).toMatchObject({ state: 'open', trips: 2, openedAt: at(BREAKER.openMs + 100).toISOString() });
  });
});

const turn = (number: number, calls: [string, Record<string, unknown>][]): TurnRecord => ({
  kind: 'turn',
  runId: 'r',
  turn: number,
  model: 'm',
  content: calls.map(([name, input], index) => ({ type: 'tool_use' as const, id: `t${number}_${index}`, name, input })),
  stopReason: 'tool_use',
  usage: { input_tokens: 1, output_tokens: 1 },
  costMicros: 0,
  latencyMs: 0,
  recordedAt: '',
});

describe('loop detection', () => {
  it('fingerprints calls by name and normalized arguments', () => {
    expect(callFingerprint('search', { q: ' refunds  today', page: 1 })).toBe(callFingerprint('search', { page: 1, q: 'refunds today' }));
    expect(callFingerprint('search', { q: 'a' })).not.toBe(callFingerprint('search', { q: 'b' }));
  });

  it.each([
    ['distinct calls', [['get_order', { orderId: 'a' }], ['get_order', { orderId: 'b' }], ['get_order', { orderId: 'c' }]], undefined],
    ['the same call twice', [['search', { q: 'x' }], ['search', { q: 'x' }]], undefined],
    ['the same call 3 times: a warning', [['search', { q: 'x' }], ['other', {}], ['search', { q: 'x' }], ['search', { q: 'x' }]], 'warn'],
    ['the same call 5 times: a stop', Array.from({ length: 5 }, () => ['search', { q: 'x' }]), 'stop'],
  ] as [string, [string, Record<string, unknown>][], string | undefined][])('%s', (_case, calls, action) => {
    expect(loopVerdict(calls.map((call, index) => turn(index + 1, [call])))?.action).toBe(action);
  });

  it('catches a short cycle A→B→A→B: a warning after two rounds, a stop after three', () => {
    const a: [string, Record<string, unknown>] = ['get_order', { orderId: 'a' }];
    const b: [string, Record<string, unknown>] = ['get_payment', { paymentId: 'p' }];
    const cycle = (rounds: number) => Array.from({ length: rounds * 2 }, (_, index) => turn(index + 1, [index % 2 === 0 ? a : b]));
    expect(loopVerdict(cycle(2))).toMatchObject({ action: 'warn', reason: expect.stringMatching(/cycle of 2/) });
    expect(loopVerdict(cycle(3))).toMatchObject({ action: 'stop', reason: expect.stringMatching(/^loop detected: a cycle of 2 turns repeated 3 times/) });
  });

  it('catches a cycle through 8 different calls: a warning after two rounds, a stop after three', () => {
    const calls = Array.from({ length: 8 }, (_, index): [string, Record<string, unknown>] => [`step_${index}`, { n: index }]);
    const cycle = (turns: number) => Array.from({ length: turns }, (_, index) => turn(index + 1, [calls[index % 8]!]));
    expect(loopVerdict(cycle(15))).toBeUndefined();
    expect(loopVerdict(cycle(16))).toMatchObject({ action: 'warn', reason: expect.stringMatching(/cycle of 8 \(step_0 → step_1 → .* → step_7\)/) });
    expect(loopVerdict(cycle(24))).toMatchObject({ action: 'stop', reason: expect.stringMatching(/^loop detected: a cycle of 8 turns repeated 3 times/) });
    // A shorter longest cycle, set per agent, does not see it.
    expect(loopVerdict(cycle(24), loopSettings({ cycleLength: 7 }))).toBeUndefined();
  });

  it('catches turns that make no progress: the same text, no tool call', () => {
    const text = (n: number, said: string): TurnRecord => ({ ...turn(n, []), content: [{ type: 'text', text: said }], stopReason: 'max_tokens' });
    const same = (count: number) => Array.from({ length: count }, (_, index) => text(index + 1, index % 2 === 0 ? 'Let me  think.' : 'Let me think. '));
    expect(loopVerdict(same(2))).toBeUndefined();
    expect(loopVerdict(same(3))).toMatchObject({ action: 'warn', reason: 'you answered the same text without a tool call: "Let me think." 3 times in the last 3 turns' });
    expect(loopVerdict(same(5))).toMatchObject({ action: 'stop', reason: 'loop detected: the same text without a tool call: "Let me think." repeated 5 times in the last 5 turns' });
    expect(loopVerdict([text(1, 'a'), text(2, 'b'), text(3, 'c'), text(4, 'd'), text(5, 'e')])).toBeUndefined();
  });

  it('takes its window and thresholds from the agent, and ignores the turns a person let go on past', () => {
    const same = (count: number) => Array.from({ length: count }, (_, index) => turn(index + 1, [['search', { q: 'x' }]]));
    const settings = loopSettings({ window: 10, warnAt: 6, repeats: 8 });
    expect(loopVerdict(same(5), settings)).toBeUndefined();
    expect(loopVerdict(same(6), settings)?.action).toBe('warn');
    expect(loopVerdict(same(8), settings)?.action).toBe('stop');
    // After turn 5 (a person let it continue there), only turns 6.. count.
    expect(loopVerdict(same(8), settings, 5)).toBeUndefined();
  });

  it('only looks at the last 5 turns', () => {
    const old = Array.from({ length: 4 }, (_, index) => turn(index + 1, [['search', { q: 'x' }]]));
    const fresh = Array.from({ length: 5 }, (_, index) => turn(index + 5, [['get_order', { orderId: `o${index}` }]]));
    expect(loopVerdict([...old, ...fresh])).toBeUndefined();
  });
});
