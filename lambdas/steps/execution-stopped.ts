import type { AgentDefinition } from '../define.js';
import type { ApprovalLedger, ChildWaitLedger, ExecutionRunLedger, FleetLedger, GuardLedger, RunLedger, TurnLedger } from '../ledger/ledger.js';
import { endExpected } from '../ledger/run-end.js';
import { returnFleetLease } from '../guards/fleet.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Clock, TaskCallbacks } from '../shared/ports.js';
import { ExecutionStatusChange, childRequestOf, runOfExecution } from '../runs/status-change.js';
import { settleUp, wakeParent, type ChildStarter } from '../tools/child-runs.js';
import { killChildren } from '../runs/child-tree.js';
import type { ChildWait, RunRecord } from '../records/ledger-records.js';

type StoppedDeps = {
  ledger: RunLedger & GuardLedger & ChildWaitLedger & Pick<TurnLedger, 'listConversation'> & Pick<ExecutionRunLedger, 'runOfExecution'> & Pick<ApprovalLedger, 'listPendingApprovals' | 'decideApproval'> & Pick<FleetLedger, 'returnFleetLease'>;
  clock: Clock;
  /** Wakes a parent's wait when one of its child runs ends. @default none: no child wakes anything */
  callbacks?: TaskCallbacks;
  /**
   * The agent whose code runs a run, where this function has it (the twin's, one agent's stack):
   * a run killed by its stop takes its child runs with it (runs/child-tree.ts). @default none: the
   * stack's function loads no agent's code; a cancel through the runs API stops the whole tree
   */
  agentOf?: (name: string) => AgentDefinition | undefined;
  /** Stops the killed children's executions. @default none: their kills are recorded, and they stop at their next step */
  children?: Pick<ChildStarter, 'stop'>;
};
type Detail = ExecutionStatusChange['detail'];

/** Who a stop's kill is by when nobody killed the run before it, and who closes its pending approvals (replay reproduces the stop from them). */
export const STOP_EXECUTION = 'StopExecution';

/**
 * `StopExecution` is a kill: the execution is gone without reaching Finalize, so the run record is
 * marked killed here — by StopExecution, when, and why — and is never resumed. It also hears the
 * ends of this agent's child runs' executions (`defineAgentTool`; the rule on each child agent's
 * state machine): a child whose run is over wakes the parent's wait (tools/child-runs.ts), a
 * stopped one killed first, so that the parent is not left waiting on a child nobody ends; and
 * settles the child's budget into the parent's record (what it spent replaces its reservation). It
 * loads no agent's code (the stack's one function serves every agent): the run is the one the
 * execution's input names, or StartRun noted (runs/status-change.ts `runOfExecution`).
 */
export function createExecutionStopped(deps: StoppedDeps) {
  return async (input: unknown): Promise<{ runId?: string; action: 'killed' | 'ignored' | 'woke' }> => {
    const { detail } = parseOrThrow(ExecutionStatusChange(), input, 'execution status change');
    const named = childRequestOf(detail.input);
    // The run: the one a child's request names, else the one the input names or StartRun noted.
    // Its record read once, here: every rule below decides from it (or from the kill's write).
    const runId = named?.runId ?? (await runOfExecution(deps.ledger, detail));
    const read = runId === undefined ? undefined : await deps.ledger.getRun(runId);
    const child = named ?? resumedChild(read, detail);
    if (!child && detail.status !== 'ABORTED') return { action: 'ignored' };
    const stop = detail.status === 'ABORTED' && read ? await kill(deps, read, detail) : undefined;
    const finished = stop?.killed ? stop.run : undefined;
    const run = stop?.run ?? read;
    if (detail.status === 'ABORTED' && run) await killTree(deps, run, detail);
    if (!child) return { runId, action: finished ? 'killed' : 'ignored' };
    const ours = run && run.parent?.runId === child.parent.runId ? run : undefined;
    // Its reservation settled now (a parent over already never reads the child again), then the wake.
    if (ours) await settleUp(deps.ledger, ours, deps.clock.now());
    const woke = deps.callbacks && ours ? await wakeParent({ ledger: deps.ledger, callbacks: deps.callbacks }, ours) : false;
    return { runId: child.runId, action: woke ? 'woke' : finished ? 'killed' : 'ignored' };
  };
}

