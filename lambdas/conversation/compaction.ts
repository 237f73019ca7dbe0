import { inputTokensOf } from '../records/messages.js';
import type { AgentDefinition, ToolTrace } from '../define.js';
import type { RunRecord, TurnRecord } from '../records/ledger-records.js';

/**
 * Context compaction as a recorded step. When the last turn's input tokens (from the ledger) pass
 * a share of the model's window, the decision (steps/budget-check.ts) asks for a compaction before the next turn: one model
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

export const SUMMARY_INSTRUCTIONS =
  '[harness] Context compaction: summarise the conversation so far for yourself — the task, what is done, what is left, and the facts you still need. Answer with the summary only.';

export const COMPACTION_STOP_REASON = 'compaction';

/** Settings of an agent that compacts, with defaults filled in; undefined when it does not. */
export function compactionSettings(agent: Pick<AgentDefinition, 'contextWindow' | 'compaction'>) {
  if (!agent.contextWindow) return undefined;
  const options = agent.compaction ?? {};
  return {
    contextWindow: agent.contextWindow,
    share: options.share ?? 0.75,
    keepRecentTurns: options.keepRecentTurns ?? 4,
    instructions: options.instructions ?? SUMMARY_INSTRUCTIONS,
    keep: options.keep ?? keepWrites,
    /** Whether `keep` is the agent's own (its source is in the fingerprint). */
    customKeep: options.keep?.toString(),
  };
}

/** The default `keep`: every write tool call, verbatim. */
export function keepWrites(calls: readonly ToolTrace[]): string {
  const writes = calls.filter((call) => call.effect === 'write');
  if (writes.length === 0) return '';
  return [
    '[harness] Side effects already taken (verbatim from the ledger; do not repeat them):',
    ...writes.map((call) => `- turn ${call.turn} call ${call.call}: ${call.name} ${JSON.stringify(call.args)} → ${call.outcome ?? call.status}: ${call.result ?? ''}`),
  ].join('\n');
}

export function isCompaction(turn: TurnRecord): boolean {
  return turn.compaction !== undefined;
}

function latestCompaction(turns: TurnRecord[]): TurnRecord | undefined {
  for (let i = turns.length - 1; i >= 0; i--) if (isCompaction(turns[i]!)) return turns[i];
  return undefined;
}

/**
 * The hook of `conversation()`: the opening user message and the turns to send after it. Without
 * a compaction among `turns`: the prompt and every turn.
 */
export function compactedView(run: Pick<RunRecord, 'prompt'>, turns: TurnRecord[]): { opening: string; turns: TurnRecord[] } {
  const latest = latestCompaction(turns);
  if (!latest) return { opening: run.prompt, turns };
  const summary = latest.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  return {
    opening: `${run.prompt}\n\n[harness] Summary of turns 1-${latest.compaction!.covers} (compacted at turn ${latest.turn}):\n${summary}`,
    turns: turns.filter((turn) => turn.turn > latest.compaction!.covers && !isCompaction(turn)),
  };
}

/** The lowest turn number among `turns` (a view's: after a compaction, the recent ones), Infinity when there are none: what a pass over a run's calls compares first, to skip the turns not shown. */
export function firstTurnOf(turns: readonly Pick<TurnRecord, 'turn'>[]): number {
  let first = Infinity;
  for (const turn of turns) if (turn.turn < first) first = turn.turn;
  return first;
}

/**
 * The decision's question (steps/budget-check.ts): compact before turn `nextTurn`? When the last turn (not a compaction)
 * sent at least `share` of the window, and there are turns older than the recent ones not yet
 * compacted. Returns the turns the compaction covers (1..covers).
 */
export function compactionDue(agent: Pick<AgentDefinition, 'contextWindow' | 'compaction'>, turns: TurnRecord[], nextTurn: number): { covers: number } | undefined {
  const settings = compactionSettings(agent);
  const last = turns.at(-1);
  if (!settings || !last || isCompaction(last) || last.turn !== nextTurn - 1) return undefined;
  // The context the model read: every input token, cached or not.
  if (inputTokensOf(last.usage) < settings.share * settings.contextWindow) return undefined;
  const covers = last.turn - settings.keepRecentTurns;
  const previous = latestCompaction(turns)?.compaction?.covers ?? 0;
  return covers > previous ? { covers } : undefined;
}
