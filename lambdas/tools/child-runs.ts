import { childRunId, type ChildBudget, type ChildRunSpec } from '../define.js';
import type { ChildWaitLedger, GuardLedger, RunLedger } from '../ledger/ledger.js';
import type { ChildWait, KillFlag, RunRecord } from '../records/ledger-records.js';
import { ChildRunPendingError, InvalidInputError } from '../shared/errors.js';
import type { Clock, TaskCallbacks } from '../shared/ports.js';
import { childStepKeys, reservedBudget, spendIsFinal } from '../records/child-budget.js';
import type { Outcome } from './failures.js';

/**
 * A call of an agent tool (`defineAgentTool`): a child run of another agent, started once and
 * waited for without polling. Its life, across CallTool's invocations:
 *
 *   CallTool ── child unfinished ──► Agent.ChildRunPending ──► AwaitChildRun (CallTool's function, with a task token):
 *      ▲                                                         reserve the child's budget (once per call: countStep)
 *      │                                                         store the token (WAIT#<parent>, replacing an older one)
 *      │                                                         StartExecution(name = child run id) — a second start of
 *      │                                                           the id is the same child (the run id is its claim)
 *      │                                                         finished already? wake the token now
 *      └── the child's execution ends: ExecutionStopped reads the token and wakes the wait ◄──┘
 *   CallTool ── child finished ──► settle its budget (once: what it did not spend returns) ─► record its result
 *
 * The child run's id derives from the call (`childRunId`), so every attempt, resume and engine of
 * the parent meets the same child; the result is read from the child's own run record, never from
 * what woke the wait.
 *
 * The settle is one count (records/child-budget.ts), made once the child's spend is final — its run
 * over, and each child of its own settled into it (`childRunsOpen`, which the reservation raises
 * and the settle lowers) — and the child's record closed (not resumed after), by whichever of these
 * comes first; the others find the reservation settled and change nothing (counted-steps.ts
 * `mayCount`: the reservation stays open however many steps the parent counts meanwhile, and the
 * settle closes it), a retry of any included:
 *
 *   the parent's CallTool reads the child ended ─► settle, record the result        (childOutcome)
 *   the parent stops at that call (a kill, a budget) with the child ended ─► settle  (settleStopping)
 *   the child's execution ends (ExecutionStopped) ─► settle, however the parent is   (settleUp)
 *   a grandchild's settle makes the child's spend final ─► settle the child, and up the tree
 *
 * So a parent killed or stopped while its child runs — which never reads the child's end — carries
 * what the child spent once it ended, not the child's reservation; so does its own parent. */

/** The executions of a deployment's child agents, as one agent's role reaches them. */
export interface ChildStarter {
  /** Starts a child agent's execution (its state machine's alias on AWS): an existing execution of the name is no error. */
  start(agent: string, name: string, input: string): Promise<void>;
  /** Stops a child agent's execution (StopExecution, `Savepoint.ParentKilled`): its parent was killed. An ended one is left alone. */
  stop(agent: string, executionArn: string, cause: string): Promise<void>;
}

export interface ChildCallDeps {
  ledger: Pick<RunLedger, 'getRun'> & GuardLedger & ChildWaitLedger;
  /** Absent where the deployment declares no child agents: a call is answered to the model as an error. */
  children?: Pick<ChildStarter, 'start'>;
  callbacks?: TaskCallbacks;
  clock: Clock;
}

export interface ChildCall {
  run: RunRecord;
  turn: number;
  call: number;
  toolCallId: string;
  child: ChildRunSpec;
  args: unknown;
}

const MICROS = 1_000_000;

/**
 * CallTool's answer for an agent tool's call: the child's result once it finished (its budget
 * settled first, so a crash between the two settles nothing twice), an error result when its budget
 * does not fit what the parent has left, else `Agent.ChildRunPending` (the state machine waits).
 */
