import type { Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { FleetBudget, type FleetLimits } from '../lambdas/records/fleet.js';
import { problemsOf } from '../lambdas/shared/validation.js';
import { topLevelStack } from './top-level-stack.js';

/**
 * A fleet budget as a deployment sets it (lambdas/records/fleet.ts): on an agent
 * (`DurableAgentProps.fleetBudget`, `SavepointStack.addAgent`) its own limits, and on a
 * `SavepointStack` (`SavepointStackProps.fleetBudget`) the limits all its agents share. The model
 * steps are given it as the `FLEET_BUDGET` variable; a run or its model never sets it.
 */
export interface FleetBudgetProps {
  /**
   * Dollars the runs may spend on model calls per UTC day, together: each call is reserved before
   * it is sent, so the day's spending never goes past it, however many runs there are.
   * @example 200
   * @default no daily limit
   */
  readonly dollarsPerDay?: number;
  /**
   * Runs that may hold a share of the budget at once (a run holds one from its first model call of
   * the day until it ends).
   * @example 100
   * @default no limit
   */
  readonly concurrentRuns?: number;
  /**
   * What a model call the budget cannot take does: `'stop'` the run, with the reason in its
   * record (`savepoint status`, the console) and the `FleetBudgetSpent` alarm; or `'wait'` for
   * budget — a share another run gives back, or the next day — retrying every minute.
   * @default 'stop'
   */
  readonly whenSpent?: 'stop' | 'wait';
  /**
   * The most a run takes from the day's budget at once, in dollars: larger means fewer writes to
   * the day's counter item (a DynamoDB hot key), smaller leaves less held by runs that end early.
   * @default 0.25
   */
  readonly leaseDollars?: number;
}

/** The stacks' own fleet budgets (`SavepointStackProps.fleetBudget`), read by their agents. */
const STACK_BUDGETS = new WeakMap<Stack, FleetBudgetProps>();

/** Sets the fleet budget every agent of `stack` shares (SavepointStack). */
export function setStackFleetBudget(stack: Stack, budget: FleetBudgetProps | undefined): void {
  if (budget) STACK_BUDGETS.set(stack, budget);
}

const limitsOf = (props: FleetBudgetProps): FleetLimits => ({
  ...(props.dollarsPerDay !== undefined && { dollarsPerDay: props.dollarsPerDay }),
  ...(props.concurrentRuns !== undefined && { concurrentRuns: props.concurrentRuns }),
});

/**
 * The `FLEET_BUDGET` variable of the model-calling steps (lambdas/adapters/aws-deps.ts), or none:
 * the agent's limits and its stack's (keyed by the stack's name), checked at synth, naming the prop.
 */
export function fleetBudgetEnvironment(scope: IConstruct, id: string, agent: FleetBudgetProps | undefined): Record<string, string> {
  const top = topLevelStack(scope);
  const stack = STACK_BUDGETS.get(top);
  if (!agent && !stack) return {};
  const budget = {
    ...(agent && { agent: limitsOf(agent) }),
    ...(stack && { stack: { name: top.stackName, ...limitsOf(stack) } }),
    ...((agent?.whenSpent ?? stack?.whenSpent) !== undefined && { whenSpent: agent?.whenSpent ?? stack?.whenSpent }),
    ...((agent?.leaseDollars ?? stack?.leaseDollars) !== undefined && { leaseDollars: agent?.leaseDollars ?? stack?.leaseDollars }),
  };
  const parsed = FleetBudget().safeParse(budget);
  if (!parsed.success) throw new Error(`DurableAgent ${id}: fleetBudget: ${problemsOf(parsed.error)}`);
  return { FLEET_BUDGET: JSON.stringify(parsed.data) };
}
