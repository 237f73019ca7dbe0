import { InvalidInputError } from '../../lambdas/shared/errors.js';
import { childRunId, stableJson, type AgentDefinition, type ToolTrace } from '../../lambdas/define.js';
import type { CallCompletion, Ledger } from '../../lambdas/ledger/ledger.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { approvalSkOf, type ApprovalRecord, type RunConfig, type RunRecord, type ToolCallRecord } from '../../lambdas/records/ledger-records.js';
import { resolveResults } from '../../lambdas/ledger/blobs.js';
import { createDecideApproval } from '../../lambdas/approvals/decision.js';
import { CircuitBreaker } from '../../lambdas/guards/breaker.js';
import { singleModel } from '../../lambdas/models/registry.js';
import { deploymentPrices } from '../../lambdas/models/prices.js';
import { codeFingerprint } from '../../lambdas/runs/versions.js';
import type { Clock } from '../../lambdas/shared/ports.js';
import { Steps, type StepName } from '../../lambdas/shared/steps.js';
import { createSteps, type AgentSteps } from '../../lambdas/wiring/create-steps.js';
import { LOCAL_BREAKER } from '../runtime/local-breaker.js';
import { differingPart, meteredTools, recordedDecision, recordedModel, recordedTools, referee, type Divergence, type FailedHere, type Referee } from './answers.js';
import { agentLoop, lambdaFailure } from './loop.js';
import { approvalOf, loadRecording, recordedClock, startConfig, type Recording } from './recording.js';
import { counted } from '../../lambdas/shared/text.js';
import { globalKillOf } from '../../lambdas/guards/budgets.js';
import { STOP_EXECUTION } from '../../lambdas/steps/execution-stopped.js';
import { ErrorNames } from '../../lambdas/shared/errors.js';
import { AttemptCut } from '../../lambdas/tools/attempt.js';
import { endExpected } from '../../lambdas/ledger/run-end.js';

export type { Divergence } from './answers.js';
export { loadRecording, type Recording } from './recording.js';

/**
 * `savepoint replay`: a finished or stopped run re-executed on this code with no live call. The
 * steps of the harness — the same step functions a local run and Lambda run — are driven through
 * the agent loop of the state machine (loop.ts, with no engine: issue 38) over an in-memory
 * ledger; only what is outside the harness is answered from the recording — each model turn by
 * its recorded response (answers.ts `recordedModel`), each tool call by its recorded result
 * (`recordedTools`), each approval by its recorded decision, the clock by the recorded times
 * (recording.ts `recordedClock`). What the harness decides on its own is compared as it happens:
 * each request to the model, each tool call's name, arguments and key, each approval asked for;
 * then the guard events, the run's outcome and the agent's report. The first difference is the
 * divergence; none, and the replay is identical.
 */
export interface ReplayOptions {
  /** This code: the agent whose handlers the replay runs. */
  readonly agent: AgentDefinition<any, any, any>;
  /** The ledger that recorded the run (a state directory's, or a deployed stack's). */
  readonly source: Ledger;
  readonly runId: string;
  readonly log?: (line: string) => void;
}

/** What a replay found (`savepoint replay`, `TestEnvironment.replay`): identical, or where it first diverged. */
export interface ReplayResult {
  /** The run replayed. */
  runId: string;
  /** Whether the replay did all the recorded run did, with no live call. */
  identical: boolean;
  /** Where it first did otherwise; none when identical. */
  divergence?: Divergence;
  /** Turns and tool calls the replay answered from the recording (not a fork's copied turns: its StartRun copies them). */
  answered: { turns: number; toolCalls: number; approvals: number };
  /**
   * Calls made for real: model requests that reached a model client other than the recording's
   * (the replay's steps are given none: bench/replay.ts and the tests count the run's own model
   * server's requests as well), and calls that reached a tool's own code (`execute`, `reconcile`)
   * instead of the recording. Any is a divergence; 0 in a replay.
   */
  live: { model: number; tools: number };
  /** What the replay took, and what the recorded run took from its start to its end. */
  wallMs: number;
  /** Of `wallMs`, reading the recording and setting up what the steps run on (an in-memory ledger; no engine). */
  setupMs: number;
  /** The recorded run's wall time, from its start to its end. */
  recordedWallMs: number;
}

