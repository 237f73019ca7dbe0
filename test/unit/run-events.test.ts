import { describe, expect, it } from 'vitest';
import { eventsAfter, EVENT_ID, settledEvents, UnknownEventId, type RunRecords } from '../../lambdas/runs/events.js';
import type { ApprovalRecord, RunRecord, ToolCallRecord, TurnRecord } from '../../lambdas/records/ledger-records.js';
import { approval, at, budgetApproval, call, run, turn } from '../contract/fixtures.js';

// The run event stream's derivation (lambdas/runs/events.ts): ids are positions, only the settled prefix is sent.

/** A model turn asking for `calls` tool calls (tool_use blocks), numbered 1.. in its content. */
function toolTurn(number: number, calls: number): TurnRecord {
  const base = turn(number);
  return {
    ...base,
    content: [{ type: 'text', text: 'checking' }, ...Array.from({ length: calls }, (_, index) => ({ type: 'tool_use' as const, id: `toolu_${number}_${index + 1}`, name: 'lookup', input: { index } }))],
    stopReason: calls > 0 ? 'tool_use' : 'end_turn',
  };
}
const claimed = (t: number, c: number, overrides: Partial<ToolCallRecord> = {}) => call({ turn: t, call: c, toolCallId: `toolu_${t}_${c}`, name: 'lookup', effect: 'read', attempts: 1, ...overrides });
const done = (t: number, c: number, overrides: Partial<ToolCallRecord> = {}) => claimed(t, c, { status: 'completed', outcome: 'ok', result: `{"n":${c}}`, recordedAt: at(10 + t).toISOString(), ...overrides });
const records = (r: RunRecord, rest: Partial<Omit<RunRecords, 'run'>> = {}): RunRecords => ({ run: r, turns: [], calls: [], approvals: [], ...rest });
const ids = (events: { id: string }[]) => events.map((event) => event.id);
const finished = (overrides: Partial<RunRecord> = {}) => run('r1', { status: 'succeeded', finishedAt: at(100).toISOString(), ...overrides });

