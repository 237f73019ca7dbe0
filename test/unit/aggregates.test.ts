import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool, type RunFacts } from '../../lambdas/define.js';
import { aggregateApproval } from '../../lambdas/tools/aggregates.js';

// The harness's declared limits, as a table: a tool's aggregate per key, the agent's run cap.
const pay = defineTool({
  name: 'pay',
  description: 'Pays.',
  input: z.object({ account: z.string(), cents: z.number().int() }),
  effect: 'write',
  aggregate: { key: (args) => args.account, amount: (args) => args.cents, threshold: 500 },
  execute: async () => ({}),
});
const agent = { tools: [pay], approvals: { maxUnapprovedPerRun: 1_000 } };
const paid = (account: string, cents: number, outcome?: 'ok' | 'rejected') => ({ turn: 1, call: 1, name: 'pay', args: { account, cents }, ...(outcome && { outcome }) });
const facts = (...calls: RunFacts['calls']): RunFacts => ({ calls });

describe('aggregateApproval', () => {
  it.each([
    ['a call within the threshold, nothing before', facts(), { account: 'a', cents: 500 }, undefined],
    ['the part that takes its key past the threshold', facts(paid('a', 300, 'ok')), { account: 'a', cents: 201 }, { totalForKey: 501 }],
    ['a part alongside (no outcome yet) counts as made', facts(paid('a', 300)), { account: 'a', cents: 201 }, { totalForKey: 501 }],
    ['a refused call does not count', facts(paid('a', 300, 'rejected')), { account: 'a', cents: 201 }, undefined],
    ['another key adds apart', facts(paid('b', 400, 'ok')), { account: 'a', cents: 400 }, undefined],
    ['the run’s total past maxUnapprovedPerRun, whatever the key', facts(paid('b', 400, 'ok'), paid('c', 400, 'ok')), { account: 'a', cents: 300 }, { movedInRun: 1_100 }],
  ])('%s', (_name, given, args, expected) => {
    const verdict = aggregateApproval(agent, pay, args, given);
    if (expected === undefined) expect(verdict).toBeUndefined();
    else expect(verdict?.details).toMatchObject(expected);
  });

  it('asks a person when the declared functions cannot read the arguments', () => {
    expect(aggregateApproval(agent, pay, { account: '', cents: 1 }, facts())).toMatchObject({ summary: expect.stringContaining('cannot be read') });
  });
});

describe('declaring limits', () => {
  const tool = (effect: 'read' | 'write', threshold = 1) => () =>
    defineTool({ name: 't', description: 't', input: z.object({ n: z.number() }), effect, aggregate: { key: () => 'k', amount: (args) => args.n, threshold }, execute: async () => ({}) });
  it('fails when a read tool declares an aggregate', () => expect(tool('read')).toThrow(/aggregate is for write tools/));
  it('fails when the threshold is not a whole number ≥ 0', () => expect(tool('write', 0.5)).toThrow(/aggregate.threshold/));
  it('fails when maxUnapprovedPerRun is negative', () =>
    expect(() => defineAgent({ name: 'a', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => '', tools: [], approvals: { maxUnapprovedPerRun: -1 } })).toThrow(/approvals.maxUnapprovedPerRun/));
});
