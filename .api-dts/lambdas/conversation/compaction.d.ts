import type { AgentDefinition, ToolTrace } from '../define.js';
import type { RunRecord, TurnRecord } from '../records/ledger-records.js';
/**
 * Context compaction as a recorded step. When the last turn's input tokens (from the ledger) pass
 * a share of the model's window, BudgetCheck asks for a compaction before the next turn: one model
 * call, like any other — its own Task state (Compact), retried by the same Retry fields, recorded
 * once in the ledger as a turn (`stopReason: 'compaction'`, `compaction.covers`), counted in the
 * run's steps, tokens and dollars, its settings in the agent's fingerprint.
 *
 * What later turns send: the prompt and the summary of turns 1..covers as the opening user
 * message, then the turns after `covers` (compaction turns themselves are never sent). The summary
 * is the model's text plus what the harness keeps verbatim (by default every `write` tool call with
 * its result, so no side effect is forgotten); both are in the record, so rebuilding the
 * conversation from the ledger reproduces exactly what was sent.
 */
export declare const SUMMARY_INSTRUCTIONS = "[harness] Context compaction: summarise the conversation so far for yourself \u2014 the task, what is done, what is left, and the facts you still need. Answer with the summary only.";
export declare const COMPACTION_STOP_REASON = "compaction";
/** Settings of an agent that compacts, with defaults filled in; undefined when it does not. */
export declare function compactionSettings(agent: Pick<AgentDefinition, 'contextWindow' | 'compaction'>): {
    contextWindow: number;
    share: number;
    keepRecentTurns: number;
    instructions: string;
    keep: (calls: readonly ToolTrace[]) => string;
    /** Whether `keep` is the agent's own (its source is in the fingerprint). */
    customKeep: string | undefined;
} | undefined;
/** The default `keep`: every write tool call, verbatim. */
export declare function keepWrites(calls: readonly ToolTrace[]): string;
export declare function isCompaction(turn: TurnRecord): boolean;
/**
 * The hook of `conversation()`: the opening user message and the turns to send after it. Without
 * a compaction among `turns`: the prompt and every turn.
 */
export declare function compactedView(run: Pick<RunRecord, 'prompt'>, turns: TurnRecord[]): {
    opening: string;
    turns: TurnRecord[];
};
/**
 * BudgetCheck's question: compact before turn `nextTurn`? When the last turn (not a compaction)
 * sent at least `share` of the window, and there are turns older than the recent ones not yet
 * compacted. Returns the turns the compaction covers (1..covers).
 */
export declare function compactionDue(agent: Pick<AgentDefinition, 'contextWindow' | 'compaction'>, turns: TurnRecord[], nextTurn: number): {
    covers: number;
} | undefined;
