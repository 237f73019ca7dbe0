import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { awsDeps } from '../../lambdas/adapters/aws-deps.js';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { assertionApp } from './example-template.js';

/**
 * Issue 36 item 3: the deployment caps what a run request may ask for. The construct's
 * `maxBudgets` reaches the two functions that take run requests (StartRun, the runs API) as
 * MAX_BUDGETS, checked at synth; they parse it at cold start.
 */
function environmentOf(template: Template, step: string): Record<string, string> {
  const functions = Object.values(template.findResources('AWS::Lambda::Function')) as { Properties: { Environment?: { Variables?: Record<string, string> } } }[];
  return functions.find((fn) => fn.Properties.Environment?.Variables?.['SAVEPOINT_STEP'] === step)!.Properties.Environment!.Variables!;
}

describe('maxBudgets on the construct', () => {
  it('reaches StartRun and the runs API, and no other function', () => {
    const stack = new SavepointStack(assertionApp(), 'Capped');
    stack.addAgent('Agent', { agentName: 'capped', entry: EXAMPLE_AGENTS.refundReconciler, maxBudgets: { maxDollars: 20, maxSteps: 1_000 } });
    const template = Template.fromStack(stack);
    expect(JSON.parse(environmentOf(template, Steps.StartRun)['MAX_BUDGETS'] ?? 'null')).toEqual({ maxDollars: 20, maxSteps: 1_000 });
    // The stack's runs function holds each agent's ceilings in its settings (infra/stack-api.ts).
    expect(JSON.parse(environmentOf(template, Steps.RunsApi)['AGENT_SETTINGS'] ?? 'null')).toEqual({ capped: { maxBudgets: { maxDollars: 20, maxSteps: 1_000 } } });
    for (const step of [Steps.CallModel, Steps.CallTool, Steps.BudgetCheck]) expect(environmentOf(template, step), step).not.toHaveProperty('MAX_BUDGETS');
  });

  it('fails the synth when a ceiling is not a budget or not a positive number, naming the agent and the field', () => {
    const stack = new SavepointStack(assertionApp(), 'BadCaps');
    expect(() => stack.addAgent('Agent', { agentName: 'bad-caps', entry: EXAMPLE_AGENTS.refundReconciler, maxBudgets: { maxDollars: 0 } })).toThrow(/^DurableAgent Agent: maxBudgets: maxDollars: /);
    expect(() => stack.addAgent('Other', { agentName: 'bad-caps-2', entry: EXAMPLE_AGENTS.refundReconciler, maxBudgets: { maxCoffees: 1 } as never })).toThrow(/^DurableAgent Other: maxBudgets: .*maxCoffees/);
  });

  it("fails the synth when a ceiling is below the agent's own budget (a run started without config would get it), naming both", () => {
    const stack = new SavepointStack(assertionApp(), 'LowCaps');
    const agent = { name: 'low-caps', env: [], budgets: { maxSteps: 10 } };
    const props = { agentName: 'low-caps', entry: EXAMPLE_AGENTS.refundReconciler, agent };
    expect(() => stack.addAgent('Agent', { ...props, maxBudgets: { maxSteps: 3 } })).toThrow(/^DurableAgent Agent: maxBudgets\.maxSteps \(3\) is below agent low-caps's own maxSteps \(10\), which a run started without config gets/);
    // A budget the agent leaves to its default: the default is what its runs get.
    expect(() => stack.addAgent('Default', { ...props, maxBudgets: { maxDollars: 1 } })).toThrow(/^DurableAgent Default: maxBudgets\.maxDollars \(1\) is below agent low-caps's own maxDollars \(5, the default\)/);
    // At or above the agent's own budgets: a ceiling for what a starter may ask.
    expect(() => stack.addAgent('Within', { ...props, maxBudgets: { maxSteps: 10, maxDollars: 20 } })).not.toThrow();
  });

  it('is read at cold start, and a malformed MAX_BUDGETS fails naming the variable', () => {
    expect(awsDeps({ MAX_BUDGETS: JSON.stringify({ maxDollars: 20 }) }).maxBudgets).toEqual({ maxDollars: 20 });
    expect(awsDeps({}).maxBudgets).toBeUndefined();
    expect(() => awsDeps({ MAX_BUDGETS: '{' })).toThrow(/^invalid Lambda environment: MAX_BUDGETS: not valid JSON/);
    expect(() => awsDeps({ MAX_BUDGETS: JSON.stringify({ maxSteps: 'many' }) })).toThrow(/^invalid Lambda environment: MAX_BUDGETS\.maxSteps: /);
  });
});