/** A local stack's lease on an in-flight tool call (local/runtime/local-stack.ts), which a replay's calls take. */
const LEASE_MS = 1_000;
/** The code version a local stack runs (`codeVersion`'s default): a fork's stand-in parent is bound to it. */
const CODE_VERSION = 'dev';

/**
 * A monotonic clock in milliseconds. Not `performance.now()`: node:perf_hooks (nine modules, the
 * global `performance` too) is loaded by nothing else `savepoint replay` runs, ~0.7 ms of its CPU.
 */
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

export async function replayRun(options: ReplayOptions): Promise<ReplayResult> {
  const started = nowMs();
  const recording = await loadRecording(options.source, options.runId);
  if (!recording) throw new ReplayRefusedError(`runId: no run ${options.runId} in the ledger`);
  if (recording.run.status === 'running') throw new ReplayRefusedError(`runId: run ${options.runId} is still running; replay a finished or stopped run`);
  const judge = referee();
  const clock = recordedClock(recording);
  const asked = new Set<string>();
  // The agent's own tool code, counted beneath the recorded answers: a call that reaches it is live.
  const metered = meteredTools(options.agent);
  // Where a failed run's execution failed, the replay's fails (failExecution, below).
  const failure = recording.run.status === 'failed' ? recording.run.error : undefined;
  const failedHere: FailedHere | undefined = failure && ((step) => failExecution(failure, step));
  const agent = recordedTools(metered.agent, recording, judge, (turn, call) => asked.has(approvalSkOf({ turn, call })), failedHere);
  // A fork's turns before its fork point were copied, not made by it: the replay copies them the
  // same way (its StartRun, from a stand-in parent made of them) and answers only its own.
  const lineage = recording.run.forkedFrom;
  const copied = lineage ? recording.turns.filter((turn) => turn.turn < lineage.turn).length : 0;
  const model = recordedModel(recording, agent, judge, copied, failedHere);
  // This code's fingerprint, made once: every function's steps check the run against it.
  const fingerprint = codeFingerprint(agent, CODE_VERSION, deploymentPrices(agent.prices));
  const models = singleModel(model.client);
  // Its records are written and read by the replayed steps only, which change none of what they
  // write or read: kept as written and handed out, frozen, not copied (a step that tried to change
  // one would throw, and the replay would not be identical).
  // Nor does a turn's write hand its calls a sealed state: the replay's loop passes CallTool no
  // decision to take it from (loop.ts `toolCall`), and each call reads; made and sealed every
  // turn, it would be read by nothing.
  const store = EmbeddedLedger.open({ sharedReads: true, handsState: false });
  const kill = recordedKill(recording, clock, asked, store);
  const ledger = passingLedger(store, recording, clock, asked, kill);
  // One view per function: what each caches of the ledger (conversation/turns.ts) is its own, as
  // each Lambda function's is. An object of its own over the ledger, its methods found on it.
  const views = new Map<StepName, Ledger>();
  const ledgerOf = (step: StepName) => {
    let view = views.get(step);
    if (!view) views.set(step, (view = Object.create(ledger) as Ledger));
    return view;
  };
  // A request for approval runs beside its turn's other calls, which the replay may not have
  // reproduced yet: it reads the time it was recorded at (recording.ts `at`), not theirs.
  const requestApproval = (payload: unknown, signal?: AbortSignal) => {
    const { turn = 0, call = 0, extension } = payload as { turn?: number; call?: number; extension?: ApprovalRecord['budget'] };
    return momentSteps(Steps.RequestApproval, `asked:${approvalSkOf({ turn, call, budget: extension })}`)[Steps.RequestApproval](payload, signal);
  };
  // In a killed run, a tool call of a recorded turn that the recording lacks, and that asked for no
  // approval, is one the kill refused (a write's claim, once the flag changed since its turn): the
  // kill is made before it runs. (One that asked was refused after its decision: recordedKill.)
  const recordedCalls = new Set([...recording.calls, ...recording.approvals.filter((approval) => !approval.budget)].map((call) => `${call.turn}:${call.call}`));
  const callTool = async (payload: unknown, signal?: AbortSignal) => {
    const { turn, call } = payload as { turn?: number; call?: number };
    if (kill && !recordedCalls.has(`${turn}:${call}`)) await kill.now();
    return stepsOf(Steps.CallTool)[Steps.CallTool](payload, signal);
  };
  const loop = agentLoop({ steps: (step) => (step === Steps.RequestApproval ? requestApproval : step === Steps.CallTool && kill ? callTool : stepsOf(step)[step]), definition: { hash: recording.run.definitionHash ?? 'replay' } });
  // Each function its own steps, as each Lambda function has its own clients.
  const built = new Map<StepName, AgentSteps>();
  const stepsOf = (step: keyof AgentSteps): AgentSteps => {
    let steps = built.get(step);
    if (!steps) built.set(step, (steps = stepsOn(step, clock)));
    return steps;
  };
  // A step that reproduces one recorded moment (an approval's request, decision or expiry), on a clock that reads that moment.
  const momentSteps = (step: keyof AgentSteps, key: string): AgentSteps => stepsOn(step, clock.at(key));
  const stepsOn = (step: keyof AgentSteps, stepClock: Clock): AgentSteps => {
    const own = ledgerOf(step);
    return createSteps(agent, {
      ledger: own,
      models,
      clock: stepClock,
      breaker: new CircuitBreaker(own, stepClock, LOCAL_BREAKER),
      callbacks: loop.callbacks,
      // One execution drives the replayed run at a time, and nothing else runs here.
      executions: { isRunning: async () => false, stop: async () => undefined },
      starter: loop.starter,
      leaseMs: LEASE_MS,
      codeVersion: CODE_VERSION,
      fingerprint,
      agentEnv: {},
      notify: (approval) => void decide(approval).catch((error: unknown) => options.log?.(String(error))),
    });
  };
  let approvals = 0;
  // Divergences found outside a step (an approval) stop the execution from outside.
  const outside = (divergence: Divergence) => {
    try {
      judge.diverged(divergence);
    } catch {
      loop.stop();
    }
  };
  // The approval callback, as the approval API runs it, deciding as the recorded decider did, at the recorded time.
  const decideApproval = (key: string) => createDecideApproval({ ledger: ledgerOf(Steps.ApprovalCallback), callbacks: loop.callbacks, clock: clock.at(key), agentName: agent.name, policy: { separationOfDuties: false } });
  const decide = async (approval: ApprovalRecord) => {
    const recorded = approvalOf(recording, approval);
    const at = { turn: approval.turn, call: approval.call, what: 'approval' };
    if (!recorded) return outside({ ...at, recorded: 'no approval', produced: `approval asked: ${approval.summary}`, why: "the call asks for approval where the recorded run did not (the tool's approval rule changed)" });
    if (recorded.toolName !== approval.toolName || recorded.summary !== approval.summary || stableJson(recorded.amount) !== stableJson(approval.amount)) {
      return outside({ ...at, recorded: `approval asked: ${recorded.summary}`, produced: `approval asked: ${approval.summary}`, why: 'the approval request changed' });
    }
    const decision = recordedDecision(recorded);
    if (decision === undefined) return outside({ ...at, recorded: 'no decision', produced: 'a decision is needed', why: 'the recorded run ended before this approval was decided' });
    // Closed by the stop of the execution that waited for it, not by a person: the stop reproduced.
    if (recorded.decidedBy === STOP_EXECUTION) {
      approvals += 1;
      return stopExecution();
    }
    // Decided at its recorded turn: after what happened before it (other calls of its turn, other
    // decisions), so that their times are the recorded ones; and at its own recorded time (a
    // budget extension's decision has no turn's moment to wait for).
    const key = `decided:${approvalSkOf(recorded)}`;
    await clock.reached(key);
    approvals += 1;
    if (decision === 'expire') {
      await momentSteps(Steps.ExpireApprovals, key)[Steps.ExpireApprovals]({});
      return;
    }
    const result = await decideApproval(key)(recorded.approvalId, decision, { caller: { id: recorded.decidedBy ?? 'replay', via: 'cli' } });
    if (!result.ok) throw new Error(`replay: the approval callback refused the recorded decision (${result.status}: ${result.message})`);
  };
  /**
   * A StopExecution of the replay's execution, as the recorded run's was stopped while it waited
   * (`savepoint kill` of a waiting run, a cancel, the console): the kill made again first
   * (recordedKill), then the execution stopped (nothing more runs) and its end handled by the same
   * step that handled the recorded one's (ExecutionStopped: the run killed for the same reason, its
   * approvals closed), at the recorded time of the kill.
   */
  const stopExecution = () =>
    (ending ??= (async () => {
      await kill?.whenDue();
      const replayed = await ledger.getRun(recording.run.runId);
      loop.stop();
      if (!replayed?.executionArn || !startedWith) return;
      const stopDate = Date.parse(recording.run.killed?.at ?? recording.run.finishedAt ?? recording.run.updatedAt);
      const change = { 'detail-type': 'Step Functions Execution Status Change', source: 'aws.states', detail: { executionArn: replayed.executionArn, status: 'ABORTED', stopDate, input: startedWith } };
      await stepsOf(Steps.ExecutionStopped)[Steps.ExecutionStopped](change);
    })());
  /**
   * The failure of a run that failed, made again where its execution failed (answers.ts
   * FailedHere): the provider's refusal, or an outage that outlasted the retries, is outside the
   * harness as a model's answer is. The replay's execution is stopped there (nothing more runs) and
   * ends as the recorded one did: a model call's failure caught into RecordFailure (the Finalize
   * step, with the recorded error as the Catch passes it; a tool call's has no Catch: its execution
   * just failed); then a run given up by recovery after executions that failed there without
   * progress (RecoverRun: Agent.Unrecoverable) is given up again with the recorded reason, which the
   * replay's one execution cannot count its way to. The step that asked is then cut off with
   * nothing recorded, as a call the wall clock cuts off is.
   */
  const failExecution = async (error: NonNullable<RunRecord['error']>, step: 'model' | 'tool'): Promise<never> => {
    await (ending ??= (async () => {
      let replayed = await ledger.getRun(recording.run.runId);
      loop.stop();
      if (!replayed?.executionArn) return;
      if (step === 'model') {
        // The recorded error, as a Catch passes a step's failure on.
        const failure = lambdaFailure(Object.assign(new Error(error.cause), { name: error.error })).asCaught;
        await stepsOf(Steps.Finalize)[Steps.Finalize]({ executionArn: replayed.executionArn, runId: replayed.runId, failure });
        replayed = (await ledger.getRun(replayed.runId)) ?? replayed;
      }
      if (error.error === ErrorNames.Unrecoverable) {
        const at = new Date(recording.run.finishedAt ?? recording.run.updatedAt);
        await ledger.finishRun(replayed.runId, { status: 'failed', stopReason: recording.run.stopReason ?? error.cause, error }, at, endExpected(replayed));
      }
    })());
    throw new AttemptCut({ kind: 'wallClock', message: 'the replay stopped where the recorded run failed' });
  };
  /** The recorded end made again from outside (stopExecution, failExecution), which the end is compared after. */
  let ending: Promise<void> | undefined;
  /** The run request the replay's execution started with (its input, as a status change carries it). */
  let startedWith: string | undefined;
  const setupMs = Math.round(nowMs() - started);
  try {
    const { run } = recording;
    // The budgets it started with: an approved extension is reproduced where it was recorded, from its decision.
    const config = startConfig(recording);
    if (lineage) {
      await standInParent(ledger, recording, { lineage, fingerprint: fingerprint(run.model), config, laterWrites: await parentWritesAfter(options.source, lineage) });
    }
    await standInChildren(ledger, options.source, options.agent, recording.run.runId);
    const request = {
      runId: run.runId,
      input: run.input,
      config,
      model: run.model,
      ...(run.startedBy && { startedBy: run.startedBy }),
      ...(lineage && { fork: { from: lineage.runId, at: lineage.turn, effects: lineage.effects } }),
    };
    startedWith = JSON.stringify(request);
    await loop.run(`replay-${run.runId}`.slice(0, 80), request);
    await loop.settled();
    await ending;
    const replayed = await ledger.getRun(run.runId);
    const lastTurn = recording.turns.at(-1)?.turn ?? 0;
    const liveTool = metered.first();
    const divergence =
      judge.divergence ??
      (liveTool !== undefined ? { turn: lastTurn, what: 'live call', recorded: 'every tool call answered from the recording', produced: `${counted(metered.live(), 'live call')} (first: ${liveTool})`, why: `tool ${liveTool} was run for real, not answered from the recording` } : undefined) ??
      (await compareEnd(recording, replayed, { turns: model.reached(), calls: agent.toolCalls() }, { ledger, agent: options.agent, judge }));
    return {
      runId: run.runId,
      identical: divergence === undefined,
      ...(divergence && { divergence }),
      answered: { turns: model.calls(), toolCalls: agent.toolCalls(), approvals },
      // No model client but the recording's is given to the steps: no request can reach a model from here.
      live: { model: 0, tools: metered.live() },
      wallMs: Math.round(nowMs() - started),
      setupMs,
      recordedWallMs: Date.parse(run.finishedAt ?? run.updatedAt) - Date.parse(run.createdAt),
    };
  } finally {
    loop.stop();
    await loop.settled();
    await store.close();
  }
}

