import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { noToolSecrets, type ToolSecrets } from '../tools/secrets.js';
import { findTool, guaranteeOf, settleMsOf, toolTimeoutMs, type AgentDefinition, type ToolContext, type ToolDefinition } from '../define.js';
import { toolsBreaker, type CircuitBreaker } from '../guards/breaker.js';
import { verifiedDecision, type DecisionMac } from '../approvals/decision-mac.js';
import { takeSharedDecision } from '../approvals/shared.js';
import { budgetTrip, FRAMING_TOKENS, NOTES_BYTES, wallClockEnd } from '../guards/budgets.js';
import { cutResult, storeCallResult } from '../ledger/blobs.js';
import type { AggregateLedger, ApprovalLedger, BlobStore, ChildWaitLedger, EffectLedger, GuardLedger, RunLedger, ToolCallLedger, TurnLedger } from '../ledger/ledger.js';
import type { RunRecord, ToolCallRecord, ToolOutcome } from '../records/ledger-records.js';
import { ApprovalNeededError, InvalidInputError, TransientError } from '../shared/errors.js';
import { boundedAttempt } from '../tools/attempt.js';
import { escalated, failureOf, isToolFault, unrecordableResult, type Failure, type Outcome } from '../tools/failures.js';
import { parseOrThrow } from '../shared/validation.js';
import { timersOf, type Clock } from '../shared/ports.js';
import { checkVersion, type CodeFingerprint } from '../runs/versions.js';
import { rememberCall, rememberTurn, runView, toolUses } from '../conversation/turns.js';
import { rememberLineage } from '../runs/fork.js';
import { atPosition } from '../ledger/open-turn.js';
import { isStepChanged } from '../ledger/handed-versions.js';
import { HandedAttempts, handedStates, handedTo } from './handed-step.js';
import type { StepBasis, StepRead } from '../ledger/ledger.js';
import { deriveRecordedCall, jsonObject } from '../conversation/tool-calls.js';
import { claimRefused, effectGate, recordEscalation, undecided, unknownEarlierSend } from '../tools/effects.js';
import { reserveAmount } from '../tools/aggregates.js';
import { childOutcome, settleStopping, startChild, type ChildStarter } from '../tools/child-runs.js';
import type { TaskCallbacks } from '../shared/ports.js';

export const CallToolInput = schemaOnFirstUse(() => z.object({
  runId: z.string().min(1),
  turn: z.number().int().positive(),
  call: z.number().int().positive(),
  /**
   * What the approval wait ended with (RequestApproval's result or caught error), present once the
   * call has waited: a decision still pending then means the wait timed out. `false` (or absent)
   * before: a pending decision is waited for (again, on a resumed run).
   */
  approval: z.unknown().optional(),
  /** AwaitChildRun's invocation (an agent tool's call): the task token its child's end wakes (tools/child-runs.ts). */
  taskToken: z.string().min(1).optional(),
  /** What the child's wait ended with, once it has waited (read again from the child's record, never trusted). */
  child: z.unknown().optional(),
  /** CallModel's result for the turn, which may hand the call what the turn's write left (handed-step.ts): its checks are then made on that, with no read. */
  made: z.unknown().optional(),
}));

export interface CallToolResult {
  turn: number;
  call: number;
  name: string;
  outcome: ToolOutcome | 'skipped';
  /** Set when a guard tripped before the call: nothing was sent; the next decision (CallModel's) stops the run. */
  skipped?: string;
  /** For a person following the run in the console (no arguments or result): e.g. `issue_refund → ok`. */
  summary?: string;
  /** `false` when a retry found the call recorded already (metrics count a call once). */
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
  ledger: GuardLedger & TurnLedger & ToolCallLedger & EffectLedger & AggregateLedger & Pick<ApprovalLedger, 'getApproval' | 'decideApproval'> & ChildWaitLedger & Pick<RunLedger, 'getRun'> & BlobStore;
  clock: Clock;
  breaker: CircuitBreaker;
  /** How long a claim protects an in-flight call; at least the Lambda's timeout. */
  leaseMs: number;
  /** Verifies an approval's decision MAC before an approved call runs (absent: decisions are unsigned). */
  decisionMac?: DecisionMac;
  /** Results over this many UTF-8 bytes are stored by reference (ledger/blobs.ts). @default RESULT_LIMIT_BYTES (64 KiB) */
  resultLimitBytes?: number;
  /** The tool credentials a tool reads through `context.secret` (tools/secrets.ts). @default none */
  toolSecrets?: ToolSecrets;
  /** Starts the child runs of agent tools (tools/child-runs.ts). @default none: an agent tool's call is answered with an error */
  children?: Pick<ChildStarter, 'start'>;
  /** Wakes this execution's own wait for a child that finished before it waited. @default none */
  callbacks?: TaskCallbacks;
  /** Told of each attempt that failed by the tool's own fault (tools/failures.ts `isToolFault`), with the error itself: the operator's log. @default none */
  onToolFailure?: (tool: string, error: unknown) => void;
}

