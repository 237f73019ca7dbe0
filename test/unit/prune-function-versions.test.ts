/**
 * Which Lambda versions the pruner deletes (lambdas/steps/prune-function-versions.ts): the pure
 * selection as a table, the pins read from a definition, and the pass over a function's versions
 * with Lambda's answers (an alias's version refused, one already gone).
 */
import { describe, expect, it } from 'vitest';
import { createPruneFunctionVersions, createPruneStackVersions, functionVersionsToDelete, pinnedFunctionVersions, type FunctionVersions } from '../../lambdas/steps/prune-function-versions.js';
import type { StateMachineVersions } from '../../lambdas/steps/prune-versions.js';

const FN = 'arn:aws:lambda:eu-west-1:123456789012:function:Agent-CallTool';
const OTHER = 'arn:aws:lambda:eu-west-1:123456789012:function:Agent-Finalize';

describe('functionVersionsToDelete', () => {
  const cases: { name: string; listed: string[]; pinned: number[]; remove: number[]; kept: { number: number; why: 'pinned' | 'newer' }[] }[] = [
    { name: 'deletes the unpinned versions below the highest pinned', listed: ['$LATEST', '1', '2', '3', '4', '5', '6'], pinned: [1, 5, 6], remove: [2, 3, 4], kept: [{ number: 1, why: 'pinned' }, { number: 5, why: 'pinned' }, { number: 6, why: 'pinned' }] },
    { name: 'keeps a version above the highest pinned (a deploy in progress)', listed: ['1', '2', '3', '7'], pinned: [3], remove: [1, 2], kept: [{ number: 3, why: 'pinned' }, { number: 7, why: 'newer' }] },
    { name: 'never deletes $LATEST or a qualifier that is not a number', listed: ['$LATEST', 'live', '1', '2'], pinned: [2], remove: [1], kept: [{ number: 2, why: 'pinned' }] },
    { name: 'deletes nothing when nothing is pinned', listed: ['1', '2'], pinned: [], remove: [], kept: [{ number: 1, why: 'newer' }, { number: 2, why: 'newer' }] },
    { name: 'deletes nothing when only the newest is listed', listed: ['$LATEST', '9'], pinned: [9], remove: [], kept: [{ number: 9, why: 'pinned' }] },
  ];
  for (const { name, listed, pinned, remove, kept } of cases) {
    it(name, () => expect(functionVersionsToDelete(listed, new Set(pinned))).toEqual({ remove, kept }));
  }
});

describe('pinnedFunctionVersions', () => {
  it("collects every Task's numbered function version, nested states included, and nothing unqualified", () => {
    const definition = {
      StartAt: 'A',
      States: {
        A: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: `${FN}:4`, 'Payload.$': '$' }, Next: 'B' },
        B: { Type: 'Map', ItemProcessor: { StartAt: 'C', States: { C: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Arguments: { FunctionName: `${OTHER}:7` }, End: true } } }, Next: 'D' },
        D: { Type: 'Task', Resource: `${OTHER}:6`, Next: 'E' },
        E: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: FN }, Next: 'F' },
        F: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: `${FN}:$LATEST` }, End: true },
      },
    };
    expect(pinnedFunctionVersions(definition).sort()).toEqual([`${FN}:4`, `${OTHER}:6`, `${OTHER}:7`]);
  });
});

