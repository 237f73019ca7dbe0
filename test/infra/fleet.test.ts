import { beforeAll, describe, expect, it } from 'vitest';
import { idleBill } from '../../bench/aws-cost.js';
import { DEPLOY_BOUNDS } from '../../bench/check.js';
import { idleMetrics, synthesizeFleet, type FleetTemplates } from '../../bench/deploy.js';
import { NESTED_STACK_OPERATION_RESOURCE_QUOTA, SECRET_RESOURCE_POLICY_MAX_CHARS, STACK_OUTPUT_QUOTA, STACK_RESOURCE_QUOTA } from '../../lambdas/shared/limits.js';
import { resourcePolicyChars } from '../../lambdas/shared/policy-quotas.js';
import { assertDeployable } from '../../local/aws/cloudformation-template.js';
import { fleetOnce } from '../support/fleet-once.js';

/**
 * Issue 34, item 1: a fleet on one deployment. What does not depend on an agent's code exists once
 * per stack (infra/control-plane.ts), so each agent added to a stack adds only its own part. Apps of
 * 1, 3 and 20 agents are synthesized through the public construct (`savepoint/cdk`); every template
 * must be one CloudFormation deploys — 500 resources and 200 outputs a template, 2,500 resources
 * one operation creates across a stack and its nested stacks
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html) —
 * and the twin must refuse one that is not, as CloudFormation would.
 */
type Json = FleetTemplates['parent'];
type Fleet = FleetTemplates;

/** Resources an added agent may bring: the benchmark's bound (bench/check.ts DEPLOY_BOUNDS: the target, 40). */
const PER_AGENT_BOUND = DEPLOY_BOUNDS.resourcesPerAgent;
/** Agents to a nested stack in the 20-agent app: they share its keys (infra/stack.ts `agentsInNestedStacks`). */
const PER_NESTED = 4;
/** Dollars a month an added agent may cost while idle (issue 34). */
const IDLE_PER_AGENT = 2;

const idleDollars = async (fleet: Fleet) => idleBill([fleet.parent, ...fleet.nested], (await idleMetrics(fleet)).length).dollars;

let one: Fleet;
let three: Fleet;
let oneNested: Fleet;
let twenty: Fleet;

beforeAll(async () => {
  one = await synthesizeFleet(1, false);
  three = await synthesizeFleet(3, false);
  oneNested = await synthesizeFleet(1, PER_NESTED);
  twenty = await fleetOnce(20, PER_NESTED);
  const perAgent = (three.resources - one.resources) / 2;
  const perNestedAgent = (twenty.resources - oneNested.resources) / 19;
  console.log(
    `fleet: 1 agent ${one.resources} resources, 3 agents ${three.resources} (${perAgent} per added agent); ` +
      `nested: 1 agent ${oneNested.resources}, 20 agents ${twenty.resources} (${perNestedAgent.toFixed(1)} per added agent), ` +
      `parent ${Object.keys(twenty.parent.Resources).length} resources and ${Object.keys(twenty.parent.Outputs ?? {}).length} outputs; synthesized in ${Math.round(twenty.ms)} ms`,
  );
}, 240_000);

