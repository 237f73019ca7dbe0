import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { SavepointStack } from '../../infra/stack.js';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import type { ApprovalSettings } from '../../infra/approvals.js';
import refundReconciler from '../../agents/refund-reconciler/agent.js';
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

  describe('of an agent that can ask a person', () => {
    const warningsOf = (approvals: ApprovalSettings | undefined, approvalApi = true) => {
      const stack = new SavepointStack(assertionApp(), 'Agents');
      stack.addAgent('Refunds', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler, agent: refundReconciler, environment: { PAYMENTS_API_URL: 'https://payments.example.com' }, ...(approvals && { approvals }), approvalApi });
      return Annotations.fromStack(stack).findWarning('*', Match.anyValue()).map((warning) => String(warning.entry.data));
    };

    it('warns when nobody may decide its approvals, naming both settings', () => {
      expect(warningsOf(undefined)).toEqual([expect.stringMatching(/^DurableAgent Refunds: approvals: nobody may decide this agent's approvals .*approvals\.approvers .*approvals\.approverPrincipals/)]);
      // Principals without the API that takes their decisions decide nothing.
      expect(warningsOf({ approverPrincipals: { alice: 'arn:aws:iam::111122223333:role/Finance' } }, false)).toHaveLength(1);
    });

    it('warns of nothing when someone may: by link, or by IAM', () => {
      expect(warningsOf({ approvers: ['alice@example.com'] })).toEqual([]);
      expect(warningsOf({ approverPrincipals: { alice: 'arn:aws:iam::111122223333:role/Finance' } })).toEqual([]);
    });
  });
});
