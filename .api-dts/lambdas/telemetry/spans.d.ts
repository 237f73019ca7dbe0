import { type ToolDefinition, type TraceRedactor } from '../define.js';
import type { ApprovalRecord, RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
/**
 * A run's trace, derived from its sealed ledger records by pure functions: the live export
 * (tracing-ledger.ts) and `savepoint trace <runId>` (after the fact) both call them, so the two are
 * the same trace by construction.
 *
 * Conventions: the OpenTelemetry GenAI semantic conventions as published in semantic-conventions
 * v1.45.0 (the `gen_ai.*` registry of `@opentelemetry/semantic-conventions/incubating` 1.45.0;
 * status Development, i.e. the `gen_ai_latest_experimental` shape):
 *
 *   invoke_agent {agent}     INTERNAL  the run (root)                 emitted when the run ends
 *   ├─ chat {model}          CLIENT    one per model turn (compaction included)
 *   ├─ execute_tool {tool}   INTERNAL  one per tool call
 *   ├─ savepoint.approval    INTERNAL  one per decided approval, linked to its tool call
 *   ├─ savepoint.guard       INTERNAL  one per guard event (a budget warned or stopped, a kill, a loop)
 *   ├─ savepoint.budget_check INTERNAL one per check that let a turn through, and the last one
 *                                      (rebuilt from the records when the run ends: budgetCheckSpans)
 *   ├─ savepoint.recovery    INTERNAL  the run's last recorded recovery
 *   ├─ savepoint.migrate     INTERNAL  one per move to another version of the agent
 *   └─ savepoint.resume / savepoint.handoff  INTERNAL  one per execution that took the run over
 *
 * Span links: a resume, handoff or migration links to the run's last turn when it took over
 * (`RunRecord.attachments`); a fork's root links to its parent's trace at the fork's turn, and a
 * parent's root to each fork's.
 *
 * Durable identity: the trace id is a hash of the run id, each span id a hash of the run id and
 * the record's place (turn, call), never of an attempt or an execution. A retry, a resume after a
 * crash, a recovery or a continue-as-new touch the same records, so they give the same ids; a
 * span is never open for the life of a run (each is built once its record is complete).
 *
 * What never goes into an attribute: an idempotency key, a task token (the ledger returns none),
 * a secret. Content (messages, tool arguments and results) only with `content` set: the
 * conventions make it opt-in, and `redact` sees each value first.
 */
/** A span as savepoint derives it; export.ts hands it to the OpenTelemetry SDK. */
export interface SpanRecord {
    readonly traceId: string;
    readonly spanId: string;
    readonly parentSpanId?: string;
    readonly name: string;
    readonly kind: 'internal' | 'client';
    /** Epoch milliseconds. */
    readonly startMs: number;
    readonly endMs: number;
    readonly attributes: Readonly<Record<string, AttributeValue>>;
    readonly links: readonly {
        traceId: string;
        spanId: string;
        attributes: Readonly<Record<string, AttributeValue>>;
    }[];
    readonly status: 'unset' | 'error';
    readonly statusMessage?: string;
}
export type AttributeValue = string | number | boolean | readonly string[];
/** Which content attributes a span may carry, and what is done to each value first. */
export interface ContentOptions {
    /**
     * Record message and tool argument/result content (`gen_ai.output.messages`,
     * `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). @default false
     */
    readonly content?: boolean;
    /**
     * Sees each content value (already JSON text) before it is recorded: returns the text to record,
     * or `undefined` to leave the attribute out. @default records the value as it is
     */
    readonly redact?: TraceRedactor;
}
/** How spans are derived: the content options, and the agent's tools (for each call's guarantee). */
export interface SpanOptions extends ContentOptions {
    /** The agent's tools: `savepoint.tool.guarantee` is the named tool's (`guaranteeOf`). @default none: no guarantee attribute */
    readonly tools?: readonly Pick<ToolDefinition, 'name' | 'effect' | 'idempotencyKeys' | 'reconcile'>[];
}
/** The records one run's trace is derived from (`TurnLedger.listConversation` plus the run). */
export interface RunRecords {
    readonly run: RunRecord;
    readonly turns: readonly TurnRecord[];
    readonly calls: readonly ToolCallRecord[];
    readonly approvals: readonly ApprovalRecord[];
}
/** The trace id of a run: the same for every execution, retry and resume of it. */
export declare const traceIdOf: (runId: string) => string;
/** The span id of one place in a run (`run`, `turn/3`, `call/3/1`, …). */
export declare const spanIdOf: (runId: string, place: string) => string;
export declare const runSpanId: (runId: string) => string;
export declare const turnSpanId: (runId: string, turn: number) => string;
export declare const callSpanId: (runId: string, turn: number, call: number) => string;
/** The provider (its `gen_ai.provider.name`, its descriptor's `otelName`) and model of a `provider:model` spec. */
export declare function providerAndModel(spec: string): {
    provider: string;
    model: string;
};
/**
 * A digest of the record as the ledger sealed it (its canonical JSON): two exports of the same
 * record carry the same digest, and a changed record a different one. (The HMAC seal itself stays in
 * the ledger: it is keyed, and no role returns it.)
 */
export declare const recordDigest: (record: TurnRecord | ToolCallRecord | RunRecord | ApprovalRecord) => string;
/** `chat {model}`: one model turn, from its record. */
export declare function turnSpan(turn: TurnRecord, options?: ContentOptions): SpanRecord;
/** `execute_tool {tool}`: one tool call, from its completed record. */
export declare function callSpan(call: ToolCallRecord, options?: SpanOptions): SpanRecord;
/**
 * A retried attempt that found its result recorded and counted (it did nothing): marked as not
 * executed, linked to the span of the call or turn that did the work. Its id is derived too, so
 * the same replay seen twice is one span.
 */
export declare function replaySpan(record: TurnRecord | ToolCallRecord, atMs: number, options?: SpanOptions): SpanRecord;
/** `savepoint.approval`: a decided approval (a pending one has no end yet), linked to the call it guards. */
export declare function approvalSpan(approval: ApprovalRecord): SpanRecord | undefined;
/**
 * The run's own spans, from its record once it has ended: `invoke_agent` with its totals and the
 * budgets left, and one span per guard event, the last recovery and each migration.
 */
export declare function runSpans(run: RunRecord): SpanRecord[];
/**
 * `savepoint.budget_check`: one span per BudgetCheck that let a model turn through, and one for the
 * check that ended the run, rebuilt from the records rather than recorded: BudgetCheck decides
 * from persisted counters only (budget-check.ts `decide`), so what it saw before turn N is the sum
 * of the records before it, and that turn N exists is its verdict (`continue`). Recording each
 * check instead would cost a ledger write per step; this costs nothing on the way.
 *
 * Its times bound the check: from the end of the step before (the run's start for the first) to the
 * start of the model call it let through (the run's end for the last). The remaining budgets are
 * against the run's final limits (`savepoint.budget.extended` says an approved extension raised one
 * on the way). A compaction turn is not preceded by a check of its own.
 */
export declare function budgetCheckSpans(records: RunRecords): SpanRecord[];
/**
 * The whole trace of a run from its records: what `savepoint trace` exports. The run's own spans
 * only once it has ended (an unfinished run's root has no end yet); calls still in flight are left
 * out (their span comes when they complete).
 */
export declare function traceOf(records: RunRecords, options?: SpanOptions): SpanRecord[];
