import * as z from 'zod';
import { type AgentDefinition, type ToolDefinition } from '../define.js';
import { type CircuitBreaker } from '../guards/breaker.js';
import { type DecisionMac } from '../approvals/decision-mac.js';
import type { AggregateLedger, ApprovalLedger, BlobStore, EffectLedger, GuardLedger, ToolCallLedger, TurnLedger } from '../ledger/ledger.js';
import type { RunRecord, ToolOutcome } from '../records/ledger-records.js';
import { type Clock } from '../shared/ports.js';
import { type CodeFingerprint } from '../runs/versions.js';
export declare const CallToolInput: z.ZodObject<{
    runId: z.ZodString;
    turn: z.ZodNumber;
    call: z.ZodNumber;
}, z.core.$strip>;
export interface CallToolResult {
    turn: number;
    call: number;
    name: string;
    outcome: ToolOutcome | 'skipped';
    /** Set when a guard tripped before the call: nothing was sent; BudgetCheck stops the run. */
    skipped?: string;
    /** For a person following the run in the console (no arguments or result): e.g. `issue_refund → ok`. */
    summary?: string;
    /** `false` when a retry found the call counted already (metrics count a call once). */
    counted?: boolean;
    /** The call's outcome is unknown and a person was asked to decide (the EffectsEscalated metric). */
    escalated?: boolean;
}
export interface CallToolDeps {
    agent: AgentDefinition;
    /** This code's fingerprint: the run must be bound to it (steps/versions.ts). */
    fingerprint: CodeFingerprint;
    /** The clients the agent declared, built once per container (`AgentDefinition.deps`). */
    agentDeps: () => unknown;
    ledger: GuardLedger & TurnLedger & ToolCallLedger & EffectLedger & AggregateLedger & Pick<ApprovalLedger, 'getApproval' | 'decideApproval'> & BlobStore;
    clock: Clock;
    breaker: CircuitBreaker;
    /** How long a claim protects an in-flight call; at least the Lambda's timeout. */
    leaseMs: number;
    /** Verifies an approval's decision MAC before an approved call runs (absent: decisions are unsigned). */
    decisionMac?: DecisionMac;
    /** Results over this many UTF-8 bytes are stored by reference (ledger/blobs.ts). @default RESULT_LIMIT_BYTES (64 KiB) */
    resultLimitBytes?: number;
}
/**
 * One tool call — one iteration of the turn's `ToolCalls` Map, which may run beside the turn's
 * other calls: everything it claims and records is its own (turn, call). The call is derived once
 * (conversation/tool-calls.ts); a call of a tool that does not exist, or with arguments its schema
 * refuses, is the model's mistake and is answered to the model as an error result naming the
 * field (recorded, nothing sent). Then the call is claimed in the ledger, sent to the outside
 * with an idempotency key that every attempt shares (or, for a provider without keys, first
 * reconciled: did an earlier attempt take effect?), and its outcome recorded; a retry after the
 * record returns the recorded outcome.
 */
export declare function createCallTool(deps: CallToolDeps): (input: unknown, signal?: AbortSignal) => Promise<CallToolResult>;
/**
 * A result of a tool that declares no `maxResultTokens` and is too large for the next model call
 * to carry in what is left of the run's token budget (bytes bound tokens from above, as the
 * reservation counts them: guards/budgets.ts `reservationFor`): sent on, it would stop the whole
 * run on its budget before the model ever saw it. The size it is held to, and the error a read
 * answers the model with, naming the settings that raise it.
 */
export declare function oversizedResult(tool: Pick<ToolDefinition, 'name'>, result: string, run: Pick<RunRecord, 'inputTokens' | 'outputTokens' | 'config'>): {
    limit: number;
    error: {
        error: 'result_too_large';
        message: string;
    };
} | undefined;
/**
 * A result cut to at most `maxBytes` UTF-8 bytes (so at most that many tokens) of JSON: its head,
 * its size, and the reference `store` keeps the whole of it under. A result that fits is itself.
 */
export declare function cutResult(result: string, maxBytes: number, store: (whole: string) => Promise<string>): Promise<string>;
