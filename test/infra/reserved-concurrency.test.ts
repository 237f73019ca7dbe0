import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { assertionApp } from './example-template.js';

/**
 * `reservedConcurrency` on the construct: a step's function reserves that much of the account's
 * Lambda concurrency (its ceiling too); the local twin throttles past it (test/local/lambda-concurrency.test.ts).
 */
function reservations(template: Template): Record<string, number | undefined> {
  const functions = Object.values(template.findResources('AWS::Lambda::Function')) as { Properties: { ReservedConcurrentExecutions?: number; Environment?: { Variables?: Record<string, string> } } }[];
  return Object.fromEntries(functions.flatMap((fn) => { const step = fn.Properties.Environment?.Variables?.['SAVEPOINT_STEP']; return step ? [[step, fn.Properties.ReservedConcurrentExecutions]] : []; }));
}

describe('reservedConcurrency on the construct', () => {
  it('reserves concurrency for the steps named, and for no other', () => {
    const stack = new SavepointStack(assertionApp(), 'Reserved');
    stack.addAgent('Agent', { agentName: 'reserved', entry: EXAMPLE_AGENTS.refundReconciler, reservedConcurrency: { 'call-tool': 20, 'call-model': 0 } });
    const byStep = reservations(Template.fromStack(stack));
    expect(byStep['call-tool']).toBe(20);
    expect(byStep['call-model']).toBe(0);
    expect(Object.entries(byStep).filter(([step]) => step !== 'call-tool' && step !== 'call-model').every(([, reserved]) => reserved === undefined)).toBe(true);
  });

  it('fails the synth on a step that does not exist or a count that is not a whole number ≥ 0, naming it', () => {
    const stack = new SavepointStack(assertionApp(), 'BadReserved');
    expect(() => stack.addAgent('Agent', { agentName: 'bad', entry: EXAMPLE_AGENTS.refundReconciler, reservedConcurrency: { 'call-tools': 2 } as never })).toThrow(/^DurableAgent Agent: reservedConcurrency\.call-tools: not a step/);
    expect(() => stack.addAgent('Other', { agentName: 'other', entry: EXAMPLE_AGENTS.refundReconciler, reservedConcurrency: { 'call-tool': 1.5 } })).toThrow(/^DurableAgent Other: reservedConcurrency\.call-tool: must be a whole number ≥ 0, got 1\.5/);
  });
});