/** A replay asked of what cannot be replayed (no such run, a run still running): invalid input, never a divergence. */
export class ReplayRefusedError extends InvalidInputError {}

/** After the last step (`turns` recorded turns reached, a fork's copied ones included, and `calls` tool calls answered): the calls not reproduced, the guards, the outcome, the report. */
async function compareEnd(
  recording: Recording,
  replayed: RunRecord | undefined,
  { turns, calls }: { turns: number; calls: number },
  { ledger, agent, judge }: { ledger: Ledger; agent: AgentDefinition; judge: Referee },
): Promise<Divergence | undefined> {
  const { run } = recording;
  const lastTurn = recording.turns.at(-1)?.turn ?? 0;
  const check = (divergence: Divergence | false) => {
    if (!divergence) return;
    try {
      judge.diverged(divergence);
    } catch {
      // noted: the first one stands
    }
  };
  if (!replayed) return { turn: 0, what: 'outcome', recorded: run.status, produced: 'no run', why: 'the run was not started (StartRun refused it)' };
  const stopped = `${replayed.status}${replayed.stopReason ? `: ${replayed.stopReason}` : ''}`;
  const recordedStop = `${run.status}${run.stopReason ? `: ${run.stopReason}` : ''}`;
  if (turns < recording.turns.length) check({ turn: recording.turns[turns]!.turn, what: 'model request', recorded: `turn ${recording.turns[turns]!.turn}`, produced: `the run ended (${stopped})`, why: 'the run ended before the recorded run did' });
  const answered = recording.calls.filter((call) => call.outcome !== 'rejected' && call.outcome !== 'expired').length;
  if (calls < answered) {
    const { calls: made } = await ledger.listConversation(run.runId);
    const missing = recording.calls.find((call) => !made.some((other) => other.turn === call.turn && other.call === call.call && other.status === 'completed'));
    if (missing) check({ turn: missing.turn, call: missing.call, what: 'tool call', recorded: `${missing.name} ${JSON.stringify(missing.args)}`, produced: 'not called', why: 'a recorded tool call was not made' });
  }
  const guards = (record: RunRecord) => (record.guardEvents ?? []).map((event) => `${event.guard} ${event.action}: ${event.reason}`).join('\n');
  if (guards(run) !== guards(replayed)) check({ turn: lastTurn, what: 'guards', recorded: guards(run) || 'none', produced: guards(replayed) || 'none', why: 'the guards decided otherwise' });
  if (recordedStop !== stopped) check({ turn: lastTurn, what: 'outcome', recorded: recordedStop, produced: stopped, why: 'the run ended otherwise' });
  if (run.report !== undefined) {
    // The report the recorded run's own code made at its end, against this code's (its Finalize's).
    const [before, after] = [stableJson(run.report), stableJson(replayed.report ?? null)];
    if (before !== after) check({ turn: lastTurn, what: 'report', ...differingPart(before, after), why: "the agent's report differs" });
  } else if (agent.report) {
    // A run recorded before runs kept their report: this code's report over the recorded calls and the replayed ones.
    const traces = async (source: ToolTrace[]) => stableJson(agent.report!(source));
    const { calls: made } = await ledger.listConversation(run.runId);
    const [before, after] = [await traces(recording.calls), await traces(await resolveResults(ledger, made))];
    if (before !== after) check({ turn: lastTurn, what: 'report', ...differingPart(before, after), why: "the agent's report differs" });
  }
  return judge.divergence;
}