/**
 * A child run resumed (by `savepoint resume`, or recovered) runs an execution whose input names no
 * parent: its record does, if this execution drives it. Its end is a child's end all the same
 * (settled, its parent woken).
 */
function resumedChild(run: RunRecord | undefined, detail: Detail): { runId: string; parent: ChildWait } | undefined {
  return run?.parent && run.executionArn === detail.executionArn ? { runId: run.runId, parent: run.parent } : undefined;
}

/**
 * A run killed by its execution's stop takes its child runs with it — whichever rule recorded its
 * kill first — where this function has the run's agent (it knows its agent tools).
 */
async function killTree(deps: StoppedDeps, run: RunRecord, detail: Detail): Promise<void> {
  const agent = deps.agentOf?.(run.agent);
  if (!agent || run.status !== 'killed' || run.executionArn !== detail.executionArn) return;
  await killChildren({ ledger: deps.ledger, ...(deps.children && { children: deps.children }), now: deps.clock.now() }, agent, run, run.killed ?? { by: STOP_EXECUTION, at: run.finishedAt ?? '', reason: '' });
}

/**
 * Marks `run` (as read) killed, when `detail`'s execution drives it and it is running: the run as
 * its end wrote it (its lease then given back); nothing when it was not this execution's to kill.
 * When another delivery of this stop ended it first (`killed: false`), the run as that one wrote it.
 *
 * A stop is delivered at least once, and an invocation that failed is invoked again: a delivery
 * may find this stop's end written (the same reason) by one that failed after it, or that runs
 * beside it. The rest of the kill — the lease back, the guard event, the approvals closed — is
 * then made sure of, each once however often it is asked for (fleet-leases.ts, protocol.ts).
 */
async function kill(deps: StoppedDeps, run: RunRecord, detail: Detail): Promise<{ run: RunRecord; killed: boolean } | undefined> {
  // Only the execution that drives the run can kill it (not an earlier one of a resume).
  if (run.executionArn !== detail.executionArn) return undefined;
  const at = new Date(detail.stopDate ?? deps.clock.now().getTime()).toISOString();
  const why = [detail.error, detail.cause].filter(Boolean).join(': ');
  // The first kill stands: a run stopped because someone killed it (its parent, a cancel) says who.
  const flag = run.killed ?? { by: STOP_EXECUTION, at, reason: why };
  const reason = `killed by ${flag.by} at ${at}${flag.reason ? `: ${flag.reason}` : ''}`;
  const endedByThisStop = (record: RunRecord) => record.status === 'killed' && record.stopReason === reason;
  if (run.status !== 'running' && !endedByThisStop(run)) return undefined;
  let ended = run;
  let killed = false;
  if (run.status === 'running') {
    await deps.ledger.killRun(run.runId, { by: STOP_EXECUTION, at, reason: why });
    // Ended only while the run is as read: a copy (or the other rule a child's stop reaches) that
    // read it running too writes nothing, and goes on from the run as the end wrote it.
    const finished = await deps.ledger.finishRun(run.runId, { status: 'killed', stopReason: reason }, deps.clock.now(), endExpected(run));
    killed = finished !== undefined;
    ended = finished ?? (await deps.ledger.getRun(run.runId)) ?? run;
    if (!endedByThisStop(ended)) return { run: ended, killed };
  }
  await returnFleetLease(deps.ledger, ended, deps.clock.now());
  await deps.ledger.recordGuardEvent(run.runId, { guard: 'kill', action: 'stopped', reason, at });
  // Its pending approvals wait for nothing now (their task tokens died with the execution): closed,
  // so that no one is asked to decide them and no list shows them as waiting.
  const now = deps.clock.now();
  for (const approval of await deps.ledger.listPendingApprovals()) {
    if (approval.runId !== run.runId) continue;
    await deps.ledger.decideApproval(approval, { status: 'expired', reason: `the run was ${reason}`, decidedBy: STOP_EXECUTION, decidedVia: 'timeout', waitedMs: now.getTime() - Date.parse(approval.createdAt) }, now);
  }
  return { run: ended, killed };
}
