import { z } from 'zod';
import type { Message, ModelClient, ToolResultBlock } from '../agent/messages.js';
import { costOf, isPricedModel } from '../agent/prices.js';
import { toolSpecs, type AgentDefinition } from '../define.js';
import type { CircuitBreaker } from '../guards/breaker.js';
import { budgetHint, budgetTrip } from '../guards/budgets.js';
import { loopVerdict } from '../guards/loops.js';
import type { Ledger } from '../ledger/ledger.js';
import type { RunRecord, ToolCallRecord, TurnRecord } from '../ledger/records.js';
import { InvalidInputError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { compactedView } from './compaction.js';
import type { Clock } from './ports.js';
import { completedCalls, loadRun, nextToolCall, toolUses, type NextToolCall } from './turns.js';

export const CallModelInput = z.object({ runId: z.string().min(1), turn: z.number().int().positive() });

export interface CallModelResult {
  turn: number;
  stopReason: string;
  toolCalls: number;
  next: NextToolCall | null;
  /** Set when a guard tripped before the call: the model was not called; BudgetCheck stops the run. */
  skipped?: string;
}

export interface CallModelDeps {
  agent: AgentDefinition;
  ledger: Ledger;
  model: ModelClient;
  clock: Clock;
  breaker: CircuitBreaker;
}

/** The model provider's circuit breaker, shared by all runs. */
export const MODEL_BREAKER = 'model';

/**
 * The conversation as the model sees it, rebuilt from the ledger: the run's prompt, then each
 * recorded turn followed by the results of its tool calls. It never travels in the execution's
 * payload (256 KiB limit); only pointers do.
 */
export function conversation(run: RunRecord, turns: TurnRecord[], calls: ToolCallRecord[]): Message[] {
  // Context compaction (compaction.ts): after one, the prompt and summary open, then the recent turns.
  const view = compactedView(run, turns);
  const messages: Message[] = [{ role: 'user', content: view.opening }];
  for (const turn of view.turns) {
    messages.push({ role: 'assistant', content: turn.content });
    const uses = toolUses(turn);
    if (uses.length === 0) continue;
    const results: ToolResultBlock[] = uses.map((use, index) => {
      const record = calls.find((call) => call.turn === turn.turn && call.call === index + 1);
      if (!record || record.status !== 'completed' || record.result === undefined) {
        throw new InvalidInputError(`turn: tool call ${index + 1} of turn ${turn.turn} (${use.name}) has no recorded result`);
      }
      return { type: 'tool_result', tool_use_id: use.id, content: record.result, ...(record.outcome === 'ok' ? {} : { is_error: true }) };
    });
    messages.push({ role: 'user', content: results });
  }
  return messages;
}

/**
 * One model call. The response and its usage are recorded in the ledger before the step returns;
 * a retry after that point finds the recorded turn and does not call the model again.
 */
export function createCallModel(deps: CallModelDeps) {
  return async (input: unknown, signal?: AbortSignal): Promise<CallModelResult> => {
    const { runId, turn } = parseOrThrow(CallModelInput, input, 'CallModel input');
    const run = await loadRun(deps.ledger, runId);
    const recorded = await deps.ledger.getTurn(runId, turn);
    if (!recorded) {
      // A kill or a budget may have landed since BudgetCheck: checked again before the call goes out.
      const trip = budgetTrip(run, deps.clock.now(), await deps.ledger.getGlobalKill());
      if (trip) return { turn, stopReason: 'harness_stop', toolCalls: 0, next: null, skipped: trip.reason };
    }
    const record = recorded ?? (await callModel(deps, run, turn, signal));
    // Counting is idempotent per turn, so a crash between recording and counting heals here.
    await deps.ledger.countStep(runId, `turn:${turn}`, {
      steps: 1,
      modelTurns: 1,
      inputTokens: record.usage.input_tokens,
      outputTokens: record.usage.output_tokens,
      cachedInputTokens: record.usage.cache_read_input_tokens ?? 0,
      costMicros: record.costMicros,
    });
    // A recorded turn is a resume: go on from its first tool call without a recorded result.
    const next = nextToolCall(deps.agent, record, recorded ? await completedCalls(deps.ledger, record) : 0, run);
    return { turn, stopReason: record.stopReason, toolCalls: toolUses(record).length, next };
  };
}

async function callModel(deps: CallModelDeps, run: RunRecord, turn: number, signal?: AbortSignal): Promise<TurnRecord> {
  const { turns, calls } = await deps.ledger.listConversation(run.runId);
  const previous = turns.filter((recorded) => recorded.turn < turn);
  if (previous.length !== turn - 1) {
    throw new InvalidInputError(`turn: run ${run.runId} has ${previous.length} recorded turns, cannot call turn ${turn}`);
  }
  const modelId = modelIdOf(run.model);
  if (!isPricedModel(modelId)) throw new InvalidInputError(`model: no price for model ${run.model}`);
  const started = deps.clock.now();
  const response = await deps.breaker.call(MODEL_BREAKER, () =>
    deps.model.createMessage(
      {
        model: modelId,
        max_tokens: run.config.maxTokensPerTurn,
        system: `${deps.agent.system}\n\n${harnessNotes(run, previous, started).join('\n')}`,
        messages: conversation(run, previous, calls),
        tools: toolSpecs(deps.agent),
      },
      signal,
    ),
  );
  const recordedAt = deps.clock.now();
  return deps.ledger.recordTurn({
    kind: 'turn',
    runId: run.runId,
    turn,
    model: response.model,
    content: response.content,
    stopReason: response.stop_reason,
    usage: response.usage,
    costMicros: Math.round(costOf(modelId, response.usage) * 1_000_000),
    latencyMs: recordedAt.getTime() - started.getTime(),
    recordedAt: recordedAt.toISOString(),
  });
}

/**
 * What the harness tells the model each turn: the budget left (a soft cap: the harness's counters
 * stay the hard cap) and, when the loop detector sees it repeating itself, a warning.
 */
export function harnessNotes(run: RunRecord, turns: TurnRecord[], now: Date): string[] {
  const loop = loopVerdict(turns);
  return [`[harness] ${budgetHint(run, now)}`, ...(loop?.action === 'warn' ? [`[harness] Warning: ${loop.reason}. Change your approach or stop.`] : [])];
}

/** `provider:model-id` → `model-id` (the provider is chosen by configuration, the id goes on the wire). */
export function modelIdOf(spec: string): string {
  const colon = spec.indexOf(':');
  return colon < 0 ? spec : spec.slice(colon + 1);
}
