import * as z from 'zod';
import { type Message } from '../records/messages.js';
import { type AgentDefinition } from '../define.js';
import { type CircuitBreaker } from '../guards/breaker.js';
import { type Reservation } from '../guards/budgets.js';
import { type LoopSettings } from '../guards/loops.js';
import type { BlobStore, GuardLedger, TurnLedger } from '../ledger/ledger.js';
import type { RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
import { type PriceTable } from '../models/prices.js';
import type { ModelRegistry } from '../models/registry.js';
import type { Clock } from '../shared/ports.js';
import { type CodeFingerprint } from '../runs/versions.js';
import { type ToolCallItem } from '../conversation/tool-calls.js';
export declare const CallModelInput: z.ZodObject<{
    runId: z.ZodString;
    turn: z.ZodNumber;
}, z.core.$strip>;
export interface CallModelResult {
    turn: number;
    stopReason: string;
    toolCalls: number;
    /** The turn's tool calls still to make, in call order: the `ToolCalls` Map's items (empty: none). */
    calls: ToolCallItem[];
    /** Set when a guard tripped before the call: the model was not called; BudgetCheck stops the run. */
    skipped?: string;
    /** For a person following the run in the console (no prompt or response text): e.g. `tool_use: 2 tool calls (get_order, issue_refund)`. */
    summary?: string;
    /** The turn's usage and cost. */
    tokens?: {
        input: number;
        output: number;
    };
    dollars?: number;
    /** `false` when a retry found the turn counted already (metrics count a turn once). */
    counted?: boolean;
}
export interface CallModelDeps {
    agent: AgentDefinition;
    /** This code's fingerprint: the run must be bound to it (steps/versions.ts), and each turn records it. */
    fingerprint: CodeFingerprint;
    ledger: GuardLedger & TurnLedger & BlobStore;
    /** A client per `provider:model-id`, built once per container. */
    models: ModelRegistry;
    clock: Clock;
    breaker: CircuitBreaker;
    /** @default DEFAULT_PRICE_TABLE */
    priceTable?: PriceTable;
}
/**
 * The conversation as the model sees it, rebuilt from the ledger: the run's prompt, then each
 * recorded turn followed by the results of its tool calls. The harness's notes of each turn are
 * appended (as a text block) to the user turn that preceded it, exactly as they were sent, so the
 * same ledger always renders the same bytes. It never travels in the execution's payload (256 KiB
 * limit); only pointers do.
 *
 * A call of a tool the agent does not have (`tools`: the names it has) is sent as text, its answer
 * too: providers refuse a conversation whose tool_use names an undeclared tool.
 */
export declare function conversation(run: RunRecord, turns: TurnRecord[], calls: ToolCallRecord[], tools?: ReadonlySet<string>): Message[];
/**
 * Appends the notes to the latest user turn (after its tool results, which must come first), or
 * as a user turn of their own after an assistant turn. Per-turn content goes here, never into the
 * system prompt: the system prompt and the tools stay byte-identical across turns, so a provider's
 * prompt cache keeps matching them.
 */
export declare function withNotes(messages: Message[], notes: readonly string[]): void;
/**
 * One model call. The response and its usage are recorded in the ledger before the step returns;
 * a retry after that point finds the recorded turn and does not call the model again.
 */
export declare function createCallModel(deps: CallModelDeps): (input: unknown, signal?: AbortSignal) => Promise<CallModelResult>;
/**
 * What the model call after the recorded `turns` may cost at most (guards/budgets.ts
 * reservationFor), answered by the run's model or its fallback. BudgetCheck and CallModel reserve
 * it from the same records, so they agree on whether it fits.
 */
export declare function nextCallReservation(agent: AgentDefinition, run: RunRecord, turns: TurnRecord[], calls: ToolCallRecord[], table?: PriceTable): Reservation;
/** What JSON adds around a message, a content block or a tool result (role, type, ids, is_error): generously. */
export declare const WRAPPER_BYTES = 160;
/**
 * At least the UTF-8 bytes of the request `conversation()` renders (its JSON, less the turn's
 * notes, allowed for apart): each recorded piece measured once (a turn or a call never changes),
 * so a step sums sizes instead of serializing the whole conversation again.
 */
export declare function requestBytes(agent: AgentDefinition, run: RunRecord, turns: TurnRecord[], calls: ToolCallRecord[]): number;
/**
 * What the harness tells the model each turn: the budget left (a soft cap: the harness's counters
 * stay the hard cap) and, when the loop detector sees it repeating itself, a warning.
 */
export declare function harnessNotes(run: RunRecord, turns: TurnRecord[], now: Date, loops?: LoopSettings): string[];
