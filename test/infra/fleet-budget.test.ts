import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import type { FleetBudgetProps } from '../../infra/fleet-budget.js';
import { SavepointStack } from '../../infra/stack.js';
import { AlarmIds } from '../../infra/observability.js';
import { FleetBudget } from '../../lambdas/records/fleet.js';
import { MetricNames } from '../../lambdas/shared/metrics.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { assertionApp } from './example-template.js';

/**
 * A fleet budget as the deployment sets it (issue 34 item 4): the agent's `fleetBudget` and its
 * stack's reach the model steps as `FLEET_BUDGET` (and no other step), an alarm goes off when it
 * refuses a call, and a bad setting fails the synth naming it.
 */
function synth(stackBudget?: FleetBudgetProps, agentBudget?: FleetBudgetProps) {
  const app = assertionApp();
  const stack = new SavepointStack(app, 'Fleet', { ...(stackBudget && { fleetBudget: stackBudget }) });
  stack.addAgent('A', { agentName: 'refunds', entry: 'agent.ts', ...(agentBudget && { fleetBudget: agentBudget }) });
  return Template.fromStack(stack);
}

const environmentOf = (template: Template, step: string) =>
  (Object.values(template.findResources('AWS::Lambda::Function', { Properties: { Environment: { Variables: { SAVEPOINT_STEP: step } } } }))[0]!.Properties.Environment.Variables as Record<string, unknown>);

describe("a deployment's fleet budget", () => {
  it("gives CallModel and Compact the agent's and the stack's limits, the stack's counter named for the stack", () => {
    const template = synth({ dollarsPerDay: 500, whenSpent: 'wait' }, { dollarsPerDay: 200, concurrentRuns: 100 });
    for (const step of [Steps.CallModel, Steps.Compact]) {
      const budget = FleetBudget().parse(JSON.parse(String(environmentOf(template, step)['FLEET_BUDGET'])));
      expect(budget).toEqual({ agent: { dollarsPerDay: 200, concurrentRuns: 100 }, stack: { name: 'Fleet', dollarsPerDay: 500 }, whenSpent: 'wait' });
    }
    for (const step of [Steps.StartRun, Steps.BudgetCheck, Steps.CallTool, Steps.Finalize]) expect(environmentOf(template, step)['FLEET_BUDGET'], step).toBeUndefined();
  });

  it('raises the FleetBudgetSpent alarm on the first refused call, and has none without a budget', () => {
    const alarms = (template: Template) => Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((alarm) => alarm.Properties).filter((alarm) => alarm.MetricName === MetricNames.FleetBudgetSpent);
    const [alarm] = alarms(synth(undefined, { dollarsPerDay: 1 }));
    expect(alarm).toMatchObject({ Namespace: 'Savepoint', Statistic: 'Sum', Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', Dimensions: [{ Name: 'service', Value: 'refunds' }] });
    expect(alarm!.AlarmDescription).toContain(`Runbook: docs/operating-on-aws.md#${AlarmIds.FleetBudgetSpent.toLowerCase()}`);
    expect(alarm!.AlarmActions).toHaveLength(1);
    expect(alarms(synth({ concurrentRuns: 10 }))).toHaveLength(1);
    expect(alarms(synth())).toHaveLength(0);
    expect(environmentOf(synth(), Steps.CallModel)['FLEET_BUDGET']).toBeUndefined();
  });

  it.each([
    [{ dollarsPerDay: -1 }, /DurableAgent A: fleetBudget: agent\.dollarsPerDay: .*>0/],
    [{ concurrentRuns: 2.5 }, /DurableAgent A: fleetBudget: agent\.concurrentRuns: /],
    [{ dollarsPerDay: 1, whenSpent: 'never' as 'stop' }, /DurableAgent A: fleetBudget: whenSpent: /],
  ])('fails the synth on a bad setting (%j), naming it', (budget, message) => {
    expect(() => synth(undefined, budget)).toThrow(message);
  });
});
