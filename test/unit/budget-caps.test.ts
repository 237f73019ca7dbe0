import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { defineAgent, defineTool } from '../../lambdas/define.js';
import { budgetCeilings, overBudgetRequest } from '../../lambdas/runs/budget-caps.js';

/**
 * What a run's starter may ask for (issue 36 item 3): `POST /v1/runs` with
 * `"config":{"maxDollars":10000,"maxSteps":1000000}` was accepted with those limits. Each budget now
 * has a ceiling from the agent and the deployment; a request above it is refused, naming it.
 */
const defaults = { maxSteps: 400, maxTokens: 600_000, maxDollars: 5, maxWallSeconds: 14_400, maxTokensPerTurn: 2_048 };

describe('budgetCeilings', () => {
  it.each([
    ['the agent’s own budgets when neither caps them (a starter may lower, not raise)', {}, undefined, defaults],
    ['the agent’s own budgets it sets', { budgets: { maxDollars: 2, maxSteps: 100 } }, undefined, { ...defaults, maxDollars: 2, maxSteps: 100 }],
    ['the agent’s maxBudgets over its own budgets', { budgets: { maxDollars: 2 }, maxBudgets: { maxDollars: 20 } }, undefined, { ...defaults, maxDollars: 20 }],
    ['the deployment’s, where the agent names no cap', { budgets: { maxDollars: 2 } }, { maxDollars: 50 }, { ...defaults, maxDollars: 50 }],
    ['the lower of the two where both cap a budget', { maxBudgets: { maxDollars: 20, maxSteps: 1_000 } }, { maxDollars: 50, maxSteps: 500 }, { ...defaults, maxDollars: 20, maxSteps: 500 }],
  ])('are %s', (_case, agent, deployment, expected) => {
    expect(budgetCeilings(agent, deployment)).toEqual(expected);
  });
});

describe('overBudgetRequest', () => {
  const ceilings = budgetCeilings({});

  it('refuses what the red team asked for, naming each budget, its ceiling and what raises it', () => {
    const refused = overBudgetRequest({ maxDollars: 10_000, maxSteps: 1_000_000 }, ceilings);
    expect(refused).toMatchObject({ name: 'Agent.InvalidInput' });
    expect(refused!.message).toBe(
      'config.maxSteps: 1000000 is above the most a run of this agent may ask for (400; the agent\'s or the deployment\'s maxBudgets.maxSteps raises it); ' +
        'config.maxDollars: 10000 is above the most a run of this agent may ask for (5; the agent\'s or the deployment\'s maxBudgets.maxDollars raises it)',
    );
  });

  it('takes a request at its ceiling, below it, or naming no budget (an equality case: > not ≥)', () => {
    expect(overBudgetRequest({ maxDollars: 5, maxSteps: 400, maxWallSeconds: 60 }, ceilings)).toBeUndefined();
    expect(overBudgetRequest({ maxDollars: 5.000001 }, ceilings)).toBeDefined();
    expect(overBudgetRequest({ approvalTimeoutSeconds: 600_000, onBudgetExceeded: 'ask' }, ceilings)).toBeUndefined();
  });
});

describe('defineAgent maxBudgets', () => {
  const tool = defineTool({ name: 'noop', description: 'Does nothing.', input: z.object({}), effect: 'read', execute: async () => ({}) });
  const agent = (fields: object) => () => defineAgent({ name: 'capped', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p', tools: [tool], ...fields });

  it('fails when a cap is not a budget the harness knows, or not a positive number, naming it', () => {
    expect(agent({ maxBudgets: { maxCoffees: 3 } })).toThrow(/defineAgent capped: maxBudgets: .*maxCoffees/);
    expect(agent({ maxBudgets: { maxDollars: -1 } })).toThrow(/defineAgent capped: maxBudgets: .*maxDollars/);
  });

  it('fails when the agent’s own budget is above its cap', () => {
    expect(agent({ budgets: { maxSteps: 500 }, maxBudgets: { maxSteps: 450 } })).toThrow('defineAgent capped: budgets.maxSteps (500) is above maxBudgets.maxSteps (450)');
    expect(agent({ budgets: { maxSteps: 450 }, maxBudgets: { maxSteps: 450 } })).not.toThrow();
  });
});