/** AwaitChildRun's answer (ignored: the wait ends on its task token). */
export interface ChildWaitResult {
  waiting: boolean;
  childRunId?: string;
}

/** An attempt's end: the tool's answer, or what its failure comes to (tools/failures.ts). */
type Attempted = { kind: 'ok'; outcome: Outcome } | Failure;

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
export function createCallTool(deps: CallToolDeps) {
  const handedAttempts = new HandedAttempts();
  const states = handedStates();
  return async (input: unknown, signal?: AbortSignal): Promise<CallToolResult | ChildWaitResult> => {
    const parsed = parseOrThrow(CallToolInput(), input, 'CallTool input');
    const { runId, turn, call, approval: waited, taskToken } = parsed;
    // Handed what the turn's write left (handed-step.ts), a first attempt with no wait behind it is checked on that and reads
    // nothing: a read is sent and recorded (one put of its own item), a write is claimed on the condition that the run item and
    // the kill item are still as handed; any other — a retry, which must find its record first, one a person must approve, a
    // write whose handed items changed — reads first, as every call did. (`states`: the handed states this instance parsed.)
    const handed = taskToken === undefined && !isWaited(waited) && handedAttempts.first(runId, turn, call) ? handedTo(parsed.made, runId, turn, deps.clock.now(), states) : undefined;
    // The basis with what the checks are made on, checked against its seal first (a state made up on
    // the way reads instead): nothing of it is sent otherwise.
    const basis = handed && (await sealedBasis(deps.ledger, runId, { ...handed.basis, content: handed.state }));
    if (handed && basis) {
      const read: StepRead = { run: handed.run, ...(handed.globalKill && { globalKill: handed.globalKill }), turns: [handed.turn], calls: [], ...(handed.breaker && { breaker: handed.breaker }) };
      const made = await makeCall(parsed, read, signal, basis);
      if (made !== READ_FIRST) return made;
    }
    // One batched read: the run, the kill flag, the turn that asked for the call, the call's record, the breaker, and the versions
    // of the run and kill items, which a write's claim checks (a kill or stop since refuses it: the call reads again, and stops).
    for (let reads = 1; ; reads++) {
      const read = await deps.ledger.loadStep(runId, { turns: [turn], calls: [{ turn, call }], breaker: toolsBreaker(deps.agent), versions: true });
      const made = await makeCall(parsed, read, signal);
      if (made !== READ_FIRST) return made;
      if (reads >= CLAIM_READS) throw new TransientError(`tool call ${turn}/${call} of run ${runId}: what it read changed before each of its ${reads} claims`);
    }
  };

  /**
   * The call, on `read`: the step's own read, or (with `basis`) what it was handed — then
   * READ_FIRST wherever it would need more than that (its checks tripped, an agent tool, a person
   * to ask, a mistake to answer, a fork, and on either a write's claim refused on its conditions: an
   * item read or handed changed), before anything is sent or written.
   */
  async function makeCall(input: z.infer<ReturnType<typeof CallToolInput>>, read: StepRead, signal: AbortSignal | undefined, basis?: StepBasis): Promise<CallToolResult | ChildWaitResult | typeof READ_FIRST> {
    const { runId, turn, call, approval: waited, taskToken } = input;
    const run = read.run;
    if (!run) throw new InvalidInputError(`runId: no run ${runId} in the ledger`);
    const turnRecord = read.turns[0];
    const block = turnRecord && toolUses(turnRecord)[call - 1];
    // What was handed is refused nothing on its own word: a read decides (the run may have moved on).
    if (basis && (!block || !onItsVersion(run, deps))) return READ_FIRST;
    checkVersion(run, deps.agent, deps.fingerprint);
    if (!turnRecord || !block) throw new InvalidInputError(`call: run ${runId} has no tool call ${call} in turn ${turn}`);
    // This function's own cache of the conversation (not another function's: each has its own on AWS),
    // and the run's lineage, which its tools ask for as a fork runs them (runs/fork.ts): no read of the run again.
    rememberTurn(deps.ledger, turnRecord);
    rememberLineage(deps.ledger, run);
    const at: CallAt = { turn, call, name: block.name };

    const recorded = read.calls[0];
    // Budgeted by its position in the turn: the run's count, and the calls before it (open-turn.ts).
    const trip = budgetTrip(atPosition(run, turn, call), deps.clock.now(), read.globalKill);
    // Handed a run that stops, or a call of an agent tool: decided on a read of its own.
    if (basis && (trip || !handedTool(deps.agent, block.name))) return READ_FIRST;
    // AwaitChildRun, its wait already over (the call recorded, or the run stopping): woken at once, CallTool answers.
    if (taskToken && (recorded?.status === 'completed' || trip)) {
      await deps.callbacks?.succeed(taskToken, { settled: true });
      return { waiting: false };
    }
    if (recorded?.status === 'completed') return repeated(deps, at, recorded as ToolCallRecord & { status: 'completed' });
    // Checked before every step, from persisted state: a kill or an exhausted budget stops here
    // (an agent tool's child that ended settled first: the run records no result of it).
    if (trip) {
      if (deps.agent.tools.some((tool) => tool.child && tool.name === block.name)) await settleStopping(deps.ledger, run, { turn, call, toolCallId: block.id }, deps.clock.now());
      return skipped(at, trip.reason);
    }

    const derived = await deriveRecordedCall(deps.ledger, deps.agent, run, turnRecord, call);
    const { tool } = derived;
    const now = deps.clock.now();
    const entry: ToolCallRecord = {
      kind: 'tool',
      runId,
      turn,
      call,
      toolCallId: block.id,
      name: block.name,
      // The parsed arguments (defaults applied, JSON-safe): what approvals and reports read. A call
      // its schema refused keeps what the model sent.
      args: jsonObject(derived.args ?? block.input),
      effect: tool?.effect ?? 'read',
      idempotencyKey: derived.idempotencyKey,
      status: 'in_flight',
      leaseUntil: new Date(now.getTime() + deps.leaseMs).toISOString(),
      attempts: 0,
      ...(tool?.reconcile && { settleMs: settleMsOf(tool) }),
      // A write's request goes out right after its claim (or after its reconcile): the settle time counts from here.
      ...(tool?.effect === 'write' && { sentAt: now.toISOString() }),
      ...(derived.effectKey !== undefined && { effectKey: derived.effectKey }),
      ...(tool && { guarantee: guaranteeOf(tool) }),
    };
    // A call handed its state that a person must approve, answers a mistake, or runs in a fork, reads first.
    if (basis && (!tool || derived.mistake || derived.approval || run.forkedFrom)) return READ_FIRST;
    // The model's mistake (a tool that does not exist, arguments its schema refuses, no business
    // key) is answered to the model, naming what is wrong, and recorded like any result: replay
    // sends the same answer.
    if (!tool || derived.mistake) return doneAtOnce(deps, at, entry, { outcome: 'error', result: JSON.stringify(derived.mistake), latencyMs: 0 }, basis);
    const args = derived.args;
    // Another agent's run (tools/child-runs.ts): started by AwaitChildRun, recorded once it finished.
    if (tool.child) {
      const childCall = { run, turn, call, toolCallId: block.id, child: tool.child, args };
      if (taskToken) return { waiting: true, ...(await startChild(deps, childCall, taskToken)) };
      return doneAtOnce(deps, at, entry, await childOutcome(deps, childCall), basis);
    }
    if (taskToken) throw new InvalidInputError(`taskToken: tool call ${turn}/${call} of run ${runId} (${block.name}) is not an agent tool's`);
    const refusal = derived.approval ? await approvalRefusal(deps, run, turn, call, isWaited(waited)) : undefined;

    const sending: Sending = { tool, run, at, breaker: read.breaker, signal, notFoundUnsettled: false };
    // A refused approval is the call's outcome: nothing is sent.
    const attemptOrRefusal = (retried: boolean, key: string, sent: unknown = args): Promise<Attempted> => (refusal ? Promise.resolve({ kind: 'ok', outcome: refusal }) : attempt(deps, tool, () => send(deps, sending, retried, key, sent)));

    if (tool.effect === 'read') {
      const tried = await attemptOrRefusal(false, entry.idempotencyKey);
      switch (tried.kind) {
        // The wall clock ran out while the call was in flight: the next decision stops the run (a run
        // that is extended calls it again, from scratch).
        case 'cut':
          return skipped(at, tried.reason);
        case 'release':
          throw tried.error;
        case 'fail':
          await recordAtOnce(deps, entry, tried.outcome, basis);
          throw tried.error;
        default:
          return doneAtOnce(deps, at, entry, await byReference(deps, tool, run, tried.outcome), basis);
      }
    }

    // What the call moves is reserved across the agent's runs before anything is claimed or sent
    // (tools/aggregates.ts): past the threshold, a person decides — the call goes to the approval
    // wait (Agent.ApprovalNeeded, RequestApproval asks with the total across runs), and is sent once
    // approved, or answered with their refusal. A dry fork sends nothing, so it reserves nothing;
    // nor does a `reuse` fork's write answered from its parent's record (the parent reserved it).
    if (!refusal && run.forkedFrom?.effects !== 'dry' && !derived.reused) {
      const holder = { runId, turn, call, ...(derived.effectKey !== undefined && { effectKey: derived.effectKey }) };
      if (!(await reserveAmount(deps.ledger, deps.agent, { tool, args }, { ...holder, approved: derived.approval !== undefined }, now))) {
        // Past the threshold (nothing reserved): a person decides, which a call handed its state reads for.
        if (basis) return READ_FIRST;
        const refused = await approvalRefusal(deps, run, turn, call, isWaited(waited));
        if (refused) return doneAtOnce(deps, at, entry, refused, basis);
        await reserveAmount(deps.ledger, deps.agent, { tool, args }, { ...holder, approved: true }, now);
      }
    }

    // The effect across runs is claimed with the call, in one write (not for a refused call: a
    // rejection is no claim). Held by another call: its result is this one's, or (in flight) this
    // call waits for it — another call of the same turn with the same business key included,
    // which may run beside this one. Nothing is written then.
    const holder =
      entry.effectKey !== undefined && !refusal
        ? { key: entry.effectKey, runId, turn, call, name: entry.name, args: entry.args, leaseUntil: entry.leaseUntil, ...(entry.settleMs !== undefined && { settleMs: entry.settleMs }), ...(entry.sentAt !== undefined && { sentAt: entry.sentAt }) }
        : undefined;
    // The claim holds only while the run item and the kill item are as handed (handed-step.ts) or read: when
    // either changed, nothing is written or sent, and the call reads, and decides again.
    let claim: Awaited<ReturnType<typeof deps.ledger.claimCall>>;
    try {
      claim = await deps.ledger.claimCall(entry, now, holder, basis ?? read.versions);
    } catch (error) {
      if (isStepChanged(error)) return READ_FIRST;
      throw error;
    }
    const gate = await effectGate(deps.ledger, tool, claim, runId);
    if (gate && 'done' in gate) return doneAtOnce(deps, at, entry, gate.done, basis);
    if (gate && 'wait' in gate) throw claimRefused(gate.held, gate.wait, deps.clock.now());
    if (!claim.claimed) {
      if (claim.existing!.status === 'completed') return repeated(deps, at, claim.existing! as ToolCallRecord & { status: 'completed' });
      throw claimRefused(claim.existing!, `tool call ${turn}/${call} of run ${runId} is in flight`, deps.clock.now());
    }
    // The call and its effect are recorded, and released, together (one write each).
    const effect = gate && holder && { key: holder.key };
    const complete = (outcome: Outcome, unknown = false) => deps.ledger.completeCall({ runId, turn, call, outcome, now: deps.clock.now(), effect: effect && { ...effect, unknown } });
    // `unsent`: the attempt knows it did nothing, so no send of it is left of unknown outcome.
    const release = (unsent: boolean) => deps.ledger.releaseCall(runId, turn, call, deps.clock.now(), { effect, unsent });
    const escalate = async (outcome: Outcome) => {
      await recordEscalation(deps.ledger, claim.record, deps.clock.now());
      return { ...done(deps, at, await complete(outcome, true), true), escalated: true };
    };
    // A claim taken again after a send of unknown outcome (the earlier attempt died, or lost its
    // answer): re-sent under the same idempotency key; for a provider without keys, `reconcile`
    // asks what the earlier send did — once its settle time from the send is over (protocol.ts
    // takeoverAfter), a bounded number of times — and a tool with neither is escalated before a
    // second send (tools/effects.ts).
    const attempts = gate ? gate.attempts : claim.record.attempts;
    const earlierSend = gate ? gate.earlierSend : claim.record.earlierSend;
    const retried = earlierSend !== undefined && tool.reconcile !== undefined;
    const escalation = refusal ? undefined : (undecided(tool, attempts) ?? unknownEarlierSend(tool, earlierSend));
    if (escalation) return escalate(escalation);
    // The claim's lease outlasts the attempt: renewed while the outside call runs (a holder that
    // dies stops renewing), and the renewal ends before the claim is released or completed.
    const lease = keepLease(deps, claim.record, effect && { ...effect, attempts: gate.attempts });
    let tried: Attempted;
    try {
      tried = await attemptOrRefusal(retried, claim.record.idempotencyKey, gate?.args ?? args);
    } finally {
      await lease.stop();
    }
    if (sending.notFoundUnsettled) {
      return escalate(escalated(tool.name, `reconcile did not find the request sent at ${earlierSend}, and ${tool.name} declares no settleMs to say the provider would show it by now`));
    }
    switch (tried.kind) {
      // Its outcome is unknown: released, so that a run extended later goes through the claim again.
      case 'cut':
        await release(false);
        return skipped(at, tried.reason);
      // The retry may claim again (after the settle time, for a tool that reconciles): it asks
      // `reconcile` first, or re-sends the same idempotency key.
      case 'release':
        await release(!tried.unknown);
        throw tried.error;
      // Sent, no answer, and no way to find out: a person decides; never sent again.
      case 'undecidable':
        return escalate(tried.outcome);
      // Nothing can fix it by retrying: recorded so no entry is left in flight.
      case 'fail':
        await complete(tried.outcome);
        throw tried.error;
      default:
        return done(deps, at, await complete(await byReference(deps, tool, run, tried.outcome, effect?.key)), true);
    }
  }
}