/**
 * The parent a fork's replay copies its first turns from: the fork's own copies (edited results
 * included, so the replay's copy is what the recorded fork was shown), under the parent's run id,
 * on the fork's model and bound to the code replaying it (so StartRun lets it continue them, and a
 * change of code is named where the fork's own first request differs). Written before the replay
 * starts, past the recorded clock.
 */
async function standInParent(
  ledger: Ledger,
  recording: Recording,
  { lineage, fingerprint, config, laterWrites }: { lineage: NonNullable<RunRecord['forkedFrom']>; fingerprint: string; config: RunConfig; laterWrites: ToolCallRecord[] },
): Promise<void> {
  const { forkedFrom: _from, forks: _forks, budgetExtensions: _extensions, budgetsBeforeExtension: _before, loopAllowedThrough: _allowed, ...run } = recording.run;
  const parent = lineage.runId;
  // On the budgets the fork started with (a fork takes its parent's), not those its own extensions raised.
  await ledger.createRun({ ...run, config, runId: parent, fingerprint, status: 'succeeded' });
  for (const turn of recording.turns.filter((record) => record.turn < lineage.turn)) await ledger.recordTurn({ ...turn, runId: parent });
  const at = new Date(recording.run.createdAt);
  for (const call of recording.calls.filter((record) => record.turn < lineage.turn)) await ledger.recordCall({ ...call, runId: parent, status: 'completed' }, at);
  for (const call of laterWrites) await ledger.recordCall({ ...call, runId: parent, status: 'completed' }, at);
}

