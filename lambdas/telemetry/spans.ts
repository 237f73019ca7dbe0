import { createHash } from 'node:crypto';
import { guaranteeOf, type ToolDefinition, type TraceRedactor } from '../define.js';
import { canonicalJson } from '../ledger/seal.js';
import { withoutDeliveryMark } from '../ledger/approval-protocol.js';
import type { ApprovalRecord, RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
import { inputTokensOf } from '../records/messages.js';
import { executionChain } from '../guards/history.js';
import { spentBy } from '../guards/budgets.js';
import { COUNTED_GUARDS, remainingOf, spentOf, type Spent } from '../records/guards.js';
import { MODEL_PROVIDERS } from '../models/providers.js';
import { resultField } from '../runs/child-tree.js';

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
 * parent's root to each fork's; a child run's root (`defineAgentTool`) links to the execute_tool
 * span of the parent's call that started it, and that span to the child's root. (Links, not a
 * parent context: each run is a trace of its own, whose ids derive from its run id alone.)
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
  readonly links: readonly { traceId: string; spanId: string; attributes: Readonly<Record<string, AttributeValue>> }[];
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
  readonly tools?: readonly Pick<ToolDefinition, 'name' | 'effect' | 'idempotencyKeys' | 'reconcile' | 'child'>[];
}

/** The records one run's trace is derived from (`TurnLedger.listConversation` plus the run). */
export interface RunRecords {
  readonly run: RunRecord;
  readonly turns: readonly TurnRecord[];
  readonly calls: readonly ToolCallRecord[];
  readonly approvals: readonly ApprovalRecord[];
}

const hex = (text: string, length: number) => createHash('sha256').update(text).digest('hex').slice(0, length);

/** The trace id of a run: the same for every execution, retry and resume of it. */
export const traceIdOf = (runId: string): string => hex(`savepoint trace v1\0${runId}`, 32);

/** The span id of one place in a run (`run`, `turn/3`, `call/3/1`, …). */
export const spanIdOf = (runId: string, place: string): string => hex(`savepoint span v1\0${runId}\0${place}`, 16);

export const runSpanId = (runId: string) => spanIdOf(runId, 'run');
export const turnSpanId = (runId: string, turn: number) => spanIdOf(runId, `turn/${turn}`);
export const callSpanId = (runId: string, turn: number, call: number) => spanIdOf(runId, `call/${turn}/${call}`);

/** The provider (its `gen_ai.provider.name`, its descriptor's `otelName`) and model of a `provider:model` spec. */
export function providerAndModel(spec: string): { provider: string; model: string } {
  const colon = spec.indexOf(':');
  if (colon < 0) return { provider: 'unknown', model: spec };
  const provider = spec.slice(0, colon);
  return { provider: MODEL_PROVIDERS.descriptor(provider)?.otelName ?? provider, model: spec.slice(colon + 1) };
}

/**
 * A digest of the record as the ledger sealed it (its canonical JSON): two exports of the same
 * record carry the same digest, and a changed record a different one. (The HMAC seal itself stays in
 * the ledger: it is keyed, and no role returns it.) A decision's `undelivered` mark is left out: it
 * is dropped once the decision reaches its run (ApprovalRecord), which changes no decision, and the
 * live export (as the decision is written) and a rebuilt one (after) name the same record.
 */
export const recordDigest = (record: TurnRecord | ToolCallRecord | RunRecord | ApprovalRecord): string =>
  createHash('sha256').update(canonicalJson('undelivered' in record ? withoutDeliveryMark(record) : record)).digest('base64url');

const ms = (iso: string | undefined, fallback: number) => (iso === undefined ? fallback : new Date(iso).getTime());
const dollars = (micros: number) => micros / 1_000_000;

/** A span of run `runId`'s trace, its id from `place` (the same span for the same place on every export). */
function base(runId: string, place: string, { name, kind, startMs, endMs }: { name: string; kind: SpanRecord['kind']; startMs: number; endMs: number }) {
  return { traceId: traceIdOf(runId), spanId: spanIdOf(runId, place), parentSpanId: runSpanId(runId), name, kind, startMs, endMs: Math.max(startMs, endMs) };
}

function content(options: ContentOptions, record: TurnRecord | ToolCallRecord, attribute: string, value: unknown): Record<string, string> {
  if (!options.content || value === undefined) return {};
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const kept = options.redact ? options.redact(attribute, text, record) : text;
  return kept === undefined ? {} : { [attribute]: kept };
}

