import { createHash } from 'node:crypto';
import { failedByAccident } from '../runs/run-end.js';
import { handedOffTo } from '../guards/history.js';
import type { ExecutionRunLedger, FleetLedger, RunLedger, TurnLedger } from '../ledger/ledger.js';
import { endExpected } from '../ledger/run-end.js';
import { openCalls, openTurnCalls, withCounted } from '../ledger/open-turn.js';
import { returnFleetLease } from '../guards/fleet.js';
import type { RecoveryRecord, RunRecord } from '../records/ledger-records.js';
import { causeMessage, ErrorNames, TransientError } from '../shared/errors.js';
import { clip } from '../shared/text.js';
import { LIVE_ALIAS } from '../runs/versions.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Clock } from '../shared/ports.js';
import { ExecutionStatusChange, runOfExecution } from '../runs/status-change.js';

/**
 * Recovery without an operator. A run whose execution ended without finishing it — failed after
 * its retries, timed out, or lost with the process that ran it — is resumed by a new execution
 * under the same run id: StartRun takes the run over and every step finds its recorded result in
 * the ledger, so nothing completed is done again and an in-flight side effect is re-sent with its
 * own idempotency key.
 *
 * On AWS an EventBridge rule on the state machine's "Execution Status Change" (FAILED, TIMED_OUT)
 * calls this step; the local engine calls it the same way, and its watchdog calls it for runs that
 * were running when a process died. Recoveries are bounded: after `maxWithoutProgress` recoveries
 * in a row after which the run made no progress, the run is given up with a clear reason.
 *
 * Why a new execution and not RedriveExecution: a redrive continues an execution from the state
 * that failed, but ours fail through a Catch into RecordFailure and end in a Fail state (a redrive
 * would fail there again), a timed-out execution is not redrivable, and an execution lost with
 * its process cannot be redriven anywhere. The ledger is the checkpoint; a new execution reads it.
 * ABORTED is not recovered: StopExecution is an operator's kill.
 */

/** How an execution ended, as recovery needs it. */
export interface EndedExecution {
  runId: string;
  executionArn: string;
  /** `LOST`: found by the local watchdog, the process that ran it is gone. */
  status: 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'LOST';
  /** When it ended (or was found lost); with the ARN, what makes a second delivery harmless. */
  endedAt: string;
  error?: string;
  cause?: string;
  /**
   * Where the run is continued, when the ending says (the event's version of the state machine, or
   * its `live` alias for an execution started unversioned): then no DescribeExecution is needed.
   * @default the version `executionArn` ran, asked of Step Functions
   */
  resumeOn?: string;
  /**
   * `LOST` while an approval of the run waited for a person (the local engine's process ended, say
   * `savepoint serve` stopped and started again): the run was not stuck, it waited, so this
   * recovery is not counted among those without progress.
   * @default false
   */
  waitingForPerson?: boolean;
}

export interface RecoveryPolicy {
  /** Recoveries in a row without progress (the run's steps did not grow) before the run is given up. */
  readonly maxWithoutProgress: number;
}

export const RECOVERY: RecoveryPolicy = { maxWithoutProgress: 3 };

// One place for what a failure by accident is (lambdas/runs/run-end.ts): the event stream asks it too.
export { failedByAccident };

export type RecoveryVerdict =
  | { action: 'ignore'; reason: string }
  | { action: 'give-up'; reason: string }
  | { action: 'recover'; recovery: RecoveryRecord; recorded: boolean };

/** What to do about a run whose execution ended: a pure function of the run record. */
export function recoveryVerdict(run: RunRecord, ended: EndedExecution, policy: RecoveryPolicy, now: Date): RecoveryVerdict {
  if (ended.status === 'ABORTED') return { action: 'ignore', reason: 'an aborted execution was stopped on purpose' };
  if (run.executionArn !== ended.executionArn) return { action: 'ignore', reason: `another execution drives the run (${run.executionArn})` };
  if (run.status !== 'running' && !failedByAccident(run)) {
    return { action: 'ignore', reason: `the run is ${run.status}${run.error ? ` (${run.error.error})` : ''}` };
  }
  // Its parent counts what it spent as final (records/child-budget.ts): a resume would be refused.
  if (run.settledIntoParentAt !== undefined) return { action: 'ignore', reason: `the run is a child run whose spend was settled into its parent ${run.parent?.runId ?? ''} when it ended` };
  const key = `${ended.executionArn}@${ended.endedAt}`;
  const previous = run.recovery;
  // A second delivery of the same ending: start the execution the first one recorded (idempotent).
  if (previous?.key === key) return { action: 'recover', recovery: previous, recorded: true };

  const reason = `execution ${ended.executionArn.split(':').pop()} ${ended.status}${ended.error ? `: ${ended.error}` : ''}${ended.cause ? ` (${clip(causeMessage(ended.cause), 200)})` : ''}`;
  const stalled = previous !== undefined && run.steps <= previous.atSteps;
  // A run lost while it waited for a person keeps the count it had: waiting is not being stuck.
  const withoutProgress = ended.waitingForPerson ? (stalled ? previous.withoutProgress : 0) : stalled ? previous.withoutProgress + 1 : 1;
  if (withoutProgress > policy.maxWithoutProgress) {
    return {
      action: 'give-up',
      reason: `not recovered: ${policy.maxWithoutProgress === 1 ? '1 recovery' : `${policy.maxWithoutProgress} recoveries`} in a row made no progress (stuck at step ${run.steps}); last: ${reason}`,
    };
  }
  const attempts = (previous?.attempts ?? 0) + 1;
  return {
    action: 'recover',
    recorded: false,
    recovery: { attempts, withoutProgress, atSteps: run.steps, key, reason, executionName: recoveryExecutionName(run.runId, attempts), at: now.toISOString() },
  };
}

