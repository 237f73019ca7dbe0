import type { ApprovalRecord, RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
import type { TurnLedger, RunLedger } from '../ledger/ledger.js';
import { toolUses } from '../conversation/turns.js';
import { runIsOver } from './run-end.js';

/**
 * A run's progress as events (`GET /v1/runs/{id}/events`), derived from the ledger's records only:
 * nothing is written for them, so following a run costs its steps nothing.
 *
 * An event's id is its fixed position in the run, never when it was seen, so that two readers (or
 * one reader before and after a crash) name the same event the same way, and comparing two ids as
 * strings orders them:
 *
 *   a.run                        run.started
 *   t000003.0.attached.0002      execution.attached   execution 2 took the run over after turn 2 (recovery, handoff, migration)
 *   t000003.1.model              model.turn           turn 3's model call
 *   t000003.2.budget             budget               tokens and dollars spent through turn 3
 *   t000003.c001.0.approval      approval.waiting     call 1 of turn 3 waits for a person
 *   t000003.c001.1.decided       approval.decided
 *   t000003.c001.2.started       tool.started         the call was claimed (a read, recorded once when done: with its result)
 *   t000003.c001.3.result        tool.result          (tool.refused: its approval was rejected or expired)
 *   t000003.x01.0.approval       approval.waiting     the 1st budget extension asked after turn 3's calls
 *   t000003.x01.1.decided        approval.decided
 *   z.run                        run.finished         the last event: the stream ends after it
 *
 * Parallel tool calls finish in any order, so only the settled prefix is sent: an event is emitted
 * when every position before it is final — filled, or known to stay empty. A later record can then
 * only add events after the last one sent, and `eventsAfter(id)` resumes with no gap and no repeat.
 *
 * Why each empty position is final when it is (the writes' order, read in `readRunRecords`' order):
 * - a call's approval is asked before the call is claimed; its claim before its result;
 * - every call of turn n is recorded before turn n+1 (CallModel refuses a turn with a call unrecorded);
 * - an execution takes a run over (`attachments`) before it records the next turn; two takeovers
 *   at the same turn keep their order by execution index;
 * - a budget extension is asked after the turn's calls, one at a time (the decision waits for each).
 * When the run is over, every empty position is final; a record changed after the run finished
 * (a late expiry of an approval it waited on) is read as it was then, so the list never changes.
 */

export type RunEventType =
  | 'run.started'
  | 'execution.attached'
  | 'model.turn'
  | 'budget'
  | 'approval.waiting'
  | 'approval.decided'
  | 'tool.started'
  | 'tool.result'
  | 'tool.refused'
  | 'run.finished';

export interface RunEvent {
  /** The event's position in the run (see above): the SSE `id`, what `Last-Event-ID` and `?after=` name. */
  readonly id: string;
  readonly type: RunEventType;
  readonly data: Readonly<Record<string, unknown>>;
}

/** What the events are derived from: the run record and its conversation (ledger `listConversation`). */
export interface RunRecords {
  readonly run: RunRecord;
  readonly turns: readonly TurnRecord[];
  readonly calls: readonly ToolCallRecord[];
  readonly approvals: readonly ApprovalRecord[];
}

/** An event id of any run (a resume point from outside is checked against it first). */
export const EVENT_ID = /^(?:a\.run|z\.run|t\d{6}\.(?:0\.attached\.\d{4}|1\.model|2\.budget|c\d{3}\.(?:0\.approval|1\.decided|2\.started|3\.result)|x\d{2}\.(?:0\.approval|1\.decided)))$/;

/** A result longer than this is not carried in its event (its size is): the run's report reads it whole. */
export const MAX_RESULT_IN_EVENT = 4096;

const pad = (value: number, width: number) => String(value).padStart(width, '0');
const turnId = (turn: number) => `t${pad(turn, 6)}`;

/** The settled prefix of the run's events, in position order (see above). */
export function settledEvents(records: RunRecords): RunEvent[] {
  const { run } = records;
  const over = runIsOver(run);
  // A record changed after the run finished is read as it was at the finish: the list, once over, never changes.
  const finishedAt = over ? run.finishedAt : undefined;
  const byTime = (at: string | undefined) => finishedAt === undefined || (at !== undefined && at <= finishedAt);
  const turns = new Map(records.turns.map((turn) => [turn.turn, turn]));
  const calls = new Map(records.calls.map((call) => [`${call.turn}:${call.call}`, call]));
  const callApprovals = new Map(records.approvals.filter((approval) => !approval.budget).map((approval) => [`${approval.turn}:${approval.call}`, approval]));
  const budgetApprovals = records.approvals.filter((approval) => approval.budget).sort((a, b) => (a.createdAt === b.createdAt ? a.budget!.extension - b.budget!.extension : a.createdAt < b.createdAt ? -1 : 1));
  const attachments = (run.attachments ?? []).slice().sort((a, b) => a.execution - b.execution);

  const events: RunEvent[] = [{ id: 'a.run', type: 'run.started', data: started(run) }];
  const emit = (id: string, type: RunEventType, data: Record<string, unknown>) => events.push({ id, type, data });
  let tokens = 0;
  let costMicros = 0;
  /** The budget extensions asked after turn n's calls, in the order asked (one at a time); false: the prefix ends here. */
  const extensions = (n: number, closed: boolean): boolean => {
    for (const [index, approval] of budgetApprovals.filter((a) => a.turn === n).entries()) {
      const prefix = `${turnId(n)}.x${pad(index + 1, 2)}`;
      emit(`${prefix}.0.approval`, 'approval.waiting', waiting(approval));
      if (approval.status !== 'pending' && byTime(approval.decidedAt)) emit(`${prefix}.1.decided`, 'approval.decided', decided(approval));
      else if (!closed) return false;
    }
    return closed;
  };
  // Budget extensions asked before the first turn.
  if (!extensions(0, over || turns.has(1))) return events;
  for (let n = 1; ; n += 1) {
    // Takeovers after turn n-1, before turn n.
    for (const attachment of attachments.filter((a) => a.modelTurns === n - 1)) {
      const migration = run.migrations?.find((m) => m.to.executionArn === run.executions[attachment.execution]);
      emit(`${turnId(n)}.0.attached.${pad(attachment.execution, 4)}`, 'execution.attached', {
        execution: attachment.execution,
        executionArn: run.executions[attachment.execution],
        afterTurn: n - 1,
        at: attachment.at,
        ...(migration && { migration: { by: migration.by, from: migration.from.version ?? migration.from.fingerprint, to: migration.to.version ?? migration.to.fingerprint } }),
      });
    }
    const turn = turns.get(n);
    if (!turn) {
      if (!over) return events;
      break;
    }
    tokens += turn.usage.input_tokens + turn.usage.output_tokens + (turn.usage.cache_read_input_tokens ?? 0) + (turn.usage.cache_creation_input_tokens ?? 0);
    costMicros += turn.costMicros;
    const uses = toolUses(turn);
    emit(`${turnId(n)}.1.model`, 'model.turn', {
      turn: n,
      model: turn.model,
      stopReason: turn.stopReason,
      usage: turn.usage,
      costMicros: turn.costMicros,
      latencyMs: turn.latencyMs,
      recordedAt: turn.recordedAt,
      toolCalls: uses.map((use, index) => ({ call: index + 1, name: use.name })),
      ...(turn.compaction && { compaction: turn.compaction }),
    });
    emit(`${turnId(n)}.2.budget`, 'budget', { turn: n, tokens, costMicros, dollars: costMicros / 1e6 });
    // A position left empty is final once the next turn is recorded (or the run is over).
    const closed = over || turns.has(n + 1);
    for (let c = 1; c <= uses.length; c += 1) {
      const prefix = `${turnId(n)}.c${pad(c, 3)}`;
      const approval = callApprovals.get(`${n}:${c}`);
      const call = calls.get(`${n}:${c}`);
      if (approval) {
        emit(`${prefix}.0.approval`, 'approval.waiting', waiting(approval));
        if (approval.status !== 'pending' && byTime(approval.decidedAt ?? approval.sharedDecision?.decidedAt)) emit(`${prefix}.1.decided`, 'approval.decided', decided(approval));
        else if (!closed) return events;
      }
      if (call) {
        emit(`${prefix}.2.started`, 'tool.started', { turn: n, call: c, name: call.name, effect: call.effect, args: call.args });
        if (call.status === 'completed' && byTime(call.recordedAt)) emit(`${prefix}.3.result`, call.outcome === 'rejected' || call.outcome === 'expired' ? 'tool.refused' : 'tool.result', result(call));
        else if (!closed) return events;
      } else if (!closed) return events; // not claimed yet: an approval may still be asked before the claim
    }
    if (!extensions(n, closed)) return events;
  }
  emit('z.run', 'run.finished', finished(run));
  return events;
}

/** Thrown for a resume point that is not an event of the run (an HTTP 400, naming `field`). */
export class UnknownEventId extends Error {
  override readonly name = 'UnknownEventId';
}

/**
 * The events after `lastEventId` (all of them without one): exactly the ones a reader that has
 * seen up to it lacks. An id that is not one of the run's settled events is refused: a client only
 * gets ids from the stream, so another one is a mistake to name, not a place to guess.
 */
export function eventsAfter(events: readonly RunEvent[], lastEventId: string | undefined, field = 'after'): RunEvent[] {
  if (lastEventId === undefined) return [...events];
  if (!EVENT_ID.test(lastEventId)) throw new UnknownEventId(`${field}: ${JSON.stringify(lastEventId.slice(0, 80))} is not an event id (e.g. t000003.1.model)`);
  const index = events.findIndex((event) => event.id === lastEventId);
  if (index < 0) throw new UnknownEventId(`${field}: the run has no event ${lastEventId}`);
  return events.slice(index + 1);
}

/** Whether `event` is the run's last (the stream ends after it). */
export const isFinal = (event: RunEvent | undefined) => event?.type === 'run.finished';

/**
 * The run's records, read so that `settledEvents` sees a consistent cut: the conversation first,
 * then the run record (so a takeover that came before a turn it lists is in it), and when the run
 * is over, the conversation again (everything before the finish is in it). Undefined: no such run.
 */
export async function readRunRecords(ledger: Pick<RunLedger, 'getRun'> & Pick<TurnLedger, 'listConversation'>, runId: string): Promise<RunRecords | undefined> {
  let conversation = await ledger.listConversation(runId);
  const run = await ledger.getRun(runId);
  if (!run) return undefined;
  if (runIsOver(run)) conversation = await ledger.listConversation(runId);
  return { run, ...conversation };
}

function started(run: RunRecord): Record<string, unknown> {
  return {
    runId: run.runId,
    agent: run.agent,
    model: run.model,
    createdAt: run.createdAt,
    ...(run.startedBy && { startedBy: run.startedBy }),
    ...(run.agentVersion && { agentVersion: run.agentVersion }),
    ...(run.forkedFrom && { forkedFrom: { runId: run.forkedFrom.runId, turn: run.forkedFrom.turn } }),
  };
}

function waiting(approval: ApprovalRecord): Record<string, unknown> {
  return {
    approvalId: approval.approvalId,
    turn: approval.turn,
    ...(approval.budget ? { budget: approval.budget } : { call: approval.call, toolName: approval.toolName }),
    summary: approval.summary,
    ...(approval.amount && { amount: approval.amount }),
    createdAt: approval.createdAt,
    decideBy: approval.decideBy,
  };
}

function decided(approval: ApprovalRecord): Record<string, unknown> {
  return {
    approvalId: approval.approvalId,
    status: approval.status,
    ...(approval.decidedBy && { decidedBy: approval.decidedBy }),
    ...(approval.decidedVia && { decidedVia: approval.decidedVia }),
    ...((approval.decidedAt ?? approval.sharedDecision?.decidedAt) && { decidedAt: approval.decidedAt ?? approval.sharedDecision?.decidedAt }),
    ...(approval.reason && { reason: approval.reason }),
  };
}

function result(call: ToolCallRecord): Record<string, unknown> {
  const text = call.result ?? '';
  return {
    turn: call.turn,
    call: call.call,
    name: call.name,
    outcome: call.outcome,
    ...(text.length <= MAX_RESULT_IN_EVENT ? { result: text } : { resultChars: text.length }),
    ...(call.latencyMs !== undefined && { latencyMs: call.latencyMs }),
    // Retries as the ledger recorded them: the claims this call took (1 when it went through at once).
    attempts: call.attempts,
    ...(call.recordedAt && { recordedAt: call.recordedAt }),
  };
}

function finished(run: RunRecord): Record<string, unknown> {
  return {
    status: run.status,
    ...(run.stopReason && { stopReason: run.stopReason }),
    ...(run.error && { error: run.error }),
    ...(run.finishedAt && { finishedAt: run.finishedAt }),
    steps: run.steps,
    modelTurns: run.modelTurns,
    toolCalls: run.toolCalls,
    inputTokens: run.inputTokens,
    outputTokens: run.outputTokens,
    costMicros: run.costMicros,
    ...(run.report && { report: run.report }),
    ...(run.killed && { killed: run.killed }),
  };
}
