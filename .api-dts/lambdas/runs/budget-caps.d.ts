import type { AgentDefinition } from '../define.js';
import { RunConfig, type BudgetCaps, type CappedBudget } from '../records/ledger-records.js';
import { InvalidInputError } from '../shared/errors.js';
/**
 * What a run's starter may ask for. A run request's `config` may set the run's budgets — and a
 * starter is not its agent's owner: an application, a chat front end, a schedule, a person with
 * access to the runs API. So each budget has a ceiling: the lower of the agent's `maxBudgets` and
 * the deployment's (the construct's `maxBudgets`, `LocalStackOptions.maxBudgets`), and where
 * neither names it, the agent's own budget (a starter may lower it, not raise it). A request above
 * a ceiling is refused before anything starts, naming the budget: never raised silently, nor
 * clamped (the starter would believe it got what it asked for).
 *
 *   ceiling(b) = min(agent.maxBudgets[b], deployment.maxBudgets[b])   the one set, if only one is
 *              = the agent's own b                                    if neither is
 */
export declare function budgetCeilings(agent: Pick<AgentDefinition, 'budgets' | 'maxBudgets'>, deployment?: BudgetCaps): Record<CappedBudget, number>;
/** An InvalidInputError naming each budget of `requested` above its ceiling; undefined when none is. */
export declare function overBudgetRequest(requested: Partial<RunConfig>, ceilings: Record<CappedBudget, number>): InvalidInputError | undefined;