/** Starts executions of the agent state machine (`StartExecution`); idempotent per name. */
export interface ExecutionStarter {
  /**
   * Starts execution `name`. With `sameVersionAs`, on the state machine version that execution
   * runs: a run is continued (resumed, recovered, handed off) on its own version, never moved to
   * newer code by accident (runs/versions.ts); with `on`, on that state machine ARN (a version the
   * caller knows already); otherwise on the configured ARN (the alias).
   */
  start(name: string, input: string, options?: { sameVersionAs?: string; on?: string }): Promise<{ executionArn: string }>;
}

export interface RecoverDeps {
  ledger: Pick<RunLedger, 'getRun' | 'recordRecovery' | 'finishRun'> & Pick<TurnLedger, 'listConversation'> & Pick<FleetLedger, 'returnFleetLease'>;
  starter: ExecutionStarter;
  clock: Clock;
  policy?: RecoveryPolicy;
  /** The bound of a run's agent, where agents differ (the stack's shared function). @default `policy` for every run */
  policyOf?: (agent: string | undefined) => RecoveryPolicy | undefined;
}

export type RecoverResult =
  | { runId: string; action: 'ignored' | 'gave-up'; reason: string }
  | { runId: string; action: 'recovered'; reason: string; attempt: number; executionArn: string };

/**
 * How many times RecoverRun decides again, in one invocation, when the run changed between its read
 * and its recovery's conditional write. A copy of the same ending (EventBridge delivers at least
 * once; two copies may run at once) that lost the write reads what the other wrote and answers
 * from it — ignored, or the same recovery started again by its name — instead of failing the
 * invocation (a function error) over a benign duplicate; so does the sweeper's (two sweeps may
 * overlap), which would count the failure in RunsNeedingAttention, its alarm. Past this many it
 * throws, and Lambda invokes it again.
 */
const DECISIONS_PER_INVOCATION = 3;

export function createRecoverRun(deps: RecoverDeps) {
  const decide = decideRecovery(deps);
  return async (ended: EndedExecution): Promise<RecoverResult> => {
    for (let decided = 1; ; decided++) {
      const result = await decide(ended);
      if (result !== CHANGED) return result;
      // Someone else recovered or resumed the run since it was read: decide again from what they wrote.
      if (decided >= DECISIONS_PER_INVOCATION) throw new TransientError(`run ${ended.runId} changed while recovering it, ${decided} times; try again`);
    }
  };
}

/** The run changed between RecoverRun's read and its recovery's write: decide again. */
const CHANGED = Symbol('changed');