/**
 * Where a call stands, as its results name it. What follows are the call's outcomes as plain functions of what they use, not
 * closures made per call: every tool call made each of them, whichever it took (under a loader that keeps names, each closure
 * also had its name set).
 */
type CallAt = { readonly turn: number; readonly call: number; readonly name: string };
const skipped = (at: CallAt, reason: string): CallToolResult => ({ turn: at.turn, call: at.call, name: at.name, outcome: 'skipped', skipped: reason });

/**
 * The call's answer once recorded. A call counts no step of its own: the next model turn's reservation counts the turn's calls, or
 * the run's end (ledger/open-turn.ts), so nothing but the model turns writes the run item while a turn's calls run. `counted`:
 * this attempt recorded the call (metrics count it once).
 */
function done(deps: Pick<CallToolDeps, 'ledger'>, at: CallAt, record: ToolCallRecord, counted = false): CallToolResult {
  // Later steps of this process (the next turn's rules) need not read it back.
  rememberCall(deps.ledger, record);
  return { turn: at.turn, call: at.call, name: at.name, outcome: record.outcome ?? 'ok', summary: `${at.name} → ${record.outcome ?? 'ok'}`, counted };
}

/** A retry that finds its call recorded writes it again, and the first record stands: nothing is written (the item read is the basis: no request), and what wraps the ledger sees the repeat (telemetry's replay span). */
async function repeated(deps: Pick<CallToolDeps, 'ledger' | 'clock'>, at: CallAt, record: ToolCallRecord & { status: 'completed' }): Promise<CallToolResult> {
  await deps.ledger.recordCall(record, deps.clock.now());
  return done(deps, at, record);
}

