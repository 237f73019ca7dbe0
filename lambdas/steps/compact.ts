import * as z from 'zod';
import type { Message } from '../records/messages.js';
import { toolSpecs, type AgentDefinition, type ToolTrace } from '../define.js';
import { modelBreaker, type CircuitBreaker } from '../guards/breaker.js';
import { reservationFor, type Reservation } from '../guards/budgets.js';
import { reserveModelCall, settleModelCall } from '../guards/reservation.js';
import type { BlobStore, FleetLedger, GuardLedger, RunLedger, TurnLedger } from '../ledger/ledger.js';
import type { FleetBudget } from '../records/fleet.js';
import type { RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
import { costOf, DEFAULT_PRICE_TABLE, priceFor, type PriceTable } from '../models/prices.js';
import type { ModelRegistry } from '../models/registry.js';
import { parseModelSpec } from '../models/spec.js';
import { InvalidInputError } from '../shared/errors.js';
import type { Clock } from '../shared/ports.js';
import { parseOrThrow } from '../shared/validation.js';
import { COMPACTION_STOP_REASON, compactionSettings, isCompaction } from '../conversation/compaction.js';
import { answerNames, loadConversationStep } from '../conversation/turns.js';
import { closing, openCalls, withCounted } from '../ledger/open-turn.js';
import { requestBytes, WRAPPER_BYTES } from '../guards/request-size.js';
import { schemaOnFirstUse } from '../shared/on-first-use.js';

/** The Compact step; what compaction is and when it is due: conversation/compaction.ts. */

export const CompactInput = schemaOnFirstUse(() => z.object({ runId: z.string().min(1), turn: z.number().int().positive(), covers: z.number().int().positive() }));

export interface CompactDeps {
  agent: AgentDefinition;
  ledger: RunLedger & TurnLedger & GuardLedger & BlobStore & Pick<FleetLedger, 'reserveInFleet' | 'returnFleetLease'>;
  /** A client per `provider:model-id` (the run's model summarises). */
  models: ModelRegistry;
  clock: Clock;
  breaker: CircuitBreaker;
  /** The conversation builder CallModel sends with (call-model.ts `conversation`). */
  conversation: (run: RunRecord, turns: TurnRecord[], calls: ToolCallRecord[]) => Message[];
  /** @default DEFAULT_PRICE_TABLE */
  priceTable?: PriceTable;
  /** The deployment's fleet budget (records/fleet.ts), the summarising call reserved within it. @default none */
  fleetBudget?: FleetBudget;
}

/** The Compact step: one model call that summarises turns 1..covers, recorded as turn `turn`. */
export function createCompact(deps: CompactDeps) {
  return async (input: unknown, signal?: AbortSignal): Promise<{ turn: number; covers: number; skipped?: string }> => {
    const { runId, turn, covers } = parseOrThrow(CompactInput(), input, 'Compact input');
    const settings = compactionSettings(deps.agent);
    if (!settings) throw new InvalidInputError(`agent ${deps.agent.name} sets no contextWindow: nothing to compact`);
    // The run and the conversation as CallModel reads them (its turns, its completed calls, their
    // results resolved): the known part from this function's memory, only what is new read, not
    // the whole conversation queried at every compaction of a long run.
    const step = await loadConversationStep(deps.ledger, runId);
    const { turns, calls } = step;
    // The last model turn's calls are counted with this call's reservation (a compaction is a
    // turn that asks for no tool: its own count closes it, ledger/open-turn.ts).
    const open = openCalls(step.run, calls);
    const run = withCounted(step.run, open);
    // What the summarising call may cost at most, reserved like CallModel's (guards/reservation.ts):
    // the same from the same records on every attempt, and what the decision before it reserved.
    const reservation = compactionReservation(deps.agent, run, { turns, calls }, covers, deps.priceTable);
    let record = turns.find((recorded) => recorded.turn === turn);
    if (!record) {
      const trip = await reserveModelCall(deps.ledger, { run, turn, reservation, now: deps.clock.now(), globalKill: await deps.ledger.getGlobalKill(), fleet: deps.fleetBudget, calls: closing(open) });
      if (trip) return { turn, covers, skipped: trip.reason };
      record = await compact(deps, settings, { run, turn, covers }, { turns, calls }, signal);
    }
    if (!isCompaction(record)) throw new InvalidInputError(`turn: turn ${turn} of run ${runId} is a model turn, not a compaction`);
    await settleModelCall(deps.ledger, record, reservation);
    return { turn, covers: record.compaction!.covers };
  };
}

/**
 * What the compaction before `turn` may cost at most (guards/budgets.ts reservationFor): the
 * conversation of turns 1..covers and the instructions, answered by the run's model.
 */
export function compactionReservation(
  agent: AgentDefinition,
  run: RunRecord,
  { turns, calls }: { turns: TurnRecord[]; calls: ToolCallRecord[] },
  covers: number,
  table: PriceTable = DEFAULT_PRICE_TABLE,
): Reservation {
  const instructions = compactionSettings(agent)?.instructions ?? '';
  const bytes = requestBytes(agent, run, olderTurns(turns, covers), calls) + Buffer.byteLength(JSON.stringify(instructions)) + WRAPPER_BYTES;
  return reservationFor(bytes, run.config.maxTokensPerTurn, [priceFor(run.model, table)]);
}

const olderTurns = (turns: TurnRecord[], covers: number) => turns.filter((recorded) => recorded.turn <= covers);

async function compact(
  deps: CompactDeps,
  settings: NonNullable<ReturnType<typeof compactionSettings>>,
  { run, turn, covers }: { run: RunRecord; turn: number; covers: number },
  { turns, calls }: { turns: TurnRecord[]; calls: ToolCallRecord[] },
  signal?: AbortSignal,
): Promise<TurnRecord> {
  if (turns.filter((recorded) => recorded.turn < turn).length !== turn - 1) {
    throw new InvalidInputError(`turn: run ${run.runId} has not recorded every turn before ${turn}`);
  }
  const older = olderTurns(turns, covers);
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
    ...answerNames(response),
    costMicros: Math.round(costOf(run.model, response.usage, deps.priceTable ?? DEFAULT_PRICE_TABLE) * 1_000_000),
    latencyMs: recordedAt.getTime() - started.getTime(),
    recordedAt: recordedAt.toISOString(),
  });
}