export async function childOutcome(deps: ChildCallDeps, call: ChildCall): Promise<Outcome> {
  const { run, child } = call;
  const wait = { runId: run.runId, turn: call.turn, call: call.call };
  const childId = childRunId(run.runId, call.turn, call.toolCallId);
  const found = await deps.ledger.getRun(childId);
  if (found && found.status !== 'running') {
    // The reservation, then what replaces it, each counted once per call. A stored wait means
    // AwaitChildRun reserved it (before storing the wait): not again, however long ago — it may be
    // settled already, its key closed. A replay (which starts no child, and stores no wait) counts
    // both as the run did.
    if (!(await deps.ledger.getChildWait(wait))) await reserve(deps.ledger, wait, child.budget);
    // Settled here when its spend is final; else (its own children still ending) by settleUp, later.
    if (spendIsFinal(found)) await settle(deps.ledger, wait, found, deps.clock.now());
    return { outcome: found.status === 'succeeded' ? 'ok' : 'error', result: JSON.stringify(childResult(found)), latencyMs: 0 };
  }
  if (!deps.children) {
    return { outcome: 'error', result: JSON.stringify({ error: 'child_agent_not_deployed', message: `agent ${child.agent.name} is not deployed beside this one (DurableAgentProps.children)` }), latencyMs: 0 };
  }
  // Not started by any execution of this call yet (no wait stored): its budget must fit what the parent has left.
  if (!found && !(await deps.ledger.getChildWait(wait))) {
    const short = shortfall(run, child.budget);
    if (short) return { outcome: 'error', result: JSON.stringify({ error: 'child_budget_exceeds_remaining', message: short }), latencyMs: 0 };
  }
  throw new ChildRunPendingError(`tool call ${call.turn}/${call.call} of run ${run.runId} waits for its child run ${childId}`);
}

/** AwaitChildRun: reserves the child's budget, stores the wait's token, starts the child (once), and wakes the wait at once if the child is done. */
export async function startChild(deps: ChildCallDeps, call: ChildCall, taskToken: string): Promise<{ childRunId: string }> {
  const { run, child } = call;
  if (!deps.children || !deps.callbacks) throw new InvalidInputError(`call: agent ${child.agent.name} is not deployed beside this one`);
  const wait = { runId: run.runId, turn: call.turn, call: call.call };
  const childId = childRunId(run.runId, call.turn, call.toolCallId);
  // In this order: a stored wait means the budget is reserved (childOutcome reads it so), and a
  // child that ends after the token is stored finds it; one that ended before is found below.
  await reserve(deps.ledger, wait, child.budget);
  await deps.ledger.storeChildWait(wait, taskToken);
  const request = { runId: childId, input: child.input(call.args), config: { maxDollars: child.budget.maxDollars, maxTokens: child.budget.maxTokens }, parent: wait };
  await deps.children.start(child.agent.name, childId, JSON.stringify(request));
  const now = await deps.ledger.getRun(childId);
  if (now && now.status !== 'running') await deps.callbacks.succeed(taskToken, { childRunId: childId, status: now.status });
  return { childRunId: childId };
}

/**
 * A child run's execution ended (ExecutionStopped, on its status change): wakes the parent's wait
 * with the token stored for it, once the child's run is over (a failed execution being recovered
 * is not). Nothing to wake: the parent is not waiting, and reads the child when it next runs.
 */
export async function wakeParent(deps: { ledger: ChildWaitLedger; callbacks: TaskCallbacks }, childRun: RunRecord): Promise<boolean> {
  if (!childRun.parent || childRun.status === 'running') return false;
  const token = await deps.ledger.getChildWait(childRun.parent);
  if (!token) return false;
  return deps.callbacks.succeed(token, { childRunId: childRun.runId, status: childRun.status });
}

/**
 * A call of an agent tool that its stopping run skips (CallTool, its run killed or out of budget):
 * a child that ended is settled all the same — the run records no result of it, so nothing else
 * of the run would — and one still running is settled when it ends (`settleUp`).
 */
export async function settleStopping(ledger: Pick<RunLedger, 'getRun'> & GuardLedger, run: Pick<RunRecord, 'runId'>, at: { turn: number; call: number; toolCallId: string }, now: Date): Promise<void> {
  const child = await ledger.getRun(childRunId(run.runId, at.turn, at.toolCallId));
  // Only this run's own child: a fork's copied call names its parent's (which settled it).
  if (child?.parent?.runId === run.runId && spendIsFinal(child)) await settle(ledger, child.parent, child, now);
}

/**
 * A child run's execution ended (ExecutionStopped, on its status change): once its spend is final,
 * its reservation is settled into its parent's record — whether the parent still waits for it
 * (its CallTool then finds it counted), stopped at the call, or is over already (killed, stopped,
 * given up: it never reads the child again) — and, where that settle makes the parent's own spend
 * final, the parent into its parent, up the tree. Each settle is counted once by its key, so a
 * second delivery, a retry after a crash between two levels, or a parent's CallTool racing it
 * changes nothing twice.
 */
export async function settleUp(ledger: Pick<RunLedger, 'getRun'> & GuardLedger, childRun: RunRecord, now: Date): Promise<void> {
  const seen = new Set<string>();
  for (let run: RunRecord | undefined = childRun; run?.parent && spendIsFinal(run) && !seen.has(run.runId); run = await ledger.getRun(run.parent.runId)) {
    seen.add(run.runId);
    await settle(ledger, run.parent, run, now);
  }
}