/** A call that changes nothing outside needs no claim: its outcome is recorded in one write (the first stands). */
async function recordAtOnce(deps: Pick<CallToolDeps, 'ledger' | 'clock'>, entry: ToolCallRecord, outcome: Outcome, basis: StepBasis | undefined): Promise<{ record: ToolCallRecord; counted: boolean }> {
  const completed = { ...entry, ...outcome, status: 'completed' as const, recordedAt: deps.clock.now().toISOString() };
  // Handed its turn's state (checked against its seal before it was sent), unread: a record in the way (a retry's) is read then. A kill while it ran keeps its result, as for any call in flight.
  const result = await deps.ledger.recordCall(completed, deps.clock.now(), undefined, basis);
  if (result.recorded) return { record: result.record, counted: true };
  if (result.existing.status === 'completed') return { record: result.existing, counted: false };
  throw claimRefused(result.existing, `tool call ${entry.turn}/${entry.call} of run ${entry.runId} is in flight`, deps.clock.now());
}

async function doneAtOnce(deps: Pick<CallToolDeps, 'ledger' | 'clock'>, at: CallAt, entry: ToolCallRecord, outcome: Outcome, basis: StepBasis | undefined): Promise<CallToolResult> {
  const { record, counted } = await recordAtOnce(deps, entry, outcome, basis);
  return done(deps, at, record, counted);
}

