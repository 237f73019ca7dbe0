import type { RunRecord } from '../records/ledger-records.js';

/**
 * A run's lifecycle in the shape MCP Tasks and OpenAI background mode use, next to savepoint's own
 * status: `input_required` while a person's decision is awaited.
 */
export type Lifecycle = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** The lifecycles a run never leaves. */
export const TERMINAL_LIFECYCLES: readonly Lifecycle[] = ['completed', 'failed', 'cancelled'];

/** A run's lifecycle from its status and the decisions it waits for. */
export function lifecycleOf(status: RunRecord['status'], pendingApprovals: number): Lifecycle {
  switch (status) {
    case 'running':
      return pendingApprovals > 0 ? 'input_required' : 'working';
    case 'succeeded':
      return 'completed';
    case 'killed':
      return 'cancelled';
    case 'stopped': // a guard stopped it short of its goal (a budget, the loop detector)
    case 'failed':
      return 'failed';
  }
}
