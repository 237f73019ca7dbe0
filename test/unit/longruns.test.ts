import { describe, expect, it } from 'vitest';
import { executionChain, handedOffTo, mustHandOff, siblingArn, successorName } from '../../lambdas/guards/history.js';
import type { TurnRecord } from '../../lambdas/records/ledger-records.js';
import { compactedView, compactionDue, keepWrites } from '../../lambdas/conversation/compaction.js';

const SM = 'arn:aws:states:us-east-1:000000000000:execution:app-agent';
const arn = (name: string) => `${SM}:${name}`;

describe('continue-as-new: the chain', () => {
  it('names successors <runId>-c<n>, within 80 characters for a long run id', () => {
    expect(successorName('r1', 3)).toBe('r1-c3');
    const long = successorName('x'.repeat(80), 12);
    expect(long.length).toBe(80);
    expect(long.endsWith('-c12')).toBe(true);
    expect(successorName('x'.repeat(80), 12)).toBe(long);
  });

  it('finds the successor an execution handed off to, and tells handoffs from resumes', () => {
    const run = { runId: 'r1', executions: [arn('r1'), arn('r1-c1'), arn('r1-recovery-1'), arn('r1-c3')] };
    expect(handedOffTo(run, arn('r1'))).toBe(arn('r1-c1'));
    expect(handedOffTo(run, arn('r1-c1'))).toBeUndefined(); // resumed by a recovery, not handed off
    expect(handedOffTo(run, arn('r1-recovery-1'))).toBe(arn('r1-c3'));
    expect(handedOffTo(run, arn('r1-c3'))).toBeUndefined();
    expect(executionChain(run).map((link) => link.via)).toEqual(['start', 'handoff', 'resume', 'handoff']);
    expect(siblingArn(arn('r1'), 'r1-c1')).toBe(arn('r1-c1'));
  });

  it('hands off at the threshold, not before', () => {
    expect(mustHandOff(19_999, 20_000)).toBe(false);
    expect(mustHandOff(20_000, 20_000)).toBe(true);
  });
});

const turn = (n: number, input: number, extra: Partial<TurnRecord> = {}): TurnRecord => ({
  kind: 'turn',
  runId: 'r1',
  turn: n,
  model: 'm',
  content: [{ type: 'text', text: `turn ${n}` }],
  stopReason: 'tool_use',
  usage: { input_tokens: input, output_tokens: 1 },
  costMicros: 0,
  latencyMs: 0,
  recordedAt: '2026-11-30T00:00:00Z',
  ...extra,
});

describe('context compaction: the decisions', () => {
  const agent = { contextWindow: 1_000, compaction: { share: 0.5, keepRecentTurns: 2 } };

  it('compacts when the last turn sent the share of the window, covering all but the recent turns', () => {
    expect(compactionDue(agent, [turn(1, 100), turn(2, 499)], 3)).toBeUndefined();
    expect(compactionDue(agent, [turn(1, 100), turn(2, 300), turn(3, 400), turn(4, 500)], 5)).toEqual({ covers: 2 });
    expect(compactionDue({}, [turn(1, 100_000)], 2)).toBeUndefined(); // no contextWindow: never
  });

  it('does not compact right after a compaction, nor twice over the same turns', () => {
    const compacted = turn(5, 900, { stopReason: 'compaction', compaction: { covers: 2 } });
    expect(compactionDue(agent, [turn(1, 1), turn(2, 1), turn(3, 1), turn(4, 600), compacted], 6)).toBeUndefined();
    expect(compactionDue(agent, [turn(1, 1), turn(2, 1), turn(3, 1), turn(4, 1), compacted, turn(6, 600)], 7)).toEqual({ covers: 4 });
    expect(compactionDue({ contextWindow: 1_000, compaction: { share: 0.5, keepRecentTurns: 4 } }, [turn(1, 1), turn(2, 1), compacted, turn(6, 600)], 7)).toBeUndefined();
  });

  it('sends the prompt and the latest summary, then the turns after what it covers (never a compaction turn)', () => {
    const turns = [turn(1, 1), turn(2, 1), turn(3, 1, { stopReason: 'compaction', compaction: { covers: 1 }, content: [{ type: 'text', text: 'S1' }] }), turn(4, 1)];
    const view = compactedView({ prompt: 'P' }, turns);
    expect(view.opening).toBe('P\n\n[harness] Summary of turns 1-1 (compacted at turn 3):\nS1');
    expect(view.turns.map((t) => t.turn)).toEqual([2, 4]);
    expect(compactedView({ prompt: 'P' }, [turn(1, 1)])).toEqual({ opening: 'P', turns: [turn(1, 1)] });
  });

  it('keeps every write call verbatim by default, and nothing for reads', () => {
    const kept = keepWrites([
      { turn: 1, call: 1, name: 'lookup', args: { id: 1 }, status: 'completed', outcome: 'ok', result: '{}', effect: 'read' },
      { turn: 2, call: 1, name: 'pay', args: { id: 7 }, status: 'completed', outcome: 'ok', result: '{"paid":7}', effect: 'write' },
    ]);
    expect(kept).toContain('turn 2 call 1: pay {"id":7} → ok: {"paid":7}');
    expect(kept).not.toContain('lookup');
  });
});