/** One decision on `ended`'s run, from one read of it: CHANGED when its recovery's write found it changed since. */
function decideRecovery(deps: RecoverDeps) {
  const policy = deps.policy ?? RECOVERY;
  return async (ended: EndedExecution): Promise<RecoverResult | typeof CHANGED> => {
    let run;
    try {
      run = await deps.ledger.getRun(ended.runId);
    } catch (error) {
      // A run record that fails verification is never resumed: an operator looks (docs/guarantees.md).
      if ((error as Error).name === ErrorNames.LedgerIntegrity) return { runId: ended.runId, action: 'ignored', reason: (error as Error).message };
      throw error;
    }
    if (!run) return { runId: ended.runId, action: 'ignored', reason: 'no such run (it never started)' };
    // Progress is the run's steps, with its open turn's calls, which count no step until the next
    // model turn (ledger/open-turn.ts): a lost execution that only made calls made progress.
    const open = openCalls(run, await openTurnCalls(deps.ledger, run));
    const verdict = recoveryVerdict(withCounted(run, open), ended, deps.policyOf?.(run.agent) ?? policy, deps.clock.now());
    // ---- continue-as-new: the chain is followed (lambdas/steps/handoff.ts) ----
    // An execution that died after recording its handoff: its successor is started by name
    // (idempotent: a running or finished successor is left as it is).
    const successor = verdict.action === 'ignore' && ended.status !== 'ABORTED' && run.status === 'running' ? handedOffTo(run, ended.executionArn) : undefined;
    if (successor !== undefined && successor === run.executionArn) {
      const { executionArn } = await deps.starter.start(successor.split(':').pop()!, JSON.stringify({ runId: run.runId, input: run.input }), continuing(ended));
      return { runId: run.runId, action: 'recovered', reason: `execution ${ended.executionArn.split(':').pop()} ${ended.status} after handing the run off: its successor is started`, attempt: 0, executionArn };
    }
    if (verdict.action === 'ignore') {
      // This ending gave the run up before, and that invocation failed after (its lease return
      // throttled, say): Lambda invokes it again, or a copy of the ending comes. The lease goes back now, once.
      if (givenUpOn(run, ended)) await returnFleetLease(deps.ledger, run, deps.clock.now());
      return { runId: run.runId, action: 'ignored', reason: verdict.reason };
    }
    if (verdict.action === 'give-up') {
      // Only the run as read is given up: a copy of the same ending (EventBridge delivers at least
      // once, two copies may run at once) finds it given up already, and writes nothing.
      const finished = await deps.ledger.finishRun(run.runId, { status: 'failed', stopReason: verdict.reason, error: { error: ErrorNames.Unrecoverable, cause: verdict.reason } }, deps.clock.now(), endExpected(run));
      if (!finished) return { runId: run.runId, action: 'ignored', reason: 'the run changed while it was given up (another delivery of this ending gave it up)' };
      // A run given up spends nothing more: its fleet budget's lease goes back (guards/fleet.ts).
      await returnFleetLease(deps.ledger, finished, deps.clock.now());
      return { runId: run.runId, action: 'gave-up', reason: verdict.reason };
    }
    const { recovery } = verdict;
    if (!verdict.recorded && !(await deps.ledger.recordRecovery(run.runId, recovery, { executionArn: ended.executionArn, previousKey: run.recovery?.key }))) return CHANGED;
    const { executionArn } = await deps.starter.start(recovery.executionName, JSON.stringify({ runId: run.runId, input: run.input }), continuing(ended));
    return { runId: run.runId, action: 'recovered', reason: recovery.reason, attempt: recovery.attempts, executionArn };
  };
}

/** Whether `run` was given up on `ended` (the give-up below): the execution that drove it ended so, and it failed Unrecoverable. */
function givenUpOn(run: RunRecord, ended: EndedExecution): boolean {
  return run.status === 'failed' && run.error?.error === ErrorNames.Unrecoverable && run.executionArn === ended.executionArn;
}

/** A run is continued on the version its ended execution ran: the one the ending names, else the one Step Functions tells. */
function continuing(ended: EndedExecution): { on: string } | { sameVersionAs: string } {
  return ended.resumeOn !== undefined ? { on: ended.resumeOn } : { sameVersionAs: ended.executionArn };
}

/**
 * The recovery Lambda: an execution status change in, a recovery (or a reason not to) out. It loads
 * no agent's code (the stack's one function serves every agent): the run is the one the execution's
 * input names, or StartRun noted (runs/status-change.ts `runOfExecution`); the bound of recoveries
 * is its agent's (`policyOf`).
 */
export function createRecoverOnStatusChange(deps: RecoverDeps & { ledger: Pick<ExecutionRunLedger, 'runOfExecution'> }) {
  const recover = createRecoverRun(deps);
  return async (event: unknown): Promise<RecoverResult | { action: 'ignored'; reason: string }> => {
    const { detail, time } = parseOrThrow(ExecutionStatusChange(), event, 'execution status change');
    if (detail.status !== 'FAILED' && detail.status !== 'TIMED_OUT' && detail.status !== 'ABORTED') {
      return { action: 'ignored', reason: `execution ${detail.status}` };
    }
    const runId = await runOfExecution(deps.ledger, detail);
    if (!runId) return { action: 'ignored', reason: 'the execution drives no run (its input names none, and StartRun noted none)' };
    return recover({
      runId,
      executionArn: detail.executionArn,
      status: detail.status,
      endedAt: new Date(detail.stopDate ?? (time ? Date.parse(time) : deps.clock.now().getTime())).toISOString(),
      ...(detail.error ? { error: detail.error } : {}),
      ...(detail.cause ? { cause: detail.cause } : {}),
      ...(detail.stateMachineArn ? { resumeOn: detail.stateMachineVersionArn ?? `${detail.stateMachineArn}:${LIVE_ALIAS}` } : {}),
    });
  };
}

/** `<runId>-recovery-<n>`, within the 80 characters an execution name may have. */
export function recoveryExecutionName(runId: string, attempt: number): string {
  const suffix = `-recovery-${attempt}`;
  if (runId.length + suffix.length <= 80) return `${runId}${suffix}`;
  const hash = createHash('sha256').update(runId).digest('hex').slice(0, 8);
  return `${runId.slice(0, 80 - suffix.length - hash.length - 1)}-${hash}${suffix}`;
}