describe('settledEvents', () => {
  it.each<[string, RunRecords, string[]]>([
    ['a run just created: only its start', records(run('r1')), ['a.run']],
    ['a turn whose calls are not claimed yet: up to its budget figures', records(run('r1'), { turns: [toolTurn(1, 2)] }), ['a.run', 't000001.1.model', 't000001.2.budget']],
    [
      'call 2 finished before call 1: stops at call 1, which is still in flight',
      records(run('r1'), { turns: [toolTurn(1, 2)], calls: [claimed(1, 1), done(1, 2)] }),
      ['a.run', 't000001.1.model', 't000001.2.budget', 't000001.c001.2.started'],
    ],
    [
      'an approval waiting: sent, and nothing after it',
      records(run('r1'), { turns: [toolTurn(1, 2)], calls: [done(1, 2)], approvals: [approval({ turn: 1, call: 1 })] }),
      ['a.run', 't000001.1.model', 't000001.2.budget', 't000001.c001.0.approval'],
    ],
    [
      'a turn ending without tool calls, the next not recorded: its end is not final yet (a budget extension may be asked)',
      records(run('r1'), { turns: [toolTurn(1, 0)] }),
      ['a.run', 't000001.1.model', 't000001.2.budget'],
    ],
    [
      'a finished run: every position known, the finish last',
      records(finished(), { turns: [toolTurn(1, 1), toolTurn(2, 0)], calls: [done(1, 1)] }),
      ['a.run', 't000001.1.model', 't000001.2.budget', 't000001.c001.2.started', 't000001.c001.3.result', 't000002.1.model', 't000002.2.budget', 'z.run'],
    ],
    [
      'killed while an approval waited: the wait, then the finish',
      records(finished({ status: 'killed' }), { turns: [toolTurn(1, 1)], approvals: [approval({ turn: 1, call: 1 })] }),
      ['a.run', 't000001.1.model', 't000001.2.budget', 't000001.c001.0.approval', 'z.run'],
    ],
    [
      'an approval expired after the run finished is read as it was at the finish',
      records(finished({ status: 'killed' }), { turns: [toolTurn(1, 1)], approvals: [approval({ turn: 1, call: 1, status: 'expired', decidedAt: at(200).toISOString(), decidedBy: 'timeout' })] }),
      ['a.run', 't000001.1.model', 't000001.2.budget', 't000001.c001.0.approval', 'z.run'],
    ],
    [
      'a rejected call: decided, then refused',
      records(run('r1'), {
        turns: [toolTurn(1, 1), toolTurn(2, 0)],
        calls: [done(1, 1, { outcome: 'rejected', result: '{"error":"approval_rejected"}' })],
        approvals: [approval({ turn: 1, call: 1, status: 'rejected', decidedBy: 'local:ana', decidedVia: 'cli', decidedAt: at(5).toISOString() })],
      }),
      ['a.run', 't000001.1.model', 't000001.2.budget', 't000001.c001.0.approval', 't000001.c001.1.decided', 't000001.c001.2.started', 't000001.c001.3.result', 't000002.1.model', 't000002.2.budget'],
    ],
    [
      'a recovery after turn 1, turn 2 not recorded yet: the takeover waits for the turn to close',
      records(run('r1', { executions: ['arn:1', 'arn:2'], attachments: [{ execution: 1, at: at(20).toISOString(), modelTurns: 1 }] }), { turns: [toolTurn(1, 0)] }),
      ['a.run', 't000001.1.model', 't000001.2.budget'],
    ],
    [
      'a recovery after turn 1, turn 2 recorded: the takeover before turn 2',
      records(run('r1', { executions: ['arn:1', 'arn:2'], attachments: [{ execution: 1, at: at(20).toISOString(), modelTurns: 1 }] }), { turns: [toolTurn(1, 0), toolTurn(2, 0)] }),
      ['a.run', 't000001.1.model', 't000001.2.budget', 't000002.0.attached.0001', 't000002.1.model', 't000002.2.budget'],
    ],
    [
      'a budget extension asked after turn 1 and waiting',
      records(run('r1'), { turns: [toolTurn(1, 0)], approvals: [{ ...budgetApproval(1), turn: 1 }] }),
      ['a.run', 't000001.1.model', 't000001.2.budget', 't000001.x01.0.approval'],
    ],
    [
      'a failure by accident is not the end: recovery resumes it',
      records(run('r1', { status: 'failed', error: { error: 'Agent.Transient', cause: 'retries ran out' } }), { turns: [toolTurn(1, 0)] }),
      ['a.run', 't000001.1.model', 't000001.2.budget'],
    ],
    [
      'a failure by decision is the end',
      records(run('r1', { status: 'failed', error: { error: 'Agent.InvalidInput', cause: 'bad input' }, finishedAt: at(9).toISOString() }), { turns: [toolTurn(1, 0)] }),
      ['a.run', 't000001.1.model', 't000001.2.budget', 'z.run'],
    ],
  ])('%s', (_, given, expected) => {
    const events = settledEvents(given);
    expect(ids(events)).toEqual(expected);
    for (const event of events) expect(event.id).toMatch(EVENT_ID);
  });

  it('names the retries the ledger recorded, and a refused call as refused', () => {
    const events = settledEvents(records(finished(), { turns: [toolTurn(1, 2)], calls: [done(1, 1, { attempts: 3 }), done(1, 2, { outcome: 'expired' })] }));
    expect(events.find((event) => event.id === 't000001.c001.3.result')).toMatchObject({ type: 'tool.result', data: { attempts: 3, outcome: 'ok', result: '{"n":1}' } });
    expect(events.find((event) => event.id === 't000001.c002.3.result')).toMatchObject({ type: 'tool.refused', data: { outcome: 'expired' } });
    expect(events.at(-1)).toMatchObject({ type: 'run.finished', data: { status: 'succeeded' } });
  });

  it('out-of-order completion between two reads: the second read continues exactly where the first stopped', () => {
    const base = { turns: [toolTurn(1, 3)] };
    // Read 1: call 3 and call 2 finished, call 1 in flight.
    const first = settledEvents(records(run('r1'), { ...base, calls: [claimed(1, 1), done(1, 2), done(1, 3)] }));
    expect(ids(first).at(-1)).toBe('t000001.c001.2.started');
    // Read 2: call 1 finished, the next turn recorded.
    const second = settledEvents(records(run('r1'), { turns: [...base.turns, toolTurn(2, 0)], calls: [done(1, 1), done(1, 2), done(1, 3)] }));
    const resumed = eventsAfter(second, ids(first).at(-1));
    expect(ids([...first, ...resumed])).toEqual(ids(second));
    expect(ids(resumed)).toEqual(['t000001.c001.3.result', 't000001.c002.2.started', 't000001.c002.3.result', 't000001.c003.2.started', 't000001.c003.3.result', 't000002.1.model', 't000002.2.budget']);
  });

  // Every order the parallel calls' writes may land in: each read's settled list is a prefix of the
  // final one (an event once sent is never preceded by a later one), and ids only increase.
  it('any order of parallel writes: every read is a prefix of the final list', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let trial = 0; trial < 200; trial += 1) {
      const writes = timeline(random);
      const state: { run: RunRecord; turns: TurnRecord[]; calls: Map<string, ToolCallRecord>; approvals: Map<string, ApprovalRecord> } = { run: run('r1'), turns: [], calls: new Map(), approvals: new Map() };
      const snapshot = () => records(state.run, { turns: [...state.turns], calls: [...state.calls.values()], approvals: [...state.approvals.values()] });
      const reads: string[][] = [];
      for (const write of writes) {
        write(state);
        reads.push(ids(settledEvents(snapshot())));
      }
      const final = reads.at(-1)!;
      expect(final.at(-1)).toBe('z.run');
      expect([...final].sort()).toEqual(final);
      for (const read of reads) expect(final.slice(0, read.length)).toEqual(read);
    }
  });
});