/**
 * A large result is written in chunks first; the call record holds a reference (ledger/blobs.ts). One over the tool's
 * maxResultTokens is cut for the model first, the whole of it stored by reference. A tool that declares no maxResultTokens gets no
 * more than the next model call can carry in what is left of the run's token budget (oversizedResult): a read's larger result is
 * answered to the model as an error naming the settings, a write's (its effect happened) cut to that size, so one result never stops the run.
 */
async function byReference(deps: Pick<CallToolDeps, 'ledger' | 'resultLimitBytes'>, tool: ToolDefinition, run: RunRecord, outcome: Outcome, effectKey?: string): Promise<Outcome> {
  const oversized = tool.maxResultTokens === undefined && outcome.outcome === 'ok' ? oversizedResult(tool, outcome.result, run) : undefined;
  if (oversized && tool.effect === 'read') return { ...outcome, outcome: 'error', result: JSON.stringify(oversized.error) };
  const limit = tool.maxResultTokens ?? oversized?.limit;
  // A result that completes the business-key effect this call holds is the effect's too, for the later runs of its key, and so is
  // the whole of one cut, which the cut's reference names (ledger/blobs.ts).
  const effect = outcome.outcome === 'ok' ? effectKey : undefined;
  const shown = limit === undefined ? outcome.result : await cutResult(outcome.result, limit, (whole) => storeCallResult(deps.ledger, run.runId, whole, 0, effect));
  return { ...outcome, result: await storeCallResult(deps.ledger, run.runId, shown, deps.resultLimitBytes, effect) };
}

