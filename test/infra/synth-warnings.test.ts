import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { SavepointStack } from '../../infra/stack.js';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { assertionApp } from './example-template.js';

/**
 * `npx cdk synth` of a user's app (docs/operating-on-aws.md) prints every warning its constructs
 * add: savepoint's own add none, so a warning a user sees is about their app. Before, each synth
 * printed ten (an ignored `allowTestInvoke` on each route, a dashboard expression's period
 * overriding its metric's).
 */
describe("a SavepointStack's synth", () => {
  it('warns of nothing', () => {
    const stack = new SavepointStack(assertionApp(), 'Agents');
    stack.addAgent('Notes', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler });
    const warnings = Annotations.fromStack(stack).findWarning('*', Match.anyValue());
    expect(warnings.map((warning) => `${warning.id}: ${JSON.stringify(warning.entry.data)}`)).toEqual([]);
  });
});