/**
 * A turn's finish reason as the conventions name it (their `FinishReason`: `stop`, `length`,
 * `content_filter`, `tool_call`, `error`). The ledger records every provider's reason in Anthropic's
 * words (models/openai.ts, bedrock.ts map theirs to them); a reason with no counterpart stays as it is.
 */
const FINISH_REASONS: Readonly<Record<string, string>> = { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool_call' };
export const finishReasonOf = (stopReason: string): string => FINISH_REASONS[stopReason] ?? stopReason;

/**
 * A turn's content as the parts of the conventions' output message: text as `{ type: 'text',
 * content }`, a tool call as `{ type: 'tool_call', id, name, arguments }`.
 */
const partOf = (block: TurnRecord['content'][number]) =>
  block.type === 'text' ? { type: 'text', content: block.text } : block.type === 'tool_use' ? { type: 'tool_call', id: block.id, name: block.name, arguments: block.input } : block;

/**
 * A tool call's `error.type` when it answered the model an error: the code its recorded result
 * names (`invalid_arguments`, `unknown_tool`, `timeout`, `tool_failed`, `invalid_request`,
 * `malformed_response`, `terminal`, `outcome_unknown`, …: tools/failures.ts and
 * conversation/tool-calls.ts make them), else the conventions' fallback `_OTHER`. The span and the
 * duration point (metrics.ts) carry the same.
 */
export function toolErrorType(call: Pick<ToolCallRecord, 'result'>): string {
  try {
    const code = (JSON.parse(call.result ?? '') as { error?: unknown } | null)?.error;
    return typeof code === 'string' && /^[a-z][a-z0-9_.]*$/.test(code) ? code : '_OTHER';
  } catch {
    return '_OTHER';
  }
}

/**
 * The model a turn's answer came from (`gen_ai.response.model`): as the provider named it in its
 * answer, when the turn recorded that (an alias answers as the dated snapshot it resolved to); else
 * the model asked for — a Bedrock model id, which names one version, or a turn recorded before the
 * provider's name was kept (traced so then).
 */
export function responseModelOf(turn: Pick<TurnRecord, 'model' | 'responseModel'>): string {
  return turn.responseModel ?? providerAndModel(turn.model).model;
}

/** `chat {model}`: one model turn, from its record. */
export function turnSpan(turn: TurnRecord, options: ContentOptions = {}): SpanRecord {
  const { provider, model } = providerAndModel(turn.model);
  const endMs = ms(turn.recordedAt, 0);
  const cacheRead = turn.usage.cache_read_input_tokens ?? 0;
  const cacheCreation = turn.usage.cache_creation_input_tokens ?? 0;
  return {
    ...base(turn.runId, `turn/${turn.turn}`, { name: `chat ${model}`, kind: 'client', startMs: endMs - turn.latencyMs, endMs }),
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': model,
      'gen_ai.response.model': responseModelOf(turn),
      // The provider's id of its answer, when it gave one (Bedrock's Converse API gives none).
      ...(turn.responseId !== undefined && { 'gen_ai.response.id': turn.responseId }),
      'gen_ai.conversation.id': turn.runId,
      'gen_ai.response.finish_reasons': [finishReasonOf(turn.stopReason)],
      // The conventions count cached tokens inside input_tokens; Anthropic's input_tokens excludes
      // them: the sum, as the ledger's counters hold it.
      'gen_ai.usage.input_tokens': inputTokensOf(turn.usage),
      'gen_ai.usage.output_tokens': turn.usage.output_tokens,
      'gen_ai.usage.cache_read.input_tokens': cacheRead,
      'gen_ai.usage.cache_creation.input_tokens': cacheCreation,
      'savepoint.turn': turn.turn,
      'savepoint.cost.usd': dollars(turn.costMicros),
      'savepoint.executed': true,
      'savepoint.record.digest': recordDigest(turn),
      ...(turn.compaction && { 'savepoint.compaction.covers': turn.compaction.covers }),
      ...(turn.fingerprint && { 'savepoint.fingerprint': turn.fingerprint }),
      ...content(options, turn, 'gen_ai.output.messages', [{ role: 'assistant', parts: turn.content.map(partOf), finish_reason: finishReasonOf(turn.stopReason) }]),
    },
    links: [],
    status: 'unset',
  };
}

