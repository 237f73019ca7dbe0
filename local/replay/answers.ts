import type { Message, MessageRequest, ModelClient } from '../../lambdas/records/messages.js';
import { compactionSettings, isCompaction } from '../../lambdas/conversation/compaction.js';
import type { AgentDefinition, ToolDefinition } from '../../lambdas/define.js';
import type { ApprovalRecord, ToolCallRecord, TurnRecord } from '../../lambdas/records/ledger-records.js';
import { parseModelSpec } from '../../lambdas/models/spec.js';
import { requestShape, shapeChanges } from '../../lambdas/runs/request-shape.js';
import { ErrorNames, InvalidInputError, MalformedResponseError, TerminalError } from '../../lambdas/shared/errors.js';
import { deepFreeze } from '../../lambdas/shared/plain-copy.js';
import { clip } from '../../lambdas/shared/text.js';
import { conversation, withNotes } from '../../lambdas/steps/call-model.js';
import { recordedResponse } from '../../lambdas/conversation/turns.js';
import { AttemptCut } from '../../lambdas/tools/attempt.js';
import { approvalOf, callOf, type Recording } from './recording.js';

/**
 * The recorded model and the recorded tools of a replay: each call the harness makes is compared
 * with what the recording says the harness asked then, and answered with what came back then.
 * Nothing here reaches a model or a provider. The first call that differs is the divergence; it is
 * noted and the call refused, which ends the replayed execution there.
 */

/** Where a replay first did something other than the recorded run did. */
export interface Divergence {
  /** The model turn (from 1) where it diverged. */
  turn: number;
  /** The tool call of the turn, when it diverged there. */
  call?: number;
  /** What was compared: `model request`, `tool call`, `approval`, `guards`, `report`, `outcome`. */
  what: string;
  /** The part of the recorded run's text where it first differs from the replay's. */
  recorded: string;
  /** The same part of what the replay produced. */
  produced: string;
  /** Why, in words: `the system prompt changed`, `the arguments changed`. */
  why: string;
}

/** Refuses the call that diverged: not retried (its name is not transient), so the execution ends. */
export class ReplayDivergedError extends TerminalError {}

export interface Referee {
  /** The first divergence, once there is one. */
  readonly divergence: Divergence | undefined;
  diverged(divergence: Divergence): never;
}

export function referee(): Referee {
  let first: Divergence | undefined;
  return {
    get divergence() {
      return first;
    },
    diverged(divergence) {
      first ??= divergence;
      throw new ReplayDivergedError(`replay diverged at turn ${divergence.turn}: ${divergence.why}`);
    },
  };
}

/**
 * The part of two long texts where they first differ, the same window of each: a little of what
 * they share before it, then up to `max` characters from there. Two texts that share their first
 * 240 characters show what differs, not the same start twice.
 */
export function differingPart(recorded: string, produced: string, max = 240): { recorded: string; produced: string } {
  let at = 0;
  while (at < recorded.length && at < produced.length && recorded[at] === produced[at]) at += 1;
  const from = Math.max(0, at - 40);
  const window = (text: string) => `${from > 0 ? '…' : ''}${clip(text.slice(from), max)}`;
  return { recorded: window(recorded), produced: window(produced) };
}

/**
 * What the replay does where a run that **failed** stopped: the step the recorded run's execution
 * failed in (a model call after its last turn; in a run given up, a call of its last turn that left
 * no record) asks for what the recording cannot hold — the provider's refusal, an outage that
 * outlasted every retry and recovery — and the replay fails there as the recorded run did: its
 * execution stopped and its failure recorded (index.ts `failExecution`), then the step that asked
 * cut off with nothing recorded (it rejects with the wall clock's AttemptCut).
 */
export type FailedHere = (step: 'model' | 'tool') => Promise<never>;

/**
 * Answers the n-th model call with recorded turn n, after a fork's `copied` turns (calls come one at a time, in turn order:
 * counting them finds the turn even after a compaction). `calls` counts the turns it answered (a
 * fork's copied ones are not: its StartRun copied them); `reached` the recorded turns the replay
 * has got past, copied ones included. Before answering, the request is checked
 * against the request the recording implies: its conversation rebuilt from the recorded turns and
 * results, with the turn's recorded notes; the system prompt and tools against the digests on the
 * run record; the model and `max_tokens`.
 */
