import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool } from '../../lambdas/define.js';

/** An agent's budgets are checked when it is defined, naming `budgets`: before, each run's start failed as "invalid run config". */
const look = defineTool({ name: 'look', description: 'Looks.', input: z.object({}), effect: 'read', execute: async () => ({}) });
const agent = (budgets: unknown) => defineAgent({ name: 'a', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p', tools: [look], budgets: budgets as never });

describe('defineAgent: budgets', () => {
  it.each([
    ['maxSteps is not positive', { maxSteps: 0 }, /^defineAgent a: budgets: .*maxSteps/],
    ['maxDollars is negative', { maxDollars: -1 }, /^defineAgent a: budgets: .*maxDollars/],
    ['a budget is misspelt', { maxStep: 3 }, /^defineAgent a: budgets: .*maxStep/],
  ])('fails when %s', (_case, budgets, message) => {
    expect(() => agent(budgets)).toThrow(message);
  });

  it('takes budgets within the run config', () => {
    expect(() => agent({ maxSteps: 20, maxDollars: 1, onBudgetExceeded: 'ask' })).not.toThrow();
  });
});
