import * as z from 'zod';
import type { Message } from '../records/messages.js';
import { type AgentDefinition } from '../define.js';
import { type CircuitBreaker } from '../guards/breaker.js';
import { type Reservation } from '../guards/budgets.js';
import type { BlobStore, GuardLedger, RunLedger, TurnLedger } from '../ledger/ledger.js';
import type { RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
import { type PriceTable } from '../models/prices.js';
import type { ModelRegistry } from '../models/registry.js';
import type { Clock } from '../shared/ports.js';
/** The Compact step; what compaction is and when it is due: conversation/compaction.ts. */
export declare const CompactInput: z.ZodObject<{
    runId: z.ZodString;
    turn: z.ZodNumber;
    covers: z.ZodNumber;
}, z.core.$strip>;
export interface CompactDeps {
    agent: AgentDefinition;
    ledger: RunLedger & TurnLedger & GuardLedger & BlobStore;
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
export declare function createCompact(deps: CompactDeps): (input: unknown, signal?: AbortSignal) => Promise<{
    turn: number;
    covers: number;
    skipped?: string;
}>;
/**
 * What the compaction before `turn` may cost at most (guards/budgets.ts reservationFor): the
 * conversation of turns 1..covers and the instructions, answered by the run's model.
 */
export declare function compactionReservation(agent: AgentDefinition, run: RunRecord, { turns, calls }: {
    turns: TurnRecord[];
    calls: ToolCallRecord[];
}, covers: number, table?: PriceTable): Reservation;