/**
 * What a call's sends share: the tools' breaker as the step read it, the step's own signal (its deadline), and `notFoundUnsettled`,
 * set when `reconcile` answered "not found" for a tool with no declared settle time: nothing says the provider would show the
 * earlier send by now, so it is not sent again (escalated).
 */
type Sending = { readonly tool: ToolDefinition; readonly run: RunRecord; readonly at: CallAt; readonly breaker: StepRead['breaker']; readonly signal: AbortSignal | undefined; notFoundUnsettled: boolean };

/** One send of the call: through the tools' breaker, bounded by the tool's timeout and the run's wall clock (tools/attempt.ts); `retried`, `reconcile` asks first what an earlier send did. */
function send(deps: CallToolDeps, sending: Sending, retried: boolean, key: string, sent: unknown): Promise<unknown> {
  const { tool, run } = sending;
  const bounds = { timeoutMs: toolTimeoutMs(tool), signal: sending.signal, clock: deps.clock, stopAt: wallClockEnd(run), what: tool.name };
  return deps.breaker.call(
    toolsBreaker(deps.agent),
    () =>
      boundedAttempt(async (attemptSignal) => {
        const toolContext: ToolContext = { ...runView(run), idempotencyKey: key, signal: attemptSignal, turn: sending.at.turn, call: sending.at.call, deps: deps.agentDeps(), secret: deps.toolSecrets ?? noToolSecrets };
        if (retried) {
          const answer = await tool.reconcile!(sent, toolContext);
          if (answer.found) return answer.result;
          if (tool.settleMs === undefined) {
            sending.notFoundUnsettled = true;
            return undefined;
          }
        }
        return tool.execute(sent, toolContext);
      }, bounds),
    { ...(sending.breaker && { state: sending.breaker }) },
  );
}