/** `execute_tool {tool}`: one tool call, from its completed record. */
export function callSpan(call: ToolCallRecord, options: SpanOptions = {}): SpanRecord {
  const tool = options.tools?.find((one) => one.name === call.name);
  const endMs = ms(call.recordedAt, ms(call.leaseUntil, 0));
  const refused = call.outcome === 'rejected' || call.outcome === 'expired';
  return {
    ...base(call.runId, `call/${call.turn}/${call.call}`, { name: `execute_tool ${call.name}`, kind: 'internal', startMs: endMs - (call.latencyMs ?? 0), endMs }),
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.toolCallId,
      'gen_ai.tool.type': 'function',
      'gen_ai.conversation.id': call.runId,
      'savepoint.turn': call.turn,
      'savepoint.call': call.call,
      'savepoint.tool.effect': call.effect,
      // What the tool promises of its effect (define/tool.ts): exactly-once needs keys or a reconcile.
      ...(tool && { 'savepoint.tool.guarantee': guaranteeOf(tool) }),
      // Claims of the call: more than one is a takeover after a crash (the same key re-sent).
      'savepoint.attempt': Math.max(1, call.attempts),
      'savepoint.tool.outcome': call.outcome ?? 'in_flight',
      // A refused call (approval rejected or expired) never reached the outside system.
      'savepoint.executed': call.status === 'completed' && !refused,
      'savepoint.record.digest': recordDigest(call),
      ...(call.outcome === 'error' && { 'error.type': toolErrorType(call) }),
      ...content(options, call, 'gen_ai.tool.call.arguments', call.args),
      ...content(options, call, 'gen_ai.tool.call.result', call.result),
    },
    links: childRunLinks(call, tool),
    status: call.outcome === 'error' ? 'error' : 'unset',
    ...(call.outcome === 'error' && { statusMessage: 'the tool returned an error to the model' }),
  };
}

/**
 * An agent tool's call (`defineAgentTool`) links to the root of the child run that answered it,
 * named by its recorded result (a fork's copied call names its parent's child), in the child's
 * own trace; the child's root links back (`lineageLinks`).
 */
function childRunLinks(call: ToolCallRecord, tool: Pick<ToolDefinition, 'child'> | undefined): SpanRecord['links'] {
  const child = tool?.child && call.status === 'completed' ? resultField(call, 'childRunId') : undefined;
  return child ? [{ traceId: traceIdOf(child), spanId: runSpanId(child), attributes: { 'savepoint.link': 'child_run', 'savepoint.child.run': child } }] : [];
}

/**
 * A retried attempt that found its result recorded and counted (it did nothing): marked as not
 * executed, linked to the span of the call or turn that did the work. Its id is derived too, so
 * the same replay seen twice is one span. It carries no `gen_ai.usage.*`: it spent no tokens, and a
 * backend that sums a trace's usage over its spans would count the turn's twice.
 */
export function replaySpan(record: TurnRecord | ToolCallRecord, atMs: number, options: SpanOptions = {}): SpanRecord {
  const original = record.kind === 'turn' ? turnSpan(record) : callSpan(record, { ...(options.tools && { tools: options.tools }) });
  const place = record.kind === 'turn' ? `replay/turn/${record.turn}` : `replay/call/${record.turn}/${record.call}`;
  return {
    ...base(record.runId, place, { name: original.name, kind: original.kind, startMs: atMs, endMs: atMs }),
    attributes: { ...withoutUsage(original.attributes), 'savepoint.executed': false, 'savepoint.replay': true },
    links: [{ traceId: original.traceId, spanId: original.spanId, attributes: { 'savepoint.link': 'replay_of' } }],
    status: 'unset',
  };
}

const withoutUsage = (attributes: SpanRecord['attributes']): SpanRecord['attributes'] => Object.fromEntries(Object.entries(attributes).filter(([name]) => !name.startsWith('gen_ai.usage.')));