export function recordedModel(recording: Recording, agent: AgentDefinition, judge: Referee, copied = 0, failedHere?: FailedHere): { client: ModelClient; calls: () => number; reached: () => number } {
  // A fork's first `copied` turns are not asked for: its StartRun copies them.
  let answered = copied;
  const shapeOf = shapeChangesOnce(recording, agent);
  const expectedOf = expectedMessagesOnce(recording, agent);
  const compared = comparedMessages();
  const client: ModelClient = {
    async createMessage(request) {
      const recorded = recording.turns[answered];
      const turn = recorded?.turn ?? (recording.turns.at(-1)?.turn ?? 0) + 1;
      if (!recorded) {
        if (failedHere) return failedHere('model');
        judge.diverged({ turn, what: 'model request', recorded: `the run ended after turn ${turn - 1} (${recording.run.status}${recording.run.stopReason ? `: ${recording.run.stopReason}` : ''})`, produced: 'another model call', why: 'this code calls the model where the recorded run had stopped' });
      }
      compareRequest(recording, recorded, request, { agent, judge, shapeChangesOf: shapeOf, expectedOf, compared });
      answered += 1;
      return recordedResponse(recorded);
    },
  };
  return { client, calls: () => answered - copied, reached: () => answered };
}

/**
 * What differs between the run's recorded request shape and a request's system prompt and tools,
 * worked out once per system prompt and list of tool names offered (every turn of a run offers the
 * same): each tool's spec, its stable JSON and its digest were derived again on every turn.
 * The request's tools are this agent's, taken by name, so the names and the prompt decide it.
 */
function shapeChangesOnce(recording: Recording, agent: AgentDefinition): (request: MessageRequest) => string[] {
  // By system prompt, then by tool names: the prompt is the same string every turn, whose hash a
  // Map keeps (a key written out of it, as JSON, copied the whole prompt on every turn).
  const known = new Map<string, Map<string, string[]>>();
  return (request) => {
    const shape = recording.run.requestShape;
    if (!shape) return [];
    const system = request.system ?? '';
    let bySystem = known.get(system);
    if (bySystem === undefined) known.set(system, (bySystem = new Map()));
    const names = JSON.stringify((request.tools ?? []).map((spec) => spec.name));
    let changes = bySystem.get(names);
    if (changes === undefined) bySystem.set(names, (changes = shapeChanges(shape, requestShape({ system, tools: agent.tools.filter((tool) => request.tools?.some((spec) => spec.name === tool.name)) }))));
    return changes;
  };
}

function compareRequest(
  recording: Recording,
  recorded: TurnRecord,
  request: MessageRequest,
  { agent, judge, shapeChangesOf, expectedOf, compared }: { agent: AgentDefinition; judge: Referee; shapeChangesOf: (request: MessageRequest) => string[]; expectedOf: (recorded: TurnRecord) => Message[]; compared: ComparedMessages },
): void {
  const turn = recorded.turn;
  const differ = (what: string, before: unknown, after: unknown, why: string) =>
    judge.diverged({ turn, what: 'model request', ...differingPart(`${what}: ${JSON.stringify(before)}`, `${what}: ${JSON.stringify(after)}`), why });
  const recordedModelId = parseModelSpec(recorded.model).model;
  if (request.model !== recordedModelId) differ('model', recordedModelId, request.model, 'the model changed');
  if (request.max_tokens !== recording.run.config.maxTokensPerTurn) differ('max_tokens', recording.run.config.maxTokensPerTurn, request.max_tokens, 'max_tokens per turn changed');
  const shape = recording.run.requestShape;
  if (shape) {
    const changes = shapeChangesOf(request);
    if (changes.length > 0) {
      judge.diverged({ turn, what: 'model request', recorded: `system prompt ${shape.system}, tools ${Object.keys(shape.tools).join(', ')}`, produced: `system prompt ${requestShape(agent).system}, tools ${(request.tools ?? []).map((spec) => spec.name).join(', ')}`, why: changes.join('; ') });
    }
  }
  const expected = expectedOf(recorded);
  const sent = request.messages;
  const index = firstDifference(expected, sent, compared);
  if (index === expected.length && index === sent.length) return;
  const why =
    index === 0 ? "the run's first message (the agent's prompt for its input) changed"
    : index >= expected.length || index >= sent.length ? `the conversation has ${sent.length} messages, the recording ${expected.length}`
    : sent[index]!.role === 'user' && index === sent.length - 1 ? `message ${index + 1} (the tool results and the harness's notes before turn ${turn}) changed`
    : `message ${index + 1} of the conversation changed`;
  differ(`message ${index + 1}`, expected[index]?.content, sent[index]?.content, why);
}

