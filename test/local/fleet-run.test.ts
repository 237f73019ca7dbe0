/**
 * Agents 0 and 19 of a 20-agent app (issue 34) each run in the twin on the template CloudFormation
 * would deploy for them: the parent's shared resources (the ledger, the control plane) and the
 * nested stack that holds the agent, its parameters as the parent passes them (bench/deploy.ts
 * agentView). The twin authorizes every call of the run against those roles; a run that needed
 * another agent's grants, or the stack's shared ones it lacks, is refused. Then each agent's
 * functions are refused the other agent's records that are its own (effects, state machine).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { agentView } from '../../bench/deploy.js';
import { deploy, physicalNames } from '../../local/aws/iam/deployment.js';
import { ledgerTableArn } from '../../local/aws/iam/dynamodb.js';
import { evaluatePolicies } from '../../local/aws/iam/policy.js';
import { stackRoles } from '../../local/aws/iam/roles.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { fleetOnce } from '../support/fleet-once.js';
import { expiringApprovals } from '../support/manual-clock.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let views: Record<number, CfnTemplateJson>;

beforeAll(async () => {
  const fleet = await fleetOnce(20, 4);
  views = { 0: agentView(fleet, 'Agent0') as CfnTemplateJson, 19: agentView(fleet, 'Agent19') as CfnTemplateJson };
}, 120_000);

/** The refund reconciler deployed as agent `index` of the fleet (its name is the deployment's). */
const agentNamed = (index: number) => ({ ...refundReconciler, name: `agent-${index}` });

describe('agents 0 and 19 of a 20-agent app, each in the twin', () => {
  it.each([0, 19])('runs agent %i to the end on its own deployed template, every call authorized, none refused', async (index) => {
    const template = views[index]!;
    expect(Object.values(template.Resources!).filter((resource) => resource.Type === 'AWS::StepFunctions::StateMachine')).toHaveLength(1);
    const h: Harness = await startHarness({ recovery: false, template, agent: agentNamed(index) as never, ...expiringApprovals() });
    cleanups.push(() => h.stack.close());
    expect(h.stack.stateMachineArn).toMatch(new RegExp(`:stateMachine:Fleet-agent-${index}$`));
    const finished = await h.run({ runId: `fleet-${index}`, input: sampleInput, config: { approvalTimeoutSeconds: 1 } });
    expect(finished.status, JSON.stringify({ error: (finished as { error?: unknown }).error, cause: (finished as { cause?: unknown }).cause })).toBe('SUCCEEDED');
    expect(h.stack.engine.iamDecisions()).toMatchObject({ denied: 0 });
    expect((await h.stack.ledger.getRun(`fleet-${index}`))?.agent).toBe(`agent-${index}`);
  }, 120_000);

  it("refuses agent 0's functions agent 19's effects and state machine, and agent 19's agent 0's", () => {
    for (const [own, other] of [
      [0, 19],
      [19, 0],
    ] as const) {
      const template = views[own]!;
      const deployment = deploy(template);
      const table = ledgerTableArn(template, physicalNames(template, deployment))!;
      const roles = [...stackRoles(template, deployment).roles.values()].filter((role) => role.id.startsWith(`Agent${own}`) && role.policies.length > 0);
      expect(roles.length).toBeGreaterThan(5);
      for (const role of roles) {
        for (const pk of [`EFFECT#agent-${other}:issue_refund:rr_1`, `AGG#agent-${other}:issue_refund:c_1`]) {
          for (const action of ['dynamodb:GetItem', 'dynamodb:PutItem']) expect(evaluatePolicies(role.policies, { action, resource: table, context: { 'dynamodb:LeadingKeys': [pk] } }), `${role.id} ${action} ${pk}`).not.toBe('Allowed');
        }
        for (const action of ['states:StartExecution', 'states:SendTaskSuccess']) {
          expect(evaluatePolicies(role.policies, { action, resource: `arn:aws:states:us-east-1:000000000000:stateMachine:Fleet-agent-${other}` }), `${role.id} ${action}`).not.toBe('Allowed');
        }
      }
    }
  });
});