/**
 * The child runs the recorded run's agent tools started (`defineAgentTool`), as the source ledger
 * holds them: CallTool answers each call from its child's record (its result, the spend it
 * settles on the parent) as it did, and starts nothing (the replay's stack runs no child agent).
 */
async function standInChildren(ledger: Ledger, source: Ledger, agent: AgentDefinition, runId: string): Promise<void> {
  // An agent with no agent tool started no child: the conversation is not read a second time.
  if (!agent.tools.some((tool) => tool.child)) return;
  const { calls } = await source.listConversation(runId);
  for (const call of calls) {
    if (!agent.tools.find((tool) => tool.name === call.name)?.child) continue;
    const child = await source.getRun(childRunId(runId, call.turn, call.toolCallId));
    if (child && child.status !== 'running') await ledger.createRun(child);
  }
}

/**
 * A `reuse` fork's parent's completed writes from the fork point on, as the source ledger holds
 * them: what the recorded fork answered its repeated writes from (and asked nobody about), so the
 * replay's stand-in parent answers them the same way. None for a dry fork, or a parent since pruned.
 */
async function parentWritesAfter(source: Ledger, lineage: NonNullable<RunRecord['forkedFrom']>): Promise<ToolCallRecord[]> {
  if (lineage.effects !== 'reuse' || !(await source.getRun(lineage.runId))) return [];
  const { calls } = await source.listConversation(lineage.runId);
  return resolveResults(source, calls.filter((call) => call.turn >= lineage.turn && call.status === 'completed' && call.effect === 'write'));
}

