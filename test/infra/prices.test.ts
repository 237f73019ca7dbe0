import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { awsDeps } from '../../lambdas/adapters/aws-deps.js';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { assertionApp } from './example-template.js';

/**
 * Issue 27 item 4: price overrides on the construct. The stack's and the agent's `prices` reach
 * every step function as PRICES (the same on all: prices are part of each run's fingerprint),
 * checked at synth; the functions parse them at cold start.
 */
const price = (input: number) => ({ inputPerMTok: input, outputPerMTok: input * 5, cacheWritePerMTok: input * 1.25, cacheReadPerMTok: input / 10 });

function stepEnvironments(template: Template): Record<string, Record<string, string>> {
  const functions = Object.values(template.findResources('AWS::Lambda::Function')) as { Properties: { Environment?: { Variables?: Record<string, string> } } }[];
  return Object.fromEntries(functions.flatMap((fn) => (fn.Properties.Environment?.Variables?.['SAVEPOINT_STEP'] ? [[fn.Properties.Environment.Variables['SAVEPOINT_STEP'], fn.Properties.Environment.Variables]] : [])));
}

describe('prices on the construct', () => {
  it("gives every step function the stack's prices with the agent's over them, model by model", () => {
    const stack = new SavepointStack(assertionApp(), 'Priced', { prices: { 'anthropic:claude-sonnet-4-5': price(2), 'openai:gpt-5': price(1) } });
    stack.addAgent('Agent', { agentName: 'priced', entry: EXAMPLE_AGENTS.refundReconciler, prices: { 'openai:gpt-5': price(4) } });
    const environments = stepEnvironments(Template.fromStack(stack));
    expect(Object.keys(environments).length).toBeGreaterThanOrEqual(9);
    // The functions the stack's agents share (infra/control-plane.ts) price nothing: no agent's table in their environment.
    const shared = new Set(['expire-approvals', 'sweep', 'prune-versions', 'recover-run', 'execution-stopped']);
    // The stack's API functions hold each agent's prices in its settings (infra/stack-api.ts).
    const api = new Set(['approval-callback', 'runs-api', 'run-events']);
    for (const [step, variables] of Object.entries(environments)) {
      if (shared.has(step)) expect(variables, step).not.toHaveProperty('PRICES');
      else if (api.has(step)) expect(JSON.parse(variables['AGENT_SETTINGS']!).priced.prices, step).toEqual({ 'anthropic:claude-sonnet-4-5': price(2), 'openai:gpt-5': price(4) });
      else expect(JSON.parse(variables['PRICES'] ?? 'null'), step).toEqual({ 'anthropic:claude-sonnet-4-5': price(2), 'openai:gpt-5': price(4) });
    }
  });

  it('sets no PRICES when neither sets any', () => {
    const stack = new SavepointStack(assertionApp(), 'Unpriced');
    stack.addAgent('Agent', { agentName: 'unpriced', entry: EXAMPLE_AGENTS.refundReconciler });
    for (const variables of Object.values(stepEnvironments(Template.fromStack(stack)))) expect(variables).not.toHaveProperty('PRICES');
  });

  it('fails the synth when a price is bad, naming the agent, the model and the field', () => {
    const stack = new SavepointStack(assertionApp(), 'BadPrices');
    expect(() => stack.addAgent('Agent', { agentName: 'bad-prices', entry: EXAMPLE_AGENTS.refundReconciler, prices: { 'openai:gpt-5': { ...price(1), outputPerMTok: -1 } } })).toThrow(
      /^DurableAgent Agent: prices: invalid price overrides: openai:gpt-5\.outputPerMTok: /,
    );
    expect(() => stack.addAgent('Other', { agentName: 'bad-spec', entry: EXAMPLE_AGENTS.refundReconciler, prices: { 'gpt-5': price(1) } })).toThrow(/^DurableAgent Other: prices: .*gpt-5/);
  });

  it('is read by the functions at cold start, and a malformed PRICES fails naming the variable', () => {
    expect(awsDeps({ PRICES: JSON.stringify({ 'openai:gpt-5': price(4) }) }).prices).toEqual({ 'openai:gpt-5': price(4) });
    expect(awsDeps({}).prices).toBeUndefined();
    expect(() => awsDeps({ PRICES: '{ "openai:gpt-5": ' })).toThrow(/^invalid Lambda environment: PRICES: not valid JSON/);
    expect(() => awsDeps({ PRICES: JSON.stringify({ 'openai:gpt-5': { ...price(1), cacheReadPerMTok: 'cheap' } }) })).toThrow(/^invalid Lambda environment: PRICES\.openai:gpt-5\.cacheReadPerMTok: /);
  });
});