/** `savepoint.approval`: a decided approval (a pending one has no end yet), linked to the call it guards. */
export function approvalSpan(approval: ApprovalRecord): SpanRecord | undefined {
  if (approval.status === 'pending' || approval.decidedAt === undefined) return undefined;
  const place = approval.budget ? `approval/budget/${approval.budget.guard}/${approval.budget.extension}` : `approval/${approval.turn}/${approval.call}`;
  return {
    ...base(approval.runId, place, { name: `savepoint.approval ${approval.toolName}`, kind: 'internal', startMs: ms(approval.createdAt, 0), endMs: ms(approval.decidedAt, 0) }),
    attributes: {
      'gen_ai.conversation.id': approval.runId,
      'savepoint.approval.id': approval.approvalId,
      'savepoint.approval.decision': approval.status,
      ...(approval.decidedVia && { 'savepoint.approval.via': approval.decidedVia }),
      ...(approval.waitedMs !== undefined && { 'savepoint.approval.waited_ms': approval.waitedMs }),
      ...(approval.budget && { 'savepoint.approval.budget': approval.budget.guard }),
      'savepoint.record.digest': recordDigest(approval),
    },
    links: approval.budget ? [] : [{ traceId: traceIdOf(approval.runId), spanId: callSpanId(approval.runId, approval.turn, approval.call), attributes: { 'savepoint.link': 'guards' } }],
    status: 'unset',
  };
}

/**
 * The run's own spans, from its record once it has ended: `invoke_agent` with its totals and the
 * budgets left, and one span per guard event, the last recovery and each migration.
 */
export function runSpans(run: RunRecord): SpanRecord[] {
  const { runId } = run;
  const endMs = ms(run.finishedAt, ms(run.updatedAt, 0));
  const root: SpanRecord = {
    traceId: traceIdOf(runId),
    spanId: runSpanId(runId),
    name: `invoke_agent ${run.agent}`,
    kind: 'internal',
    startMs: ms(run.createdAt, 0),
    endMs,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': run.agent,
      ...(run.agentVersion && { 'gen_ai.agent.version': run.agentVersion }),
      'gen_ai.agent.id': runId,
      'gen_ai.conversation.id': runId,
      'gen_ai.provider.name': providerAndModel(run.model).provider,
      'gen_ai.request.model': providerAndModel(run.model).model,
      'gen_ai.request.max_tokens': run.config.maxTokensPerTurn,
      'gen_ai.usage.input_tokens': run.inputTokens,
      'gen_ai.usage.output_tokens': run.outputTokens,
      'gen_ai.usage.cache_read.input_tokens': run.cachedInputTokens,
      'savepoint.status': run.status,
      ...(run.stopReason && { 'savepoint.stop_reason': run.stopReason }),
      // The error the run failed with (an `ErrorNames` name, e.g. `Agent.Terminal`): the conventions' error.type.
      ...(run.status === 'failed' && { 'error.type': run.error?.error ?? '_OTHER' }),
      'savepoint.steps': run.steps,
      'savepoint.model_turns': run.modelTurns,
      'savepoint.tool_calls': run.toolCalls,
      'savepoint.cost.usd': dollars(run.costMicros),
      ...budgetAttributes('remaining', run.config, spentBy(run)),
      'savepoint.executions': run.executions.length,
      'savepoint.fingerprint': run.fingerprint,
      'savepoint.price_table': run.priceTableVersion,
      'savepoint.record.digest': recordDigest(run),
    },
    links: lineageLinks(run),
    status: run.status === 'failed' ? 'error' : 'unset',
    ...(run.status === 'failed' && { statusMessage: run.error?.error ?? run.stopReason ?? 'failed' }),
  };
  const guards = (run.guardEvents ?? []).map((event, index): SpanRecord => ({
    ...base(runId, `guard/${index}`, { name: `savepoint.guard ${event.guard}`, kind: 'internal', startMs: ms(event.at, endMs), endMs: ms(event.at, endMs) }),
    attributes: { 'gen_ai.conversation.id': runId, 'savepoint.guard': event.guard, 'savepoint.guard.action': event.action, 'savepoint.guard.reason': event.reason },
    links: [],
    status: 'unset',
  }));
  const recovery: SpanRecord[] = run.recovery
    ? [{
        ...base(runId, `recovery/${run.recovery.attempts}`, { name: 'savepoint.recovery', kind: 'internal', startMs: ms(run.recovery.at, endMs), endMs: ms(run.recovery.at, endMs) }),
        attributes: {
          'gen_ai.conversation.id': runId,
          'savepoint.recovery.attempts': run.recovery.attempts,
          'savepoint.recovery.reason': run.recovery.reason,
          'savepoint.recovery.execution': run.recovery.executionName,
        },
        links: [],
        status: 'unset',
      }]
    : [];
  const chain = executionChain(run);
  const attachmentOf = (executionArn: string) => {
    const index = run.executions.lastIndexOf(executionArn);
    return (run.attachments ?? []).find((attachment) => attachment.execution === index);
  };
  const migrations = (run.migrations ?? []).map((migration, index): SpanRecord => {
    const attachment = attachmentOf(migration.to.executionArn);
    return {
      ...base(runId, `migrate/${index}`, { name: 'savepoint.migrate', kind: 'internal', startMs: ms(migration.at, endMs), endMs: ms(migration.at, endMs) }),
      attributes: {
        'gen_ai.conversation.id': runId,
        'savepoint.migrate.by': migration.by,
        ...(migration.from.version && { 'savepoint.migrate.from': migration.from.version }),
        ...(migration.to.version && { 'savepoint.migrate.to': migration.to.version }),
        ...(attachment && { 'savepoint.execution.index': attachment.execution, 'savepoint.execution.name': chain[attachment.execution]!.name }),
      },
      links: attachment ? [continues(runId, attachment.modelTurns)] : [],
      status: 'unset',
    };
  });
  // A resume (a recovery included) or a handoff: an execution that took the run over. A migration's
  // execution has its span above.
  const takeovers = (run.attachments ?? []).flatMap((attachment): SpanRecord[] => {
    const execution = chain[attachment.execution];
    if (!execution || execution.via === 'start' || execution.via === 'migrate') return [];
    const at = ms(attachment.at, endMs);
    return [{
      ...base(runId, `execution/${attachment.execution}`, { name: `savepoint.${execution.via}`, kind: 'internal', startMs: at, endMs: at }),
      attributes: {
        'gen_ai.conversation.id': runId,
        'savepoint.execution.index': attachment.execution,
        'savepoint.execution.name': execution.name,
        'savepoint.execution.via': execution.via,
        'savepoint.model_turns': attachment.modelTurns,
      },
      links: [continues(runId, attachment.modelTurns)],
      status: 'unset',
    }];
  });
  return [root, ...guards, ...recovery, ...migrations, ...takeovers];
}