/**
 * `expectedMessages` of each turn, from one conversation built once per replay (each turn rebuilt
 * the conversation of every turn before it: quadratic in a run's turns). The conversation is a
 * fold over the turns — each turn's notes joined to the message before it, then its assistant
 * message, then its results — so a turn's expected messages are the messages of the last turn's
 * before its own assistant message (found by its recorded content, which that message holds).
 * A run with a compaction (whose opening changes) or with a turn whose results are missing is
 * built per turn, as before.
 */
function expectedMessagesOnce(recording: Recording, agent: AgentDefinition): (recorded: TurnRecord) => Message[] {
  let whole: Message[] | null | undefined;
  const last = recording.turns.at(-1);
  return (recorded) => {
    if (recorded.compaction || !last) return expectedMessages(recording, agent, recorded);
    if (whole === undefined) {
      try {
        whole = recording.turns.some(isCompaction) ? null : expectedMessages(recording, agent, last);
      } catch {
        whole = null;
      }
    }
    if (whole === null) return expectedMessages(recording, agent, recorded);
    if (recorded === last) return whole;
    const at = whole.findIndex((message) => message.role === 'assistant' && message.content === recorded.content);
    return at < 0 ? expectedMessages(recording, agent, recorded) : whole.slice(0, at);
  };
}

/** The request's messages the recording implies for a turn (a compaction's: the turns it covers and its instructions). */
function expectedMessages(recording: Recording, agent: AgentDefinition, recorded: TurnRecord): Message[] {
  if (recorded.compaction) {
    const messages = conversation(recording.run, recording.turns.filter((turn) => turn.turn <= recorded.compaction!.covers), recording.calls);
    const instructions = compactionSettings(agent)?.instructions ?? '';
    const last = messages.at(-1)!;
    messages[messages.length - 1] = { role: 'user', content: typeof last.content === 'string' ? `${last.content}\n\n${instructions}` : [...last.content, { type: 'text', text: instructions }] };
    return messages;
  }
  const messages = conversation(recording.run, recording.turns.filter((turn) => turn.turn < recorded.turn), recording.calls);
  withNotes(messages, recorded.notes ?? []);
  return messages;
}

/** The first message where the sent conversation differs from the expected one (the shorter's length when one is the other's start). */
function firstDifference(expected: readonly Message[], sent: readonly Message[], compared: ComparedMessages): number {
  const length = Math.min(expected.length, sent.length);
  for (let index = 0; index < length; index += 1) if (!compared.same(expected[index]!, sent[index]!)) return index;
  return length;
}

/** Whether a message sent is the one expected, each pair found equal remembered (`comparedMessages`). */
interface ComparedMessages {
  same(expected: Message, sent: Message): boolean;
}

/**
 * `sameJson` of each pair of messages, remembered for the pair once found equal, both frozen all
 * through: every request holds the whole conversation, and the harness renders a turn's messages
 * once and sends the same objects again on each later turn (call-model.ts `conversation`), as the
 * expected conversation is built once (`expectedMessagesOnce`), so the requests of a run compared
 * each message again on every turn after it (quadratic: 841 comparisons for the sample day's 29
 * turns, ~1.4 ms of a `savepoint replay`'s CPU). Frozen, a message sent again is the message
 * compared: a change to it throws (strict mode), and the replay does not come out identical.
 */
function comparedMessages(): ComparedMessages {
  const equalTo = new WeakMap<Message, Message>();
  return {
    same(expected, sent) {
      if (equalTo.get(sent) === expected) return true;
      if (!sameJson(expected, sent)) return false;
      equalTo.set(deepFreeze(sent), deepFreeze(expected));
      return true;
    },
  };
}