describe('a fleet of agents on one stack', () => {
  it('adds at most PER_AGENT_BOUND resources per agent, in one stack and in nested stacks', () => {
    expect((three.resources - one.resources) / 2).toBeLessThanOrEqual(PER_AGENT_BOUND);
    expect((twenty.resources - oneNested.resources) / 19).toBeLessThanOrEqual(DEPLOY_BOUNDS.nestedResourcesPerAgent);
  });

  it('costs at most $2 a month per added agent while idle: alarms, dashboards, keys, secrets, schedules and the metrics the functions emit', async () => {
    expect(((await idleDollars(three)) - (await idleDollars(one))) / 2).toBeLessThanOrEqual(IDLE_PER_AGENT);
    expect(((await idleDollars(twenty)) - (await idleDollars(oneNested))) / 19).toBeLessThanOrEqual(IDLE_PER_AGENT);
    // The scheduled functions are the stack's: what they publish while idle is the stack's, not an agent's.
    expect(await idleMetrics(twenty)).toEqual(['ApprovalsWaiting service=Fleet', 'OldestApprovalAgeSeconds service=Fleet']);
  });

  it('keeps every template of 1, 3 and 20 agents within CloudFormation\'s quotas, as the twin checks them', () => {
    for (const fleet of [one, three]) expect(() => assertDeployable(fleet.parent)).not.toThrow();
    expect(() => assertDeployable(twenty.parent, twenty.nested)).not.toThrow();
    expect(twenty.resources).toBeLessThanOrEqual(NESTED_STACK_OPERATION_RESOURCE_QUOTA);
  });

  it('keeps the ledger seal key\'s resource policy one size whatever the number of agents: their roles by path, not one ARN each', () => {
    // An ARN per role of each agent filled Secrets Manager's 20,480 characters at about 17 agents.
    const sealPolicy = (fleet: Fleet) => {
      const [, policy] = Object.entries(fleet.parent.Resources).find(([id, resource]) => resource.Type === 'AWS::SecretsManager::ResourcePolicy' && id.startsWith('LedgerSealKeyPolicy'))!;
      return resourcePolicyChars(policy.Properties!['ResourcePolicy']);
    };
    expect(sealPolicy(twenty)).toBe(sealPolicy(oneNested));
    expect(sealPolicy(three)).toBe(sealPolicy(one));
    expect(sealPolicy(twenty)).toBeLessThan(SECRET_RESOURCE_POLICY_MAX_CHARS / 10);
  });

  it('is refused by the twin with a 201st output, a 501st resource, or a 2,501st in one operation', () => {
    const padded = (template: Json, what: 'Outputs' | 'Resources', count: number): Json => {
      const copy = structuredClone(template);
      const entries = (copy[what] ??= {}) as Record<string, unknown>;
      for (let index = Object.keys(entries).length; index < count; index++) entries[`Padding${index}`] = what === 'Outputs' ? { Value: 'x' } : { Type: 'AWS::SNS::Topic' };
      return copy;
    };
    expect(() => assertDeployable(padded(twenty.parent, 'Outputs', STACK_OUTPUT_QUOTA), twenty.nested)).not.toThrow();
    expect(() => assertDeployable(padded(twenty.parent, 'Outputs', STACK_OUTPUT_QUOTA + 1), twenty.nested)).toThrow('Template format error: Number of outputs, 201, is greater than maximum allowed, 200');
    const [first, ...rest] = twenty.nested;
    expect(() => assertDeployable(twenty.parent, [padded(first!, 'Resources', STACK_RESOURCE_QUOTA + 1), ...rest])).toThrow('Template format error: Number of resources, 501, is greater than maximum allowed, 500');
    // The tree as it is, with resources added to fill it to the operation's quota, then one more.
    const fill = NESTED_STACK_OPERATION_RESOURCE_QUOTA - twenty.resources;
    const extra = Array.from({ length: Math.ceil((fill + 1) / STACK_RESOURCE_QUOTA) }, (_, index) => ({ Resources: {} as Json['Resources'], index }));
    const spread = (total: number) => {
      let left = total;
      return extra.map(({ index }) => {
        const count = Math.min(STACK_RESOURCE_QUOTA, left);
        left -= count;
        return { Resources: Object.fromEntries(Array.from({ length: count }, (_, n) => [`Padding${index}x${n}`, { Type: 'AWS::SNS::Topic' }])) };
      });
    };
    expect(() => assertDeployable(twenty.parent, [...twenty.nested, ...spread(fill)])).not.toThrow();
    expect(() => assertDeployable(twenty.parent, [...twenty.nested, ...spread(fill + 1)])).toThrow(
      expect.objectContaining({ name: 'ValidationError', message: expect.stringMatching(/2501 resources across the stack and its nested stacks, more than the 2500/) }),
    );
  });
});