/**
 * The writes of a run of two turns (turn 1: three parallel calls, call 2 approved first), with the
 * parallel calls' writes interleaved at random, each call's own writes in their order.
 */
function timeline(random: () => number) {
  type State = { run: RunRecord; turns: TurnRecord[]; calls: Map<string, ToolCallRecord>; approvals: Map<string, ApprovalRecord> };
  const perCall: ((state: State) => void)[][] = [1, 2, 3].map((c) => {
    const key = `1:${c}`;
    const writes: ((state: State) => void)[] = [];
    if (c === 2) {
      writes.push((s) => s.approvals.set(key, approval({ turn: 1, call: 2 })));
      writes.push((s) => s.approvals.set(key, approval({ turn: 1, call: 2, status: 'approved', decidedBy: 'local:ana', decidedVia: 'cli', decidedAt: at(4).toISOString() })));
    }
    writes.push((s) => s.calls.set(key, claimed(1, c)));
    writes.push((s) => s.calls.set(key, done(1, c)));
    return writes;
  });
  const interleaved: ((state: State) => void)[] = [];
  while (perCall.some((writes) => writes.length > 0)) {
    const open = perCall.filter((writes) => writes.length > 0);
    interleaved.push(open[Math.floor(random() * open.length)]!.shift()!);
  }
  return [
    (s: State) => s.turns.push(toolTurn(1, 3)),
    ...interleaved,
    // A crash, and a recovery that took the run over after turn 1.
    (s: State) => (s.run = { ...s.run, executions: ['arn:1', 'arn:2'], attachments: [{ execution: 1, at: at(30).toISOString(), modelTurns: 1 }] }),
    (s: State) => s.turns.push(toolTurn(2, 0)),
    (s: State) => (s.run = { ...s.run, status: 'succeeded', finishedAt: at(40).toISOString() }),
  ];
}

describe('eventsAfter', () => {
  const events = settledEvents(records(finished(), { turns: [toolTurn(1, 1)], calls: [done(1, 1)] }));

  it('without a resume point: all of them', () => expect(eventsAfter(events, undefined)).toEqual(events));
  it('after an event: exactly those after it', () => expect(ids(eventsAfter(events, 't000001.c001.2.started'))).toEqual(['t000001.c001.3.result', 'z.run']));
  it('after the last: none', () => expect(eventsAfter(events, 'z.run')).toEqual([]));
  it.each([
    ['an id the run does not have', 't000009.1.model', /after: the run has no event t000009\.1\.model/],
    ['a malformed id', '42', /after: "42" is not an event id/],
    ['a timestamp', '2026-12-02T07:00:00Z', /is not an event id/],
  ])('fails when the resume point is %s', (_, id, message) => {
    expect(() => eventsAfter(events, id)).toThrow(UnknownEventId);
    expect(() => eventsAfter(events, id)).toThrow(message);
  });
  it('names the field it was given in', () => expect(() => eventsAfter(events, 'x', 'Last-Event-ID')).toThrow(/^Last-Event-ID: /));
});