/**
 * Whether two values serialize to the same JSON text — the bytes a provider would be sent — found
 * without writing either: every message of every request is compared (a request holds the whole
 * conversation, so serializing each made a replay quadratic in its turns, in text). The same keys
 * in the same order, `undefined` fields left out, `undefined` items as null, numbers by their text.
 * A value with `toJSON` is compared by its text.
 *
 * It runs on every message of every request, mostly as code not yet compiled (a `savepoint
 * replay` process compares one run): two fields or items that are the same value are taken as
 * equal without a call (a string, most of what a conversation holds), nothing is destructured (an
 * array and its iterator each time, in code not yet compiled), and each field is read once, its
 * test for a value JSON leaves out written in line: 30% less CPU over the sample day's 841
 * messages, uncompiled (1.5 -> 1.05 ms).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'number' || Number.isFinite(a) || JSON.stringify(a) === JSON.stringify(b);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    if (hasToJson(a) || hasToJson(b)) return JSON.stringify(a) === JSON.stringify(b);
    // Different primitives: equal in JSON only as numbers written alike (0 and -0; NaN and null…).
    return (typeof a === 'number' || typeof b === 'number') && JSON.stringify(a) === JSON.stringify(b);
  }
  if ('toJSON' in a || 'toJSON' in b) return JSON.stringify(a) === JSON.stringify(b);
  const array = Array.isArray(a);
  if (array !== Array.isArray(b)) return false;
  if (array) {
    const left = a as unknown[];
    const right = b as unknown[];
    const length = left.length;
    if (length !== right.length) return false;
    for (let index = 0; index < length; index += 1) {
      let x = left[index];
      let y = right[index];
      if (x === y && typeof x !== 'number') continue;
      // An item JSON leaves out (undefined, a function, a symbol) is written as null.
      if (x === undefined || typeof x === 'function' || typeof x === 'symbol') x = null;
      if (y === undefined || typeof y === 'function' || typeof y === 'symbol') y = null;
      if ((x !== y || typeof x === 'number') && !sameJson(x, y)) return false;
    }
    return true;
  }
  // The keys JSON writes (those of a value it writes: not undefined, a function or a symbol), in order, side by side.
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const leftKeys = Object.keys(left);
  const rightKeys = Object.keys(right);
  const leftLength = leftKeys.length;
  const rightLength = rightKeys.length;
  for (let i = 0, j = 0; ; i += 1, j += 1) {
    let x: unknown;
    let y: unknown;
    while (i < leftLength && ((x = left[leftKeys[i]!]) === undefined || typeof x === 'function' || typeof x === 'symbol')) i += 1;
    while (j < rightLength && ((y = right[rightKeys[j]!]) === undefined || typeof y === 'function' || typeof y === 'symbol')) j += 1;
    if (i === leftLength || j === rightLength) return i === leftLength && j === rightLength;
    if (leftKeys[i] !== rightKeys[j]) return false;
    if ((x !== y || typeof x === 'number') && !sameJson(x, y)) return false;
  }
}

function hasToJson(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'toJSON' in value;
}

/**
 * The agent's own tool code (`execute`, `reconcile`), counted: a replay answers every call from
 * the recording (`recordedTools`, built over this), so any call that reaches a tool's own code was
 * made live — what `live.tools` counts, and a divergence however the run ends.
 */
export function meteredTools<A extends AgentDefinition>(agent: A): { agent: A; live: () => number; first: () => string | undefined } {
  let live = 0;
  let first: string | undefined;
  const count = (name: string) => {
    live += 1;
    first ??= name;
  };
  const tools = agent.tools.map((tool): ToolDefinition => ({
    ...tool,
    execute: (args, context) => (count(tool.name), tool.execute(args, context)),
    ...(tool.reconcile && { reconcile: (args: unknown, context: Parameters<NonNullable<ToolDefinition['reconcile']>>[1]) => (count(tool.name), tool.reconcile!(args as never, context)) }),
  }));
  return { agent: { ...agent, tools }, live: () => live, first: () => first };
}

/**
 * The agent with each tool answered from the recording: the same names, schemas, effects and
 * approval rules (so its fingerprint is the same), but `execute` compares the call with the
 * recorded one (name, arguments, idempotency key) and returns the recorded result, or throws the
 * error the recorded outcome came from. No `deps`: no provider client is even built.
 */