describe('createPruneFunctionVersions', () => {
  it('lists every function before it deletes a version: a function it may not list fails the pass with nothing deleted', async () => {
    const deleted: string[] = [];
    const functions: FunctionVersions = {
      list: async (arn) => {
        if (arn === OTHER) throw Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' });
        return ['1', '2'];
      },
      delete: async (arn, version) => (deleted.push(`${arn}:${version}`), 'deleted'),
    };
    await expect(createPruneFunctionVersions({ functions })([`${FN}:2`, `${OTHER}:2`])).rejects.toMatchObject({ name: 'AccessDeniedException' });
    expect(deleted).toEqual([]);
  });

  it("deletes each function's unpinned older versions with their qualifier, keeping one an alias references and counting one already gone", async () => {
    const calls: string[] = [];
    const functions: FunctionVersions = {
      list: async (arn) => (arn === FN ? ['$LATEST', '1', '2', '3', '4'] : ['$LATEST', '1', '2']),
      delete: async (arn, version) => {
        calls.push(`${arn}:${version}`);
        return version === '2' && arn === FN ? 'refused' : version === '1' && arn === OTHER ? 'gone' : 'deleted';
      },
    };
    const result = await createPruneFunctionVersions({ functions })([`${FN}:3`, `${OTHER}:2`, `${FN}:3`]);
    expect(calls).toEqual([`${FN}:1`, `${FN}:2`, `${OTHER}:1`]);
    expect(result).toEqual({
      deleted: [`${FN}:1`, `${OTHER}:1`],
      kept: [{ arn: `${FN}:3`, why: 'pinned' }, { arn: `${FN}:4`, why: 'newer' }, { arn: `${OTHER}:2`, why: 'pinned' }, { arn: `${FN}:2`, why: 'refused' }],
    });
  });
});

describe('createPruneStackVersions', () => {
  const machine = (name: string, pins: Record<number, string[]>, unreadable?: number): StateMachineVersions => {
    const arn = (n: number) => `arn:aws:states:eu-west-1:123456789012:stateMachine:${name}:${n}`;
    return {
      list: async () => Object.keys(pins).map((n) => ({ arn: arn(Number(n)), number: Number(n) })),
      aliased: async () => new Set([arn(Math.max(...Object.keys(pins).map(Number)))]),
      activity: async () => ({ running: false }),
      delete: async () => true,
      definition: async (versionArn) => {
        const n = Number(versionArn.split(':').pop());
        if (n === unreadable) throw Object.assign(new Error('rate exceeded'), { name: 'ThrottlingException' });
        return JSON.stringify({ StartAt: 'A', States: Object.fromEntries(pins[n]!.map((fn, i) => [`S${i}`, { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: fn } }])) });
      },
    };
  };
  const lambda = (deleted: string[]): FunctionVersions => ({ list: async () => ['$LATEST', '1', '2', '3'], delete: async (arn, version) => (deleted.push(`${arn}:${version}`), 'deleted') });
  const clock = { now: () => new Date('2026-12-02T12:00:00Z') };

  it("keeps a function's version any state machine of the stack pins: the pins are every agent's at once", async () => {
    const deleted: string[] = [];
    // Both agents invoke FN: one pins version 1, the other 3; version 2 is nobody's.
    const prune = createPruneStackVersions({ stateMachines: { a: { versions: machine('a', { 1: [`${FN}:1`] }) }, b: { versions: machine('b', { 1: [`${FN}:3`] }) } }, functions: async () => lambda(deleted), clock });
    const result = await prune();
    expect(deleted).toEqual([`${FN}:2`]);
    expect(result.functionVersions).toEqual({ deleted: [`${FN}:2`], kept: [{ arn: `${FN}:1`, why: 'pinned' }, { arn: `${FN}:3`, why: 'pinned' }] });
  });

  it("deletes no Lambda version when one state machine version's definition could not be read (its pins are unknown)", async () => {
    const deleted: string[] = [];
    const prune = createPruneStackVersions({ stateMachines: { a: { versions: machine('a', { 1: [`${FN}:1`], 2: [`${FN}:3`] }, 1) } }, functions: async () => lambda(deleted), clock });
    const result = await prune();
    expect(deleted).toEqual([]);
    expect(result.stateMachines['a']).toEqual({ error: 'ThrottlingException: rate exceeded' });
    expect(result.functionVersions).toEqual({ error: expect.stringMatching(/^not pruned/) });
  });
});
