import { z } from 'zod';
import type { Ledger } from '../ledger/ledger.js';
import type { RunRecord } from '../ledger/records.js';
import { parseOrThrow } from '../shared/validation.js';
import { loadRun, toolUses } from './turns.js';

export const BudgetCheckInput = z.object({ runId: z.string().min(1) });

export type BudgetDecision =
  | { continue: true; nextTurn: number }
  | { continue: false; status: 'succeeded' | 'stopped'; reason: string };

/**
 * The harness's stop decision, made between iterations from what is persisted — never from what
 * the model says. Budgets are checked before the next call goes out.
 */
export function decide(run: RunRecord, lastTurnEnded: boolean): BudgetDecision {
  if (run.status !== 'running') return { continue: false, status: 'stopped', reason: `run is ${run.status}` };
  if (lastTurnEnded) return { continue: false, status: 'succeeded', reason: 'done' };
  const { config } = run;
  if (run.steps >= config.maxSteps) {
    return { continue: false, status: 'stopped', reason: `budget exceeded: steps ${run.steps} / ${config.maxSteps}` };
  }
  const tokens = run.inputTokens + run.outputTokens;
  if (tokens >= config.maxTokens) {
    return { continue: false, status: 'stopped', reason: `budget exceeded: tokens ${tokens} / ${config.maxTokens}` };
  }
  return { continue: true, nextTurn: run.modelTurns + 1 };
}

export function createBudgetCheck(deps: { ledger: Ledger }) {
  return async (input: unknown): Promise<BudgetDecision> => {
    const { runId } = parseOrThrow(BudgetCheckInput, input, 'BudgetCheck input');
    const run = await loadRun(deps.ledger, runId);
    const last = run.modelTurns > 0 ? await deps.ledger.getTurn(runId, run.modelTurns) : undefined;
    // The model is done when its last turn asked for no tool: its answer is final.
    const lastTurnEnded = last !== undefined && last.stopReason === 'end_turn' && toolUses(last).length === 0;
    return decide(run, lastTurnEnded);
  };
}
