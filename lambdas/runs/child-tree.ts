import { childRunId, type AgentDefinition } from '../define.js';
import { toolUses } from '../conversation/turns.js';
import type { GuardLedger, RunLedger, TurnLedger } from '../ledger/ledger.js';
import type { KillFlag, RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
import { childKillFlag, type ChildStarter } from '../tools/child-runs.js';

/**
 * A run's child runs (`defineAgentTool`) as a tree: which runs its agent-tool calls started, and
 * killing them with it. One place derives a run's children from its records; the report, `status`,
 * the console and the kill read it.
 */

/** One agent-tool call of a run and the child run that answers it. */
export interface ChildCall {
  /** The child run's id: from the call's recorded result when it has one (a fork's copied call names its parent's child), else derived from the call. */
  readonly runId: string;
  /** The child agent's definition (its own agent tools are the grandchildren's). */
  readonly agent: AgentDefinition;
  readonly tool: string;
  readonly turn: number;
  readonly call: number;
  /** The call's record, once the child's result is recorded. */
  readonly recorded?: ToolCallRecord;
}

/**
 * The child runs of `run`'s agent-tool calls, in call order. A completed call's result names the
 * child that answered it (tools/child-runs.ts `childResult`): a fork copies its parent's calls
 * before the fork point with their results, so those children are the parent's — reused, never
 * started again — and only a call the fork made itself derives a child id from the fork's run id.
 */
export function childCalls(agent: AgentDefinition | undefined, run: Pick<RunRecord, 'runId'>, turns: readonly TurnRecord[], calls: readonly ToolCallRecord[]): ChildCall[] {
  if (!agent?.tools.some((tool) => tool.child)) return [];
  return turns.flatMap((turn) =>
    toolUses(turn).flatMap((use, index) => {
      const child = agent.tools.find((tool) => tool.name === use.name)?.child;
      if (!child) return [];
      const recorded = calls.find((record) => record.turn === turn.turn && record.call === index + 1 && record.status === 'completed');
      const named = recorded && resultField(recorded, 'childRunId');
      return [{ runId: named ?? childRunId(run.runId, turn.turn, use.id), agent: child.agent as AgentDefinition, tool: use.name, turn: turn.turn, call: index + 1, ...(recorded && { recorded }) }];
    }),
  );
}

/** A string field of a call's recorded JSON result, if it has one. */
export function resultField(call: Pick<ToolCallRecord, 'result'>, field: string): string | undefined {
  try {
    const value = (JSON.parse(call.result ?? '{}') as Record<string, unknown>)[field];
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

export interface KillChildrenDeps {
  ledger: Pick<RunLedger, 'getRun'> & Pick<GuardLedger, 'killRun'> & Pick<TurnLedger, 'listConversation'>;
  /** Stops the children's executions (StopExecution); absent where nothing runs them (no engine): the kill is recorded only. */
  children?: Pick<ChildStarter, 'stop'>;
  now: Date;
}

/**
 * Killing a parent kills its children: each running child of `run` is recorded killed — by the
 * parent run, saying who killed the parent and why (the first kill stands) — and so, in the
 * ledger, is each of its own running children, to the leaves; then the children's executions are
 * stopped (StopExecution: a child waiting on a person or on its own child stops now, not at its
 * next step). Only `run`'s direct children are stopped here, by this agent's role (DurableAgent's
 * `children`); each child's ExecutionStopped, hearing its execution aborted, stops its own the
 * same way (steps/execution-stopped.ts), so every role stops only the agents it runs.
 * Returns the children it killed.
 */
export async function killChildren(deps: KillChildrenDeps, agent: AgentDefinition | undefined, run: RunRecord, flag: KillFlag): Promise<RunRecord[]> {
  const killed = await recordKills(deps, agent, run, flag);
  if (deps.children) {
    for (const child of killed) {
      if (child.executionArn) await deps.children.stop(child.agent, child.executionArn, `Savepoint.ParentKilled: ${child.killed!.reason}`.slice(0, 256));
    }
  }
  return killed;
}

/** Records the kill of `run`'s running children, and theirs (top down); returns the direct children, each with the flag that stands. */
async function recordKills(deps: KillChildrenDeps, agent: AgentDefinition | undefined, run: RunRecord, flag: KillFlag): Promise<RunRecord[]> {
  if (!agent?.tools.some((tool) => tool.child)) return [];
  const { turns, calls } = await deps.ledger.listConversation(run.runId);
  const killed: RunRecord[] = [];
  for (const call of childCalls(agent, run, turns, calls)) {
    const child = await deps.ledger.getRun(call.runId);
    // Only this run's own children: a fork's copied calls name its parent's, which are not its to kill (and have ended).
    if (!child || child.status !== 'running' || child.parent?.runId !== run.runId) continue;
    const own = childKillFlag(run.runId, flag, deps.now);
    await deps.ledger.killRun(child.runId, own);
    const standing = { ...child, killed: child.killed ?? own };
    await recordKills(deps, call.agent, standing, standing.killed);
    killed.push(standing);
  }
  return killed;
}