/**
 * The link from an execution that took a run over to where the run was then: its last recorded
 * model turn (the run's own span before the first). Both ids are derived, so the link is the same
 * live and in `savepoint trace`.
 */
const continues = (runId: string, modelTurns: number) => ({
  traceId: traceIdOf(runId),
  spanId: modelTurns > 0 ? turnSpanId(runId, modelTurns) : runSpanId(runId),
  attributes: { 'savepoint.link': 'continues', 'savepoint.turn': modelTurns },
});

/**
 * The root's links across traces: a fork to the turn of its parent it was forked after (the
 * parent's run span when forked before any turn), and a parent to each of its forks.
 */
function lineageLinks(run: RunRecord): SpanRecord['links'] {
  const from = run.forkedFrom;
  const parent = from
    ? [{
        traceId: traceIdOf(from.runId),
        spanId: from.turn > 1 ? turnSpanId(from.runId, from.turn - 1) : runSpanId(from.runId),
        attributes: { 'savepoint.link': 'forked_from', 'savepoint.fork.run': from.runId, 'savepoint.fork.turn': from.turn, 'savepoint.fork.effects': from.effects },
      }]
    : [];
  const forks = (run.forks ?? []).map((fork) => ({
    traceId: traceIdOf(fork.runId),
    spanId: runSpanId(fork.runId),
    attributes: { 'savepoint.link': 'forked_to', 'savepoint.fork.run': fork.runId, 'savepoint.fork.turn': fork.turn },
  }));
  // A child run (defineAgentTool) to the execute_tool span of the parent's call that started it.
  const caller = run.parent
    ? [{
        traceId: traceIdOf(run.parent.runId),
        spanId: callSpanId(run.parent.runId, run.parent.turn, run.parent.call),
        attributes: { 'savepoint.link': 'child_of', 'savepoint.parent.run': run.parent.runId, 'savepoint.turn': run.parent.turn, 'savepoint.call': run.parent.call },
      }]
    : [];
  return [...parent, ...forks, ...caller];
}

