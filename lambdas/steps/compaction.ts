import { z } from 'zod';
import { inputTokensOf, type Message } from '../agent/messages.js';
import { toolSpecs, type AgentDefinition, type ToolTrace } from '../define.js';
import { modelBreaker, type CircuitBreaker } from '../guards/breaker.js';
import { budgetTrip } from '../guards/budgets.js';
import type { Ledger } from '../ledger/ledger.js';
import { resolveResults } from '../ledger/blobs.js';
import type { RunRecord, ToolCallRecord, TurnRecord } from '../ledger/records.js';
import { costOf, DEFAULT_PRICE_TABLE, type PriceTable } from '../models/prices.js';
import type { ModelRegistry } from '../models/registry.js';
import { parseModelSpec } from '../models/spec.js';
import { InvalidInputError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Clock } from './ports.js';
import { loadRun } from './turns.js';

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

/**
 * BudgetCheck's question: compact before turn `nextTurn`? When the last turn (not a compaction)
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

export const CompactInput = z.object({ runId: z.string().min(1), turn: z.number().int().positive(), covers: z.number().int().positive() });

export interface CompactDeps {
  agent: AgentDefinition;
  ledger: Ledger;
  /** A client per `provider:model-id` (the run's model summarises). */
  models: ModelRegistry;
  clock: Clock;
  breaker: CircuitBreaker;
  /** The conversation builder CallModel sends with (call-model.ts `conversation`). */
  conversation: (run: RunRecord, turns: TurnRecord[], calls: ToolCallRecord[]) => Message[];
  /** @default DEFAULT_PRICE_TABLE */
  priceTable?: PriceTable;
}

/** The Compact step: one model call that summarises turns 1..covers, recorded as turn `turn`. */
export function createCompact(deps: CompactDeps) {
  return async (input: unknown, signal?: AbortSignal): Promise<{ turn: number; covers: number; skipped?: string }> => {
    const { runId, turn, covers } = parseOrThrow(CompactInput, input, 'Compact input');
    const run = await loadRun(deps.ledger, runId);
    let record = await deps.ledger.getTurn(runId, turn);
    if (!record) {
      const trip = budgetTrip(run, deps.clock.now(), await deps.ledger.getGlobalKill());
      if (trip) return { turn, covers, skipped: trip.reason };
      record = await compact(deps, run, turn, covers, signal);
    }
    if (!isCompaction(record)) throw new InvalidInputError(`turn: turn ${turn} of run ${runId} is a model turn, not a compaction`);
    await deps.ledger.countStep(runId, `turn:${turn}`, {
      steps: 1,
      modelTurns: 1,
      inputTokens: inputTokensOf(record.usage),
      outputTokens: record.usage.output_tokens,
      cachedInputTokens: record.usage.cache_read_input_tokens ?? 0,
      costMicros: record.costMicros,
    });
    return { turn, covers: record.compaction!.covers };
  };
}

async function compact(deps: CompactDeps, run: RunRecord, turn: number, covers: number, signal?: AbortSignal): Promise<TurnRecord> {
  const settings = compactionSettings(deps.agent);
  if (!settings) throw new InvalidInputError(`agent ${deps.agent.name} sets no contextWindow: nothing to compact`);
  const { turns, calls: stored } = await deps.ledger.listConversation(run.runId);
  const calls = await resolveResults(deps.ledger, stored);
  if (turns.filter((recorded) => recorded.turn < turn).length !== turn - 1) {
    throw new InvalidInputError(`turn: run ${run.runId} has not recorded every turn before ${turn}`);
  }
  const older = turns.filter((recorded) => recorded.turn <= covers);
  const messages = deps.conversation(run, older, calls);
  // The request ends with the instructions, in the last user message (roles keep alternating).
  const last = messages.at(-1)!;
  messages[messages.length - 1] = {
    role: 'user',
    content: typeof last.content === 'string' ? `${last.content}\n\n${settings.instructions}` : [...last.content, { type: 'text', text: settings.instructions }],
  };
  const client = await deps.models.clientFor(run.model);
  const started = deps.clock.now();
  const response = await deps.breaker.call(modelBreaker(run.model), () =>
    client.createMessage(
      { model: parseModelSpec(run.model).model, max_tokens: run.config.maxTokensPerTurn, system: deps.agent.system, messages, tools: toolSpecs(deps.agent) },
      signal,
    ),
  );
  const summary = response.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  const traces: ToolTrace[] = calls
    .filter((call) => call.turn <= covers && call.status === 'completed')
    .map(({ turn: t, call, name, args, status, outcome, result, effect }) => ({ turn: t, call, name, args, status, outcome, result, effect }));
  const kept = settings.keep(traces);
  const recordedAt = deps.clock.now();
  return deps.ledger.recordTurn({
    kind: 'turn',
    runId: run.runId,
    turn,
    content: [{ type: 'text', text: kept ? `${summary}\n\n${kept}` : summary }],
    stopReason: COMPACTION_STOP_REASON,
    compaction: { covers },
    usage: response.usage,
    model: run.model,
    costMicros: Math.round(costOf(run.model, response.usage, deps.priceTable ?? DEFAULT_PRICE_TABLE) * 1_000_000),
    latencyMs: recordedAt.getTime() - started.getTime(),
    recordedAt: recordedAt.toISOString(),
  });
}
