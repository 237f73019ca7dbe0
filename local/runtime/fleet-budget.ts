import * as z from 'zod';
import { FleetBudget, FleetLimits } from '../../lambdas/records/fleet.js';
import { schemaOnFirstUse } from '../../lambdas/shared/on-first-use.js';

/**
 * A fleet budget for the local stack (`savepoint run` / `resume` / `serve --fleet-budget <file>`,
 * `LocalStackOptions.fleetBudget`): the deployment's `FleetBudget`, whose stack is the local
 * template's — its counters named for that stack, as the construct names them on AWS
 * (infra/fleet-budget.ts), so that the twin's IAM lets the agent's roles reach them.
 *
 *   { "agent": { "dollarsPerDay": 5, "concurrentRuns": 20 }, "stack": { "dollarsPerDay": 20 }, "whenSpent": "stop" }
 */
export const LocalFleetBudget = schemaOnFirstUse(() => FleetBudget().extend({ stack: FleetLimits().optional() }).strict());
export type LocalFleetBudget = z.infer<ReturnType<typeof LocalFleetBudget>>;

/**
 * The budget the steps get: the stack's limits under the name of the template's stack, read from
 * the state machine's name (`<stack>-<agent>`, infra/durable-agent.ts).
 */
export function localFleetBudget(budget: LocalFleetBudget | undefined, stateMachineArn: string, agentName: string): FleetBudget | undefined {
  if (!budget) return undefined;
  const { stack, ...rest } = budget;
  if (!stack) return rest;
  const machine = stateMachineArn.split(':')[6] ?? '';
  const name = machine.endsWith(`-${agentName}`) ? machine.slice(0, -agentName.length - 1) : machine;
  return { ...rest, stack: { ...stack, name } };
}
