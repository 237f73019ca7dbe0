import type { AgentDefinition } from '../define.js';
import { CAPPED_BUDGETS, RunConfig, type BudgetCaps, type CappedBudget } from '../records/ledger-records.js';
import { InvalidInputError } from '../shared/errors.js';

/**
 * What a run's starter may ask for. A run request's `config` may set the run's budgets — and a
 * starter is not its agent's owner: an application, a chat front end, a schedule, a person with
 * access to the runs API. So each budget has a ceiling: the lower of the agent's `maxBudgets` and
 * the deployment's (the construct's `maxBudgets`, `LocalStackOptions.maxBudgets`), and where
 * neither names it, the agent's own budget (a starter may lower it, not raise it). A request above
 * a ceiling is refused before anything starts, naming the budget: never raised silently, nor
 * clamped (the starter would believe it got what it asked for). A budget the request leaves to the
 * agent is held within the ceiling too (`withinCeilings`): the deployment's `maxBudgets` is a cap
 * on every run, also one whose starter asks for nothing.
 *
 *   ceiling(b) = min(agent.maxBudgets[b], deployment.maxBudgets[b])   the one set, if only one is
 *              = the agent's own b                                    if neither is
 */
export function budgetCeilings(agent: Pick<AgentDefinition, 'budgets' | 'maxBudgets'>, deployment: BudgetCaps = {}): Record<CappedBudget, number> {
  const own = RunConfig().parse({ ...agent.budgets });
  return Object.fromEntries(
    CAPPED_BUDGETS.map((budget) => {
      const caps = [agent.maxBudgets?.[budget], deployment[budget]].filter((cap) => cap !== undefined);
      return [budget, caps.length > 0 ? Math.min(...caps) : own[budget]];
    }),
  ) as Record<CappedBudget, number>;
}

/**
 * An InvalidInputError naming each budget of `requested` above its ceiling, as `named` names it
 * (a run request's `config.<budget>`; the CLI's `--max-steps`); undefined when none is.
 */
export function overBudgetRequest(requested: Partial<RunConfig>, ceilings: Record<CappedBudget, number>, named: (budget: CappedBudget) => string = (budget) => `config.${budget}`): InvalidInputError | undefined {
  const over = CAPPED_BUDGETS.filter((budget) => requested[budget] !== undefined && requested[budget] > ceilings[budget]);
  if (over.length === 0) return undefined;
  return new InvalidInputError(over.map((budget) => `${named(budget)}: ${requested[budget]} is above the most a run of this agent may ask for (${ceilings[budget]}; the agent's or the deployment's maxBudgets.${budget} raises it)`).join('; '));
}

/**
 * A new run's budgets with each one its request leaves to the agent held within its ceiling. With
 * the agent known at synth (the construct's `agent` prop) a deployment's ceiling below the agent's
 * own budget fails the synth; without it the ceiling is first read here, at the run's start, and a
 * run that asks for nothing would otherwise run on the agent's higher budget, past the deployment's
 * cap. A budget the request names is the request's (above its ceiling, `overBudgetRequest` refuses it).
 */
export function withinCeilings(config: RunConfig, requested: Partial<RunConfig> | undefined, ceilings: Record<CappedBudget, number>): RunConfig {
  const held = { ...config };
  for (const budget of CAPPED_BUDGETS) if (requested?.[budget] === undefined && held[budget] > ceilings[budget]) held[budget] = ceilings[budget];
  return held;
}