/** The kill of a killed run, made again in the replay once it is due (recordedKill). */
interface RecordedKill {
  /** Kills the run in the replay's ledger if the replay has reached the kill's moment and has not killed it yet. */
  whenDue(): Promise<void>;
  /** Kills the run now, if it has not killed it yet: a call the recording lacks is one the kill refused. */
  now(): Promise<void>;
}

/**
 * A kill is a person's (`savepoint kill`, StopExecution), as a decision is: a run that was killed is
 * killed again in the replay where the recorded run noticed it, after the last thing it recorded.
 * The kill is due once every moment the recording holds has been reproduced (its start, each turn
 * and call) and every approval it asked for has been asked again (a call's approval asked while the
 * run was killed has no call of its own to reproduce); the next step then stops the run as the
 * recorded run's did, for the same reason. Not by the kill's recorded time: a test's clock, or two
 * writes in one millisecond, cannot order it. Made at once (`now`) before a call the recording
 * lacks, which the kill refused. The run's own kill flag, or the flag of all runs its stop reason
 * names (the run keeps no copy of that one).
 */
function recordedKill(recording: Recording, clock: ReturnType<typeof recordedClock>, asked: ReadonlySet<string>, ledger: Ledger): RecordedKill | undefined {
  const { run } = recording;
  if (run.status !== 'killed') return undefined;
  const flag = run.killed ?? (run.stopReason === undefined ? undefined : globalKillOf(run.stopReason));
  if (!flag) return undefined;
  const askedFor = recording.approvals.map(approvalSkOf);
  let done = false;
  const now = async () => {
    if (done) return;
    done = true;
    if (run.killed) await ledger.killRun(run.runId, run.killed);
    else await ledger.setGlobalKill(flag);
  };
  return {
    async whenDue() {
      if (clock.allPassed() && askedFor.every((key) => asked.has(key))) await now();
    },
    now,
  };
}