/** Whether the run is bound to this code (checkVersion passes). */
function onItsVersion(run: RunRecord, deps: Pick<CallToolDeps, 'agent' | 'fingerprint'>): boolean {
  try {
    checkVersion(run, deps.agent, deps.fingerprint);
    return true;
  } catch {
    return false;
  }
}

/** `basis` when it is the state its turn's write sealed (Ledger `checkHanded`), else undefined: the call reads. */
async function sealedBasis(ledger: Pick<CallToolDeps['ledger'], 'checkHanded'>, runId: string, basis: StepBasis): Promise<StepBasis | undefined> {
  try {
    await ledger.checkHanded(runId, basis);
    return basis;
  } catch (error) {
    if (isStepChanged(error)) return undefined;
    throw error;
  }
}

/** What a call answers where it must read (again) first (createCallTool `makeCall`): nothing sent, and nothing written it depends on. */
const READ_FIRST = Symbol('read first');

/** The reads of one attempt, each refused its claim (what it read changed: another writer), before it fails as transient (retried later). */
const CLAIM_READS = 4;

/**
 * A call a handed state may suffice for (handed-step.ts): of a tool the agent has, not an agent
 * tool (whose child run's wait reads). Whether its derivation asks a person is seen next.
 */
function handedTool(agent: AgentDefinition, name: string): boolean {
  const tool = findTool(agent, name);
  return tool !== undefined && !tool.child;
}

/** Runs the outside call once: the tool's answer as the model will see it, or what its failure comes to. */
async function attempt(deps: CallToolDeps, tool: ToolDefinition, send: () => Promise<unknown>): Promise<Attempted> {
  const started = deps.clock.now().getTime();
  let result: unknown;
  try {
    result = await send();
  } catch (error) {
    // The model is answered with the message; where the fault is (the stack) is for the operator.
    if (isToolFault(error)) deps.onToolFailure?.(tool.name, error);
    return failureOf(tool, error, deps.clock.now().getTime() - started);
  }
  const latencyMs = deps.clock.now().getTime() - started;
  try {
    return { kind: 'ok', outcome: { outcome: 'ok', result: resultJson(result), latencyMs } };
  } catch (error) {
    // It ran (a write's effect took place), and what it returned cannot be recorded: not an unknown outcome to send again.
    deps.onToolFailure?.(tool.name, error);
    return unrecordableResult(tool, error, latencyMs);
  }
}

/**
 * What a tool returned, as the ledger records it and the model reads it: its JSON, and `null` for
 * a tool that returns nothing (`execute` is typed `Promise<unknown>`: a write that answers with no
 * value is common). A value with no JSON — a BigInt, a cycle, a function — throws.
 */
function resultJson(value: unknown): string {
  if (value === undefined) return 'null';
  const text = JSON.stringify(value) as string | undefined;
  if (text === undefined) throw new TypeError(`a ${typeof value} is not JSON`);
  return text;
}

/** Whether the call has been through the approval wait in this execution (its `approval` input is the wait's end). */
const isWaited = (approval: unknown): boolean => typeof approval === 'object' && approval !== null;

/**
 * A call that needs approval runs only when approved. One not asked for yet — or still pending on a
 * call that has not waited in this execution (a resumed run) — goes to the approval wait
 * (`Agent.ApprovalNeeded`, caught into RequestApproval, which asks once). A rejected or expired
 * approval (or one still pending after the wait, which timed out: it is expired here) becomes the
 * tool's result.
 */