export function recordedTools<A extends AgentDefinition>(agent: A, recording: Recording, judge: Referee, askedFor: (turn: number, call: number) => boolean, failedHere?: FailedHere): A & { toolCalls: () => number } {
  let answered = 0;
  const lastTurn = recording.turns.at(-1)?.turn;
  const answer = (tool: ToolDefinition): ToolDefinition['execute'] => async (args, context) => {
    const recorded = callOf(recording, context.turn, context.call);
    const at = { turn: context.turn, call: context.call, what: 'tool call' };
    // Each call's arguments written once; the texts of a divergence only when there is one.
    const sent = JSON.stringify(args);
    const produced = () => clip(`${tool.name} ${sent}`, 240, 240);
    // A call of the last recorded turn that left no record, in a run given up there: the call that failed.
    if (!recorded && failedHere && context.turn === lastTurn && recording.run.error?.error === ErrorNames.Unrecoverable) return failedHere('tool');
    if (!recorded) return judge.diverged({ ...at, recorded: 'no such call', produced: produced(), why: `this code makes a tool call the recorded run did not make` });
    const recordedArgs = JSON.stringify(recorded.args);
    const recordedText = () => clip(`${recorded.name} ${recordedArgs}`, 240, 240);
    if (recorded.name !== tool.name) judge.diverged({ ...at, recorded: recordedText(), produced: produced(), why: `another tool is called (${tool.name}, recorded ${recorded.name})` });
    if (sent !== recordedArgs) {
      judge.diverged({ ...at, ...differingPart(`${recorded.name} ${recordedArgs}`, `${tool.name} ${sent}`), why: "the arguments changed (as the tool's schema parsed them)" });
    }
    if (context.idempotencyKey !== recorded.idempotencyKey) {
      judge.diverged({ ...at, recorded: `key ${recorded.idempotencyKey}`, produced: `key ${context.idempotencyKey}`, why: 'the idempotency key changed' });
    }
    if (approvalOf(recording, recorded) && !askedFor(context.turn, context.call)) {
      judge.diverged({ ...at, recorded: `${recordedText()} after an approval`, produced: `${produced()} sent without one`, why: "the call no longer asks for approval (the tool's approval rule changed)" });
    }
    if (recorded.outcome === 'rejected' || recorded.outcome === 'expired') {
      judge.diverged({ ...at, recorded: `${recordedText()} → ${recorded.outcome} (approval)`, produced: `${produced()} → sent`, why: 'the call is sent where the recorded run refused it (approval)' });
    }
    answered += 1;
    return recordedOutcome(tool.name, recorded);
  };
  const tools = agent.tools.map((tool) => ({
    ...tool,
    execute: answer(tool),
    ...(tool.reconcile && { reconcile: async () => ({ found: false as const }) }),
  }));
  const { deps: _deps, ...rest } = agent;
  return { ...(rest as A), tools, toolCalls: () => answered };
}

/**
 * What `execute` returned or threw to make the recorded outcome: the error that tools/failures.ts
 * `failureOf` maps back to the same result (a timeout the same timeout, a failure of the tool's
 * own the same message), so the call is answered to the model as it was, and the run goes on or
 * stops as it did.
 */
function recordedOutcome(name: string, recorded: ToolCallRecord): unknown {
  const result = JSON.parse(recorded.result ?? 'null') as unknown;
  if (recorded.outcome === 'ok') return result;
  const { error, message = '' } = (result ?? {}) as { error?: string; message?: string };
  const failed = `${name} failed: `;
  const thrown = (text: string) => (text.startsWith(failed) ? new Error(text.slice(failed.length)) : new AttemptCut({ kind: 'timeout', message: text }));
  switch (error) {
    case 'invalid_request':
      throw new InvalidInputError(message);
    case 'malformed_response':
      throw new MalformedResponseError(message);
    case 'timeout':
    case 'tool_failed':
      throw thrown(message);
    case 'outcome_unknown':
      throw thrown(message.slice(0, message.lastIndexOf('. It may have taken effect')));
    case 'result_too_large': {
      // The result itself was not kept, only its size: a string of that size comes to the same answer.
      const bytes = Number(/is (\d+) bytes/.exec(message)?.[1] ?? 0);
      return 'x'.repeat(Math.max(0, bytes - 2));
    }
    default:
      throw new TerminalError(message);
  }
}

/** The recorded decision for an approval the replay is asked for, as the approval API takes it. */
export function recordedDecision(approval: ApprovalRecord | undefined): { decision: 'approve' | 'reject'; reason?: string } | 'expire' | undefined {
  if (!approval || approval.status === 'pending') return undefined;
  if (approval.status === 'expired') return 'expire';
  return { decision: approval.status === 'approved' ? 'approve' : 'reject', ...(approval.reason && { reason: approval.reason }) };
}