/** The replay's ledger, telling the recorded clock which recorded moment each write reproduces, and the recorded kill when it may be due. */
function passingLedger(ledger: Ledger, recording: Recording, clock: ReturnType<typeof recordedClock>, asked: Set<string>, kill: RecordedKill | undefined): Ledger {
  const target = ledger;
  // The recorded kill looked at after each moment only in a run that was killed: no other replay waits a tick more a write.
  const after = kill
    ? <T>(result: Promise<T>, key: string) =>
        result.then(async (value) => {
          clock.passed(key);
          await kill.whenDue();
          return value;
        })
    : <T>(result: Promise<T>, key: string) => result.then((value) => (clock.passed(key), value));
  // Only the replayed run's writes reproduce its moments (a fork's stand-in parent's do not).
  const passing: Partial<Ledger> = {
    createRun: (run) => (run.runId === recording.run.runId ? after(target.createRun(run), 'run') : target.createRun(run)),
    recordTurn: (...args) => (args[0].runId === recording.run.runId ? after(target.recordTurn(...args), `turn:${args[0].turn}`) : target.recordTurn(...args)),
    recordCall: (...args) => (args[0].runId === recording.run.runId ? after(target.recordCall(...args), `call:${args[0].turn}:${args[0].call}`) : target.recordCall(...args)),
    completeCall: (completion: CallCompletion) => after(target.completeCall(completion), `call:${completion.turn}:${completion.call}`),
    // An approval's id is random (steps/request-approval.ts), and it reaches the model in a
    // refusal's result: the replay's approval takes the recorded id, so that the bytes match.
    // The step still sees its own id on the write that created it (so it tells approvers once).
    upsertApproval: async (approval: ApprovalRecord, token: string) => {
      const key = approvalSkOf(approval);
      const first = !asked.has(key);
      asked.add(key);
      const recordedId = approvalOf(recording, approval)?.approvalId ?? approval.approvalId;
      const stored = await after(target.upsertApproval({ ...approval, approvalId: recordedId }, token), `asked:${key}`);
      return first && stored.approvalId === recordedId ? { ...stored, approvalId: approval.approvalId } : stored;
    },
    decideApproval: (...args) => after(target.decideApproval(...args), `decided:${approvalSkOf(args[0])}`),
  };
  // Every ledger call of the replay comes through here: a plain object with each of the ledger's
  // methods bound once (no Proxy trap a call), over the ledger for anything else.
  const methods: Record<string, unknown> = Object.create(ledger);
  for (let layer: object | null = ledger; layer !== null && layer !== Object.prototype; layer = Object.getPrototypeOf(layer)) {
    for (const name of Object.getOwnPropertyNames(layer)) {
      const value = Object.getOwnPropertyDescriptor(layer, name)?.value as unknown;
      if (name !== 'constructor' && !Object.hasOwn(methods, name) && typeof value === 'function') methods[name] = (value as (...args: unknown[]) => unknown).bind(ledger);
    }
  }
  return Object.assign(methods, passing) as unknown as Ledger;
}