/**
 * Killing a parent kills its children: a running child run whose parent is killed (its flag, or
 * its record ended killed) is killed itself, the flag naming the parent, and stops at this check
 * like any killed run; its end wakes nothing (the parent is not waiting any more). Returns the
 * child as killed, or nothing when it goes on. One read of the parent per check, for child runs only.
 */
export async function parentKill(ledger: Pick<RunLedger, 'getRun'> & Pick<GuardLedger, 'killRun'>, run: RunRecord, now: Date): Promise<RunRecord | undefined> {
  if (!run.parent || run.status !== 'running' || run.killed) return undefined;
  const parent = await ledger.getRun(run.parent.runId);
  if (!parent || !(parent.killed || parent.status === 'killed')) return undefined;
  const flag = childKillFlag(parent.runId, parent.killed ?? { by: 'its guards', at: now.toISOString(), reason: parent.stopReason ?? '' }, now);
  await ledger.killRun(run.runId, flag);
  return { ...run, killed: flag };
}

/**
 * The kill recorded on a child run killed with its parent: by the parent run, saying who killed
 * the parent and why (so that a child's record answers "who asked" without reading its parent's);
 * a grandchild's reason carries its parent's, down to who asked.
 */
export function childKillFlag(parentRunId: string, parentFlag: KillFlag, now: Date): KillFlag {
  const asked = parentFlag.by.startsWith('parent run ') ? '' : ` by ${parentFlag.by}`;
  return { by: `parent run ${parentRunId}`, at: now.toISOString(), reason: `its parent run ${parentRunId} was killed${asked}${parentFlag.reason ? `: ${parentFlag.reason}` : ''}`.slice(0, 500) };
}

/** What the parent's model is told of a finished child: its id, how it ended, and its agent's report. */
function childResult(child: RunRecord): Record<string, unknown> {
  return {
    childRunId: child.runId,
    status: child.status,
    ...(child.stopReason && { stopReason: child.stopReason }),
    ...(child.report && { report: child.report }),
    dollars: child.costMicros / MICROS,
  };
}

/**
 * The child's budget, reserved from the parent's (once per call): one more child open in the
 * parent's spend, its dollars also counted as the children's part (`childCostMicros`), which the
 * parent's fleet lease leaves out: the child run leases what it spends itself.
 */
async function reserve(ledger: GuardLedger, wait: ChildWait, budget: ChildBudget): Promise<void> {
  const micros = Math.round(budget.maxDollars * MICROS);
  await ledger.countStep(wait.runId, childStepKeys(wait).reserve, { costMicros: micros, childCostMicros: micros, inputTokens: budget.maxTokens, childRunsOpen: 1 });
}

/**
 * What the child spent replaces what was reserved for it (once per call): the budget it was started
 * with, as its own record holds it (the limits before any extension a person granted it), so that
 * every path that settles it — with the agent's code or without — counts the same. The child is
 * closed first (`closeChildRun`, on its own record): a resume of it after that is refused, so what
 * is settled is all it ever spends; one that came first leaves it running, settled at its next end.
 */
async function settle(ledger: GuardLedger, wait: ChildWait, child: RunRecord, now: Date): Promise<boolean> {
  const closed = child.settledIntoParentAt !== undefined ? child : await ledger.closeChildRun(child.runId, now);
  if (!closed) return false;
  const reserved = reservedBudget(closed);
  const micros = closed.costMicros - Math.round(reserved.maxDollars * MICROS);
  return ledger.countStep(wait.runId, childStepKeys(wait).settle, {
    costMicros: micros,
    childCostMicros: micros,
    inputTokens: closed.inputTokens - reserved.maxTokens,
    outputTokens: closed.outputTokens,
    childRunsOpen: -1,
  });
}

/** Why `budget` does not fit what `run` has left (reservations in flight counted), or nothing. */
export function shortfall(run: Pick<RunRecord, 'config' | 'costMicros' | 'inputTokens' | 'outputTokens' | 'reservedMicros' | 'reservedTokens'>, budget: ChildBudget): string | undefined {
  const dollarsLeft = (run.config.maxDollars * MICROS - run.costMicros - (run.reservedMicros ?? 0)) / MICROS;
  const tokensLeft = run.config.maxTokens - run.inputTokens - run.outputTokens - (run.reservedTokens ?? 0);
  if (dollarsLeft < budget.maxDollars) return `the child's budget of $${budget.maxDollars} is more than this run has left ($${Math.max(0, dollarsLeft).toFixed(4)})`;
  if (tokensLeft < budget.maxTokens) return `the child's budget of ${budget.maxTokens} tokens is more than this run has left (${Math.max(0, tokensLeft)})`;
  return undefined;
}