async function approvalRefusal(deps: CallToolDeps, run: RunRecord, turn: number, call: number, waited: boolean): Promise<Outcome | undefined> {
  let approval = await deps.ledger.getApproval(run.runId, turn, call);
  // Waiting on another run's request for the same effect (approvals/shared.ts): its decision, once made, is this one's.
  if (approval?.status === 'pending' && approval.sharedWith) approval = await takeSharedDecision(deps.ledger, approval, deps.clock.now());
  if (!approval || (approval.status === 'pending' && !waited)) {
    throw new ApprovalNeededError(`tool call ${turn}/${call} of run ${run.runId} needs an approval: ${approval ? 'waiting for it' : 'asking for it'}`);
  }
  if (approval.status === 'pending') {
    ({ record: approval } = await deps.ledger.decideApproval(
      approval,
      { status: 'expired', reason: 'the wait for a decision timed out', decidedBy: 'timeout' },
      deps.clock.now(),
    ));
  }
  if (approval.status === 'approved') {
    // Only a decision the approval callback signed is applied: a record written by anything else is refused.
    if (!deps.decisionMac || (await verifiedDecision(deps.decisionMac, approval))) return undefined;
    return { outcome: 'rejected', result: JSON.stringify({ error: 'approval_unverified', approvalId: approval.approvalId, reason: 'the decision is not signed by the approval callback' }), latencyMs: 0 };
  }
  const error = approval.status === 'rejected' ? 'approval_rejected' : 'approval_expired';
  return {
    outcome: approval.status === 'rejected' ? 'rejected' : 'expired',
    result: JSON.stringify({ error, approvalId: approval.approvalId, reason: approval.reason ?? '' }),
    latencyMs: 0,
  };
}

/**
 * A result of a tool that declares no `maxResultTokens` and is too large for the next model call
 * to carry in what is left of the run's token budget (bytes bound tokens from above, as the
 * reservation counts them: guards/budgets.ts `reservationFor`): sent on, it would stop the whole
 * run on its budget before the model ever saw it. The size it is held to, and the error a read
 * answers the model with, naming the settings that raise it.
 */
export function oversizedResult(tool: Pick<ToolDefinition, 'name'>, result: string, run: Pick<RunRecord, 'inputTokens' | 'outputTokens' | 'config'>): { limit: number; error: { error: 'result_too_large'; message: string } } | undefined {
  const { maxTokens, maxTokensPerTurn } = run.config;
  const left = maxTokens - run.inputTokens - run.outputTokens - NOTES_BYTES - FRAMING_TOKENS - maxTokensPerTurn;
  const bytes = Buffer.byteLength(result, 'utf8');
  if (bytes <= left) return undefined;
  return {
    // Cut to half of what is left: the rest of the conversation travels with it.
    limit: Math.max(256, Math.floor(left / 2)),
    error: {
      error: 'result_too_large',
      message: `the result of ${tool.name} is ${bytes} bytes, more than the next model call could carry in what is left of this run's token budget (${Math.max(0, left)} of its maxTokens, ${maxTokens}): ask for less (a narrower query, a page of it), or give the tool a maxResultTokens to have its results cut to a head`,
    },
  };
}

/** Renews `claim`'s lease (and its effect's, held by the same attempt, in the same write) every third of a lease until `stop` (which waits for a renewal under way). */
function keepLease(deps: CallToolDeps, claim: ToolCallRecord, effect?: { key: string; attempts: number }): { stop(): Promise<void> } {
  let renewing: Promise<unknown> = Promise.resolve();
  // On the run's clock's timers (a test's clock renews as it is moved), re-armed as each renewal starts.
  const timers = timersOf(deps.clock);
  const every = Math.max(1, Math.floor(deps.leaseMs / 3));
  const renew = () => {
    cancel = timers.after(every, renew);
    // A renewal that fails leaves the lease as it was: at worst it runs out, as a dead holder's does.
    renewing = renewing
      .then(() => {
        const now = deps.clock.now();
        return deps.ledger.renewCall({ runId: claim.runId, turn: claim.turn, call: claim.call, attempts: claim.attempts, now, leaseUntil: new Date(now.getTime() + deps.leaseMs), effect });
      })
      .catch(() => undefined);
  };
  let cancel = timers.after(every, renew);
  return {
    stop: async () => {
      cancel();
      await renewing;
    },
  };
}
