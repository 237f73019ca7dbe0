import type * as z from 'zod';
import type { ToolUseBlock } from '../records/messages.js';
import { type AgentDefinition, type ApprovalRequest, type RunFacts, type ToolDefinition } from '../define.js';
import type { BlobStore, TurnLedger } from '../ledger/ledger.js';
import type { RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
/**
 * One tool call of a model turn, derived once from the turn record: which tool, its arguments as
 * the tool's schema parsed them (or the model's mistake), whether a person must approve it, and the
 * key every attempt sends. CallModel derives each call of its turn to plan the `ToolCalls` Map;
 * RequestApproval and CallTool derive the call they are handed with the same function from the
 * same records, so each step sees the same call (the rule's facts do not change while the turn runs).
 */
export interface DerivedCall {
    turn: number;
    call: number;
    block: ToolUseBlock;
    /** Absent: the model named a tool the agent does not have. */
    tool?: ToolDefinition;
    /** The parsed arguments (defaults applied); absent when the schema refused them. */
    args?: unknown;
    /** The answer to the model's mistake — nothing is claimed or sent; absent for a call that runs. */
    mistake?: ModelMistake;
    /** What a person must approve before the call runs; absent when it runs on its own. */
    approval?: ApprovalRequest;
    /** The idempotency key every attempt sends: the effect's business key, or run, turn and call id. */
    idempotencyKey: string;
    /** The effect's business key, claimed across the agent's runs (tools/effects.ts). */
    effectKey?: string;
}
export type ModelMistake = ReturnType<typeof unknownTool> | ReturnType<typeof invalidArguments> | {
    error: 'invalid_arguments';
    message: string;
};
/**
 * An item of the `ToolCalls` Map: a pointer to the call and the verdict the state machine routes
 * on — never the arguments (the execution's payload carries pointers, not the conversation).
 */
export interface ToolCallItem {
    turn: number;
    call: number;
    name: string;
    needsApproval: boolean;
}
/**
 * The call `call` (1-based) of `turn`. `completed` holds the run's completed calls (only those of
 * earlier turns are weighed: the calls of this turn run alongside it).
 */
export declare function deriveToolCall(agent: AgentDefinition, run: RunRecord, turn: TurnRecord, call: number, completed: readonly ToolCallRecord[]): DerivedCall;
/** The Map's items for the calls of `turn` that have no completed record yet, in call order. */
export declare function plannedCalls(agent: AgentDefinition, run: RunRecord, turn: TurnRecord, completed: readonly ToolCallRecord[]): ToolCallItem[];
/**
 * The call `call` of a recorded `turn`, as a step handed it (RequestApproval, CallTool) derives it:
 * the run's completed calls its approval rule weighs are read here — from the conversation cache,
 * usually with no read — and only for a tool that has a rule (most calls read nothing).
 */
export declare function deriveRecordedCall(ledger: TurnLedger & BlobStore, agent: AgentDefinition, run: RunRecord, turn: TurnRecord, call: number): Promise<DerivedCall>;
/**
 * What the run did before the call `call` of `turn`, for its approval rule — the one place the
 * facts are built, whichever step asks (CallModel and BudgetCheck planning, RequestApproval,
 * CallTool): its completed calls of earlier turns, in conversation order, then the calls of the
 * same turn before it — asked for together and running alongside it, so without an outcome (a rule
 * summing what was paid counts them). `completed` may hold more (calls of this or later turns, as
 * a step read them): they are left out, so the set is the same whenever the rule is asked.
 */
export declare function runFacts(agent: AgentDefinition, turn: TurnRecord, call: number, completed: readonly ToolCallRecord[]): RunFacts;
/** `value` as JSON would carry it, when that is an object; an empty one otherwise (what a model sent is on its turn). */
export declare function jsonObject(value: unknown): Record<string, unknown>;
/** The answer to a call of a tool the agent does not have: the model learns which it has. */
export declare function unknownTool(agent: Pick<AgentDefinition, 'tools'>, name: string): {
    error: 'unknown_tool';
    message: string;
};
/** The answer to arguments the tool's schema refuses: every field at fault, by its path. */
export declare function invalidArguments(name: string, error: z.ZodError): {
    error: 'invalid_arguments';
    message: string;
    issues: {
        path: string;
        message: string;
    }[];
};
