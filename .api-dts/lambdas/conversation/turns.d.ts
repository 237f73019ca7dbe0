import { type MessageResponse, type ToolUseBlock } from '../records/messages.js';
import type { AgentDefinition, RunView } from '../define.js';
import type { BreakerState } from '../records/breaker-state.js';
import { type BlobStore, type RunLedger, type TurnLedger } from '../ledger/ledger.js';
import type { KillFlag, RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
export declare function toolUses(turn: TurnRecord): ToolUseBlock[];
/**
 * The agent with what its `deps` build (once per container, the object `execute` gets), for its
 * approval rules: whichever step asks a rule (CallModel and BudgetCheck planning the call,
 * RequestApproval, CallTool), the rule gets them. The wiring hands its steps this agent.
 */
export declare function withAgentDeps(agent: AgentDefinition, deps: () => unknown): AgentDefinition;
/** What the agent's `deps` build, for its approval rules; undefined for an agent not wired by withAgentDeps. */
export declare function agentDepsOf(agent: AgentDefinition): unknown;
/**
 * The run's completed calls, among them every one of turns 1..`throughTurn` (later ones too, when
 * known). From the steps' conversation cache: usually no read beyond the step's own (completed
 * calls never change); the conversation is read only when the cache does not cover those turns.
 */
export declare function completedCallsThrough(ledger: TurnLedger & BlobStore, runId: string, throughTurn: number): Promise<ToolCallRecord[]>;
/**
 * Tells this process's conversation cache of a turn a step read (it learns it if it is the next
 * one it lacks), so that with the calls it completes (`rememberCall`) a later turn's approval rule
 * needs no read: CallTool learns each turn whose calls it makes, as its own loadStep reads it.
 */
export declare function rememberTurn(ledger: object, turn: TurnRecord): void;
/** Tells this process's conversation cache of a call a step just completed, so that later rules need not read it back. */
export declare function rememberCall(ledger: object, record: ToolCallRecord): void;
export declare function runView(run: RunRecord): RunView;
export declare function loadRun(ledger: Pick<RunLedger, 'getRun'>, runId: string): Promise<RunRecord>;
/** The recorded turn `turnNumber` of a run, which the step was handed a call of. */
export declare function loadTurn(ledger: Pick<TurnLedger, 'getTurn'>, runId: string, turnNumber: number): Promise<TurnRecord>;
/** The idempotency key of a tool call: the same for every attempt, every resume, every engine. */
export declare function idempotencyKey(runId: string, turn: number, toolCallId: string): string;
export interface ConversationStep {
    run: RunRecord;
    globalKill?: KillFlag;
    /** The breaker asked for, as read (absent when never saved). */
    breaker: {
        state?: BreakerState;
    };
    /** Every recorded turn of the run, in order. */
    turns: TurnRecord[];
    /** Every completed tool call of those turns. */
    calls: ToolCallRecord[];
}
/**
 * What BudgetCheck and CallModel need, usually in one round trip: the run, the global kill, a
 * breaker, and the whole conversation — the known part from memory, the new part (the next two
 * turns, the calls of the next one on a guess, the calls still open) in the same batched read.
 * When that read shows more is new (a run driven by another process meanwhile), the rest of the
 * partition from the first unsettled turn is queried.
 */
export declare function loadConversationStep(ledger: TurnLedger & BlobStore, runId: string, breaker?: string): Promise<ConversationStep>;
/** The number of leading tool calls of `turn` among `calls` (completed ones). */
export declare function completedCallsOf(turn: TurnRecord, calls: readonly ToolCallRecord[]): number;
/** A recorded turn as the model's response again (the replay and the benchmark's scripted model answer with it). */
export declare function recordedResponse(recorded: TurnRecord, model: string, id: string): MessageResponse;
/** What one recorded model turn (a compaction included) adds to its run's counters. */
export declare function turnCounts(record: Pick<TurnRecord, 'usage' | 'costMicros'>): {
    steps: number;
    modelTurns: number;
    inputTokens: number;
    outputTokens: number;
    cachedInputTokens: number;
    costMicros: number;
};
