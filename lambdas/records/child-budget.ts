import type { ChildWait, RunRecord } from './ledger-records.js';

/**
 * A child run's budget (`defineAgentTool`) in its parent's record, as the ledger keeps it: the
 * rules the parent's counts and the child's record obey (tools/child-runs.ts runs them).
 *
 *   reserve  child:<turn>:<call>:reserve   the child's budget, one more child open (`childRunsOpen` + 1);
 *                                          its key stays among the run's counted keys while open
 *   close    the child's own record        `settledIntoParentAt`: its spend is final for its parent,
 *                                          and it is not resumed any more (StartRun refuses)
 *   settle   child:<turn>:<call>:settle    what it spent replaces the reservation (`childRunsOpen` − 1);
 *                                          counted only while the reservation is open, which it closes
 */

/** The keys a child's reservation and settle are counted under in its parent's run item. */
export const childStepKeys = (wait: Pick<ChildWait, 'turn' | 'call'>) => ({ reserve: `child:${wait.turn}:${wait.call}:reserve`, settle: `child:${wait.turn}:${wait.call}:settle` });

const CHILD_STEP = /^child:(\d+):(\d+):(reserve|settle)$/;

/** A counted key of a child's budget: the call it is for and which count it is; undefined for another key. */
export function childStepOf(key: string): { reserve: string; settle: string; is: 'reserve' | 'settle' } | undefined {
  const match = CHILD_STEP.exec(key);
  return match ? { ...childStepKeys({ turn: Number(match[1]), call: Number(match[2]) }), is: match[3] as 'reserve' | 'settle' } : undefined;
}

/**
 * What a run spent is final: its run is over and every child it reserved for is settled into it.
 * (A run settled by 0.21.1 from a reservation of 0.21.0 may count below zero: final, as it was read then.)
 */
export const spendIsFinal = (run: Pick<RunRecord, 'status' | 'childRunsOpen'>) => run.status !== 'running' && (run.childRunsOpen ?? 0) <= 0;

/** The budget a child run was started with (its parent reserved it): the limits before any extension a person granted. */
export const reservedBudget = (run: Pick<RunRecord, 'config' | 'budgetsBeforeExtension'>) => ({ ...run.config, ...run.budgetsBeforeExtension });

/** Why a child run whose spend was settled into its parent is not resumed (StartRun, the ledger's attach). */
export function settledChildRefusal(run: Pick<RunRecord, 'runId' | 'agent' | 'status' | 'parent' | 'config' | 'budgetsBeforeExtension'>): string {
  const budget = reservedBudget(run);
  const parent = run.parent ? `a child run of ${run.parent.runId} (its tool call ${run.parent.turn}/${run.parent.call})` : 'a child run';
  return (
    `runId: run ${run.runId} is ${parent} that ended ${run.status}, and what it spent was settled into it: its parent counts that spend as final, ` +
    `out of the child's budget (budget.maxDollars $${budget.maxDollars}, budget.maxTokens ${budget.maxTokens}) reserved from its own. ` +
    `Resuming it would spend outside the parent's budget, so it is not resumed: the parent's agent calls its tool again for a new child run, or start agent ${run.agent} as a run of its own`
  );
}
