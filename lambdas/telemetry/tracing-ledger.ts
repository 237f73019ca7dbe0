import type { ApprovalLedger, GuardLedger, Ledger, RunEnd, RunEndExpected, RunLedger, ToolCallLedger, TurnLedger } from '../ledger/ledger.js';
import type { Clock } from '../shared/ports.js';
import { callMeasurements, turnMeasurements, type Measurement } from './metrics.js';
import type { SpanSink } from './sink.js';
import { approvalSpan, budgetCheckSpans, callSpan, replaySpan, runSpans, turnSpan, type SpanOptions, type SpanRecord } from './spans.js';

/**
 * The live export: the ledger roles wrapped from outside (as the crash and counting decorators
 * wrap them; the steps do not know), exporting a record's span right after the write that
 * completed it, and awaiting the collector before the step goes on, so that a process killed
 * after a step has exported that step's span (a Lambda may be frozen as soon as it returns).
 *
 *   recordTurn                      the turn written by this call        → chat {model}, its token usage and duration
 *   completeCall / recordCall       the call's outcome written           → execute_tool {tool}, its duration
 *   decideApproval                  the decision written by this call    → savepoint.approval
 *   finishRun                       the run ended                        → invoke_agent {agent}, the run's own spans and its budget checks
 *   countStep → false               a retry found its step recorded and counted: it did nothing
 *   recordCall → found completed    (a tool call's retry: calls count no step of their own)
 *                                                                        → the replay, marked not executed
 *
 * A write that found the record there already exports nothing: the attempt that wrote it did.
 * The spans come from the records the ledger returned (spans.ts), so they are the ones
 * `savepoint trace` derives afterwards. An export that fails never fails the step: it is named to
 * `onError`, the spans are dropped for a while (EXPORT_COOLDOWN_MS), and `savepoint trace` can send
 * the whole trace again later.
 */
export interface TracingOptions {
  readonly sink: SpanSink;
  readonly clock: Clock;
  /** The agent's tools, for each call's `savepoint.tool.guarantee`. @default none */
  readonly tools?: SpanOptions['tools'];
  /** An export failed (the collector is down, …). @default ignored */
  readonly onError?: (error: unknown) => void;
  /**
   * Where the run's end reads its conversation back for the budget-check spans: on AWS the
   * function's own ledger, which a traced deployment lets Query (the `traceRunEnd` grant,
   * infra/durable-agent.ts). @default the traced ledger
   */
  readonly conversationReader?: Pick<TurnLedger, 'listConversation'>;
}

export function tracingLedger(ledger: Ledger, options: TracingOptions): Ledger {
  const overrides = { ...tracingTurns(ledger, options), ...tracingCalls(ledger, options), ...tracingApprovals(ledger, options), ...tracingRuns(ledger, options), ...tracingGuards(ledger, options) };
  return new Proxy(ledger, {
    get(inner, property, receiver) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof typeof overrides];
      const value: unknown = Reflect.get(inner, property, receiver);
      return typeof value === 'function' ? value.bind(inner) : value;
    },
  });
}

const spanOptions = ({ sink, tools }: TracingOptions): SpanOptions => ({ ...sink.content, ...(tools && { tools }) });

/**
 * After a failed export the spans are dropped for this long, instead of holding every step up for
 * the exporter's timeout while the collector is down; `savepoint trace` sends them later.
 */
export const EXPORT_COOLDOWN_MS = 30_000;

function exporting(options: TracingOptions) {
  const { sink, onError, clock } = options;
  const state = (cooldowns.get(sink) ?? cooldowns.set(sink, { spans: 0, metrics: 0 }).get(sink))!;
  // Each signal has its own cooldown: a collector that takes spans and refuses metrics (no metrics
  // pipeline) must not cost the spans.
  const send = async (signal: 'spans' | 'metrics', exporting: () => Promise<{ error?: Error }> | undefined) => {
    if (clock.now().getTime() < state[signal]) return;
    const failed = (error: unknown) => {
      state[signal] = clock.now().getTime() + EXPORT_COOLDOWN_MS;
      onError?.(error);
    };
    try {
      const result = await exporting();
      if (result?.error) failed(result.error);
    } catch (error) {
      failed(error);
    }
  };
  return async (spans: readonly SpanRecord[], points: readonly Measurement[] = []): Promise<void> => {
    // The spans and the metrics go side by side: the step waits for the slower of the two.
    await Promise.all([
      spans.length > 0 ? send('spans', () => sink.export(spans)) : undefined,
      points.length > 0 && sink.measure ? send('metrics', () => sink.measure?.(points)) : undefined,
    ]);
  };
}