/**
 * `savepoint.budget.used.<name>` or `savepoint.budget.remaining.<name>` of each counted budget
 * (records/guards.ts), in its row's order: `steps`, `tokens`, `usd`.
 */
function budgetAttributes(kind: 'used' | 'remaining', config: RunRecord['config'], spent: Spent): Record<string, number> {
  return Object.fromEntries(
    COUNTED_GUARDS.map((row) => [`savepoint.budget.${kind}.${row.counted.telemetry}`, kind === 'used' ? spentOf(row, spent) : remainingOf(row, config[row.field], spent)]),
  );
}

/**
 * `savepoint.budget_check`: one span per decision that let a model turn through, and one for the
 * check that ended the run, rebuilt from the records rather than recorded: the decision (BudgetCheck's, CallModel's before its call) is made
 * from persisted counters only (budget-check.ts `decide`), so what it saw before turn N is the sum
 * of the records before it, and that turn N exists is its verdict (`continue`). Recording each
 * check instead would cost a ledger write per step; this costs nothing on the way.
 *
 * Its times bound the check: from the end of the step before (the run's start for the first) to the
 * start of the model call it let through (the run's end for the last). The remaining budgets are
 * against the run's final limits (`savepoint.budget.extended` says an approved extension raised one
 * on the way). A compaction turn is not preceded by a check of its own.
 */
export function budgetCheckSpans(records: RunRecords): SpanRecord[] {
  const { run } = records;
  const { runId, config } = run;
  const calls = [...records.calls].filter((call) => call.status === 'completed').sort((a, b) => a.turn - b.turn || a.call - b.call);
  const turns = [...records.turns].sort((a, b) => a.turn - b.turn);
  const extended = Object.values(run.budgetExtensions ?? {}).some((count) => (count ?? 0) > 0);
  const used = { steps: 0, tokens: 0, micros: 0 };
  let previousEnd = ms(run.createdAt, 0);
  const check = (place: string, startMs: number, endMs: number, verdict: string, extra: Record<string, AttributeValue>): SpanRecord => ({
    ...base(runId, place, { name: 'savepoint.budget_check', kind: 'internal', startMs, endMs }),
    attributes: {
      'gen_ai.conversation.id': runId,
      'savepoint.budget_check.verdict': verdict,
      ...budgetAttributes('used', config, used),
      ...budgetAttributes('remaining', config, used),
      ...(extended && { 'savepoint.budget.extended': true }),
      ...extra,
    },
    links: [],
    status: 'unset',
  });
  const spans: SpanRecord[] = [];
  let next = 0;
  for (const turn of turns) {
    const endMs = ms(turn.recordedAt, 0);
    const startMs = endMs - turn.latencyMs;
    if (!turn.compaction) spans.push(check(`budget_check/${turn.turn}`, previousEnd, startMs, 'continue', { 'savepoint.turn': turn.turn }));
    used.steps += 1;
    used.tokens += inputTokensOf(turn.usage) + turn.usage.output_tokens;
    used.micros += turn.costMicros;
    previousEnd = Math.max(previousEnd, endMs);
    // The turn's calls ran before the next check.
    for (; next < calls.length && calls[next]!.turn <= turn.turn; next++) {
      used.steps += 1;
      previousEnd = Math.max(previousEnd, ms(calls[next]!.recordedAt, previousEnd));
    }
  }
  if (run.status !== 'running') {
    spans.push(check('budget_check/end', previousEnd, ms(run.finishedAt, ms(run.updatedAt, previousEnd)), run.status, { ...(run.stopReason && { 'savepoint.stop_reason': run.stopReason }) }));
  }
  return spans;
}

/**
 * The whole trace of a run from its records: what `savepoint trace` exports. The run's own spans
 * only once it has ended (an unfinished run's root has no end yet); calls still in flight are left
 * out (their span comes when they complete).
 */
export function traceOf(records: RunRecords, options: SpanOptions = {}): SpanRecord[] {
  return [
    ...(records.run.status === 'running' ? [] : [...runSpans(records.run), ...budgetCheckSpans(records)]),
    ...records.turns.map((turn) => turnSpan(turn, options)),
    ...records.calls.filter((call) => call.status === 'completed').map((call) => callSpan(call, options)),
    ...records.approvals.flatMap((approval) => approvalSpan(approval) ?? []),
  ];
}
