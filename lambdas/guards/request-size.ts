import type { AgentDefinition } from '../define.js';
import { toolSpecs } from '../define.js';
import { compactedView } from '../conversation/compaction.js';
import { priceFor, DEFAULT_PRICE_TABLE, type PriceTable } from '../models/prices.js';
import type { RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
import { reservationFor, type Reservation } from './budgets.js';

/**
 * What the model call after the recorded `turns` may cost at most (guards/budgets.ts
 * reservationFor), answered by the run's model or its fallback. The decision (steps/budget-check.ts)
 * and the call reserve it from the same records, so they agree on whether it fits.
 */
export function nextCallReservation(agent: AgentDefinition, run: RunRecord, turns: TurnRecord[], calls: ToolCallRecord[], table: PriceTable = DEFAULT_PRICE_TABLE): Reservation {
  const models = agent.fallbackModel === undefined ? [run.model] : [run.model, agent.fallbackModel];
  return reservationFor(requestBytes(agent, run, turns, calls), run.config.maxTokensPerTurn, models.map((model) => priceFor(model, table)));
}

/** What JSON adds around a message, a content block or a tool result (role, type, ids, is_error): generously. */
export const WRAPPER_BYTES = 160;

/**
 * At least the UTF-8 bytes of the request `conversation()` renders (its JSON, less the turn's
 * notes, allowed for apart): each recorded piece measured once (a turn or a call never changes),
 * so a step sums sizes instead of serializing the whole conversation again.
 */
export function requestBytes(agent: AgentDefinition, run: RunRecord, turns: TurnRecord[], calls: ToolCallRecord[]): number {
  const view = compactedView(run, turns);
  const shown = new Set(view.turns.map((turn) => turn.turn));
  let bytes = fixedBytes(agent) + jsonBytes(view.opening) + WRAPPER_BYTES;
  for (const turn of view.turns) bytes += measured(turn, turnBytes);
  for (const call of calls) if (shown.has(call.turn)) bytes += measured(call, callBytes);
  return bytes;
}

const turnBytes = (turn: TurnRecord) => jsonBytes(turn.content) + jsonBytes(turn.notes ?? []) + WRAPPER_BYTES * (2 + turn.content.length);
const callBytes = (call: ToolCallRecord) => jsonBytes(call.result ?? '') + WRAPPER_BYTES;

/** A record's size, measured once (a step sums the whole conversation's, twice a turn); `measure` is given the record, so no closure is made per record. */
const sizes = new WeakMap<object, number>();
function measured<T extends object>(record: T, measure: (record: T) => number): number {
  let size = sizes.get(record);
  if (size === undefined) sizes.set(record, (size = measure(record)));
  return size;
}
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
/** The system prompt and the tool list: the same bytes every turn. */
const fixedBytes = (agent: AgentDefinition) => measured(agent, (defined) => jsonBytes({ system: defined.system, tools: toolSpecs(defined) }));