/** One cooldown per sink and signal, shared by the roles that export through it. */
const cooldowns = new WeakMap<SpanSink, { spans: number; metrics: number }>();

export function tracingTurns(turns: TurnLedger, options: TracingOptions): Pick<TurnLedger, 'recordTurn'> {
  const emit = exporting(options);
  return {
    async recordTurn(turn, count) {
      const stored = await turns.recordTurn(turn, count);
      // The first recording stands: another attempt's turn came back, and that attempt exported it.
      if (stored.recordedAt === turn.recordedAt) await emit([turnSpan(stored, spanOptions(options))], turnMeasurements(stored));
      return stored;
    },
  };
}

export function tracingCalls(calls: ToolCallLedger, options: TracingOptions): Pick<ToolCallLedger, 'completeCall' | 'recordCall'> {
  const emit = exporting(options);
  return {
    async completeCall(completion) {
      const completed = await calls.completeCall(completion);
      await emit([callSpan(completed, spanOptions(options))], callMeasurements(completed));
      return completed;
    },
    async recordCall(call, now, count, basis) {
      const recorded = await calls.recordCall(call, now, count, basis);
      if (recorded.recorded) await emit([callSpan(recorded.record, spanOptions(options))], callMeasurements(recorded.record));
      // A retry found its call recorded (CallTool writes it again, and the first stands): it did nothing.
      else if (recorded.existing.status === 'completed') await emit([replaySpan(recorded.existing, options.clock.now().getTime(), spanOptions(options))]);
      return recorded;
    },
  };
}

export function tracingApprovals(approvals: ApprovalLedger, options: TracingOptions): Pick<ApprovalLedger, 'decideApproval'> {
  const emit = exporting(options);
  return {
    async decideApproval(key, decision, now) {
      const decided = await approvals.decideApproval(key, decision, now);
      const span = decided.decided ? approvalSpan(decided.record) : undefined;
      if (span) await emit([span]);
      return decided;
    },
  };
}

export function tracingRuns(runs: RunLedger & Pick<TurnLedger, 'listConversation'>, options: TracingOptions): Pick<RunLedger, 'finishRun'> {
  const emit = exporting(options);
  // Both forms of finishRun (ledger.ts); an end another call wrote (`undefined`) exports nothing: that call did.
  const finishRun = async (runId: string, outcome: RunEnd, now: Date, expected?: RunEndExpected) => {
    const finished = expected ? await runs.finishRun(runId, outcome, now, expected) : await runs.finishRun(runId, outcome, now);
    if (!finished) return undefined;
    // The budget checks are rebuilt from the whole conversation: one read per run, at its end.
    const checks = await (options.conversationReader ?? runs).listConversation(runId).then(
      (conversation) => budgetCheckSpans({ run: finished, ...conversation }),
      (error: unknown) => (options.onError?.(error), []),
    );
    await emit([...runSpans(finished), ...checks]);
    return finished;
  };
  return { finishRun: finishRun as RunLedger['finishRun'] };
}

/** The step keys CallModel and CallTool count by (`turn:3`, `call:3:1`). */
const STEP_KEY = /^(?:turn:(\d+)|call:(\d+):(\d+))$/;

export function tracingGuards(ledger: GuardLedger & TurnLedger & ToolCallLedger, options: TracingOptions): Pick<GuardLedger, 'countStep'> {
  const emit = exporting(options);
  return {
    async countStep(runId, stepKey, deltas, calls) {
      const counted = await ledger.countStep(runId, stepKey, deltas, calls);
      const match = counted ? null : STEP_KEY.exec(stepKey);
      if (match) {
        // Only on this rare path (a step repeated after it had counted) is the record read again.
        const record = match[1] !== undefined ? await ledger.getTurn(runId, Number(match[1])) : await ledger.getCall(runId, Number(match[2]), Number(match[3]));
        if (record && (record.kind === 'turn' || record.status === 'completed')) await emit([replaySpan(record, options.clock.now().getTime(), spanOptions(options))]);
      }
      return counted;
    },
  };
}
