import { executionChain } from '../guards/history.js';
import { openCalls, withCounted } from '../ledger/open-turn.js';
import { guaranteeCondition, guaranteeOf, type AgentDefinition, type Guarantee } from '../define.js';
import { childCalls, resultField } from './child-tree.js';
import { resolveResults } from '../ledger/blobs.js';
import type { BlobStore, Ledger } from '../ledger/ledger.js';
import { guardFigures, type GuardFigures } from '../guards/budgets.js';
import { pendingWaitMs } from '../approvals/waits.js';
import type { ApprovalRecord, GuardEvent, KillFlag, MigrationRecord, RecoveryRecord, RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';

/** What a run did, computed from its ledger records (never from what the model claims it did). */
export interface RunReport {
  /** The run's id. */
  runId: string;
  /** The agent's name. */
  agent: string;
  /** The run's input. */
  input: unknown;
  /** `running`, `succeeded`, `stopped` (a guard), `killed` or `failed`. */
  status: RunRecord['status'];
  /** The run's model (`provider:model-id`). */
  model: string;
  /** Model turns by the model that answered them: the run's model, and its fallback while the model was down. */
  turnsByModel: Record<string, number>;
  /** Why it stopped (the guard, the kill, the model's last words). */
  stopReason?: string;
  /** A failed run's error name and cause. */
  error?: { error: string; cause: string };
  /** Agent steps: model turns plus tool calls. */
  steps: number;
  /** Model calls made. */
  modelTurns: number;
  /** Tool calls made. */
  toolCalls: number;
  /** Tokens read and written by every model call (input counts cached input too). */
  tokens: { input: number; output: number; cachedInput: number; total: number };
  /** What the model calls cost, by the price table the run is bound to. */
  dollars: number;
  /** Per tool: how its calls ended, and how far its side effect is guaranteed to happen once. */
  tools: Record<string, ToolFigures>;
  /** The agent's own summary (`AgentDefinition.report`), when the agent is known. A dry fork's counts no write it did not send. */
  summary?: Readonly<Record<string, number | string>>;
  /**
   * A dry fork's counterfactual (lambdas/runs/fork.ts): the agent's summary with the writes it
   * would have made counted as made — beside `summary`, which counts only what was sent.
   */
  wouldHave?: Readonly<Record<string, number | string>>;
  /**
   * `approved` counts only decisions the harness applied: an approval recorded as approved whose
   * signature did not verify (its call refused with `approval_unverified`) is `unverified`.
   */
  approvals: { total: number; approved: number; rejected: number; expired: number; pending: number; unverified: number };
  /** Tool calls claimed and not yet recorded as done (a crash between sending and recording). */
  inFlight: number;
  /** Each guard's figures (used / limit), and every warning or stop, in order. */
  guards: GuardFigures;
  /** Every warning or stop a guard recorded, in order. */
  guardEvents: GuardEvent[];
  /** Who killed the run, when, and why, if it was killed. */
  killed?: KillFlag;
  /** Executions that drove the run: the first, plus one per resume or recovery. */
  executions: number;
  /** The executions in order, each with how it got the run: started it, a handoff (continue-as-new), a resume or recovery. */
  chain: ReturnType<typeof executionChain>;
  /** The run's automatic recoveries, if any (lambdas/steps/recover-run.ts). */
  recovery?: RecoveryRecord;
  /**
   * The child runs its agent tools started (`defineAgentTool`), in call order, when the agent is
   * known: each child's run id (derived from the call), agent and tool, and how it ended as the
   * call recorded it (`running` until then). @default absent: no child runs
   */
  children?: ChildRunFigure[];
  /** When the run first started (ISO 8601). */
  createdAt: string;
  /** When it finished, if it has (ISO 8601). */
  finishedAt?: string;
  /** Wall-clock seconds since it first started (to its end, when finished). */
  wallSeconds: number;
  /**
   * The code the run is bound to (its agent version and fingerprint), the model turns each
   * fingerprint recorded (a run that finished on its version shows one), and its migrations.
   */
  version: { agentVersion?: string; fingerprint: string; turnsByFingerprint: Record<string, number>; migrations: MigrationRecord[] };
}

/** How one tool's calls in a run ended. */
export interface ToolFigures {
  /** Calls the model asked for. */
  calls: number;
  /** Calls that answered a result. */
  ok: number;
  /** Calls that answered an error (told to the model). */
  error: number;
  /** Calls a person rejected. */
  rejected: number;
  /** Calls whose approval expired undecided. */
  expired: number;
  /** Calls claimed and not yet recorded as done. */
  inFlight: number;
  /** What the harness promises of this tool's side effect. */
  guarantee: Guarantee;
  /** The condition the guarantee holds under (define/tool.ts `guaranteeCondition`), when the agent's code is known. */
  condition?: string;
}

/**
 * The agent's report of a run (`AgentDefinition.report`) over the calls that reached the world,
 * their results read back whole: what a run records at its end (Finalize), and what `summary` says.
 * `calls`: the run's calls, when the caller has read them already (Finalize reads them with the run).
 */
export async function agentReport(agent: AgentDefinition, ledger: Pick<Ledger, 'listConversation'> & BlobStore, run: RunRecord, calls?: ToolCallRecord[]): Promise<RunRecord['report']> {
  if (!agent.report) return undefined;
  const recorded = calls ?? (await ledger.listConversation(run.runId)).calls;
  return agent.report(sentCalls(run, await resolveResults(ledger, recorded)));
}

/** The calls that reached the world as made: a dry fork's own writes were recorded as what they would have done, not sent. */
function sentCalls(run: RunRecord, calls: ToolCallRecord[]): ToolCallRecord[] {
  const lineage = run.forkedFrom;
  return lineage?.effects === 'dry' ? calls.filter((call) => !(call.effect === 'write' && call.turn >= lineage.turn)) : calls;
}

/** One child run of a run, as its report lists it. */
export interface ChildRunFigure {
  /** The child's run id (`childRunId` of the call; a fork's copied call names its parent's child). */
  runId: string;
  /** The child agent's name. */
  agent: string;
  /** The agent tool whose call started it. */
  tool: string;
  /** The parent's model turn that asked for the call. */
  turn: number;
  /** The call's place in that turn. */
  call: number;
  /**
   * How the child ended (`succeeded`, `failed`, `killed`, …): its own run record's status where the
   * report was read from the ledger (`loadReport`), else as the call recorded it; `running` until then.
   */
  status: string;
  /** The child's own child runs, read from the ledger (`loadReport`), to a depth of CHILD_TREE_DEPTH. @default absent: none */
  children?: ChildRunFigure[];
}

/** How many levels of child runs a report read from the ledger shows below the run. */
export const CHILD_TREE_DEPTH = 4;

/** The child runs of `run`'s agent-tool calls (`defineAgentTool`), from its turns; each one's end from its call's record. */
function childRuns(agent: AgentDefinition | undefined, run: RunRecord, turns: TurnRecord[], calls: ToolCallRecord[]): ChildRunFigure[] {
  return childCalls(agent, run, turns, calls).map((child) => ({
    runId: child.runId,
    agent: child.agent.name,
    tool: child.tool,
    turn: child.turn,
    call: child.call,
    status: child.recorded ? (resultField(child.recorded, 'status') ?? child.recorded.outcome ?? 'ok') : 'running',
  }));
}

/**
 * The tree below a run, from the ledger: each child's status from its own run record (a killed
 * child says so before its parent's call records it), and its own children, to `depth` levels.
 */
async function childTree(ledger: Pick<Ledger, 'getRun' | 'listConversation'>, agent: AgentDefinition | undefined, figures: ChildRunFigure[], depth: number): Promise<ChildRunFigure[]> {
  if (!agent) return figures;
  return Promise.all(
    figures.map(async (figure) => {
      const child = await ledger.getRun(figure.runId);
      if (!child) return figure;
      const childAgent = agent.tools.find((tool) => tool.name === figure.tool)?.child?.agent as AgentDefinition | undefined;
      let below: ChildRunFigure[] = [];
      if (depth > 1 && childAgent?.tools.some((tool) => tool.child)) {
        const { turns, calls } = await ledger.listConversation(child.runId);
        below = await childTree(ledger, childAgent, childRuns(childAgent, child, turns, calls), depth - 1);
      }
      return { ...figure, status: child.status, ...(below.length > 0 && { children: below }) };
    }),
  );
}

export function buildReport(
  agent: AgentDefinition | undefined,
  { run: stored, calls, approvals, turns = [] }: { run: RunRecord; calls: ToolCallRecord[]; approvals: ApprovalRecord[]; turns?: TurnRecord[] },
  now: Date,
): RunReport {
  // The open turn's calls count no step on the run item until the next model turn (ledger/open-turn.ts): counted here, from the calls read.
  const run = withCounted(stored, openCalls(stored, calls));
  // The call's record says whether the harness applied an approval's decision (call-tool.ts).
  const refused = new Set(calls.filter((call) => call.outcome === 'rejected' && /"error":"approval_unverified"/.test(call.result ?? '')).map((call) => `${call.turn}:${call.call}`));
  const unverified = approvals.filter((approval) => approval.status === 'approved' && !approval.budget && refused.has(`${approval.turn}:${approval.call}`)).length;
  const approvalCount = (status: ApprovalRecord['status']) => approvals.filter((approval) => approval.status === status).length;
  const end = run.finishedAt ? new Date(run.finishedAt) : now;
  const children = childRuns(agent, run, turns, calls);
  return {
    runId: run.runId,
    agent: run.agent,
    input: run.input,
    status: run.status,
    model: run.model,
    turnsByModel: turnsByModel(turns),
    ...(run.stopReason ? { stopReason: run.stopReason } : {}),
    ...(run.error ? { error: run.error } : {}),
    steps: run.steps,
    modelTurns: run.modelTurns,
    toolCalls: run.toolCalls,
    tokens: {
      input: run.inputTokens,
      output: run.outputTokens,
      cachedInput: run.cachedInputTokens,
      total: run.inputTokens + run.outputTokens,
    },
    dollars: run.costMicros / 1_000_000,
    tools: toolFigures(agent, calls),
    ...(agent?.report && { summary: agent.report(sentCalls(run, calls)) }),
    ...(agent?.report && run.forkedFrom?.effects === 'dry' && { wouldHave: agent.report(calls) }),
    approvals: {
      total: approvals.length,
      approved: approvalCount('approved') - unverified,
      unverified,
      rejected: approvalCount('rejected'),
      expired: approvalCount('expired'),
      pending: approvalCount('pending'),
    },
    inFlight: calls.filter((call) => call.status === 'in_flight').length,
    // A run waiting for a person now: that wait so far is waiting, not the run's own time.
    guards: guardFigures(run, end, run.finishedAt ? 0 : pendingWaitMs(approvals, end)),
    guardEvents: run.guardEvents ?? [],
    ...(run.killed ? { killed: run.killed } : {}),
    executions: run.executions.length,
    chain: executionChain(run),
    ...(run.recovery ? { recovery: run.recovery } : {}),
    ...(children.length > 0 && { children }),
    createdAt: run.createdAt,
    ...(run.finishedAt ? { finishedAt: run.finishedAt } : {}),
    wallSeconds: Math.max(0, (end.getTime() - new Date(run.createdAt).getTime()) / 1000),
    version: {
      ...(run.agentVersion !== undefined && { agentVersion: run.agentVersion }),
      fingerprint: run.fingerprint,
      turnsByFingerprint: turnsByFingerprint(turns),
      migrations: run.migrations ?? [],
    },
  };
}

/** Model turns by the fingerprint of the code that recorded them (turns recorded before fingerprints were: none). */
function turnsByFingerprint(turns: TurnRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const turn of turns) if (turn.fingerprint) counts[turn.fingerprint] = (counts[turn.fingerprint] ?? 0) + 1;
  return counts;
}

function turnsByModel(turns: TurnRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const turn of turns) counts[turn.model] = (counts[turn.model] ?? 0) + 1;
  return counts;
}

function toolFigures(agent: AgentDefinition | undefined, calls: ToolCallRecord[]): Record<string, ToolFigures> {
  const figures: Record<string, ToolFigures> = {};
  const empty = (guarantee: Guarantee, condition?: string): ToolFigures => ({ calls: 0, ok: 0, error: 0, rejected: 0, expired: 0, inFlight: 0, guarantee, ...(condition && { condition }) });
  for (const tool of agent?.tools ?? []) figures[tool.name] = empty(guaranteeOf(tool), guaranteeCondition(tool));
  for (const call of calls) {
    // Without the agent's code: the guarantee the call recorded (calls recorded before it was: the weakest).
    const tool = (figures[call.name] ??= empty(call.guarantee ?? (call.effect === 'read' ? 'read' : 'at-least-once')));
    tool.calls += 1;
    if (call.status === 'in_flight') tool.inFlight += 1;
    else if (call.outcome) tool[call.outcome] += 1;
  }
  return figures;
}

export async function loadReport(ledger: Ledger, runId: string, now: Date, agent?: AgentDefinition): Promise<RunReport | undefined> {
  const run = await ledger.getRun(runId);
  if (!run) return undefined;
  const { turns, calls, approvals } = await ledger.listConversation(runId);
  const known = agent?.name === run.agent ? agent : undefined;
  // The agent's own summary reads results: those stored by reference are read back for it.
  const report = buildReport(known, { run, calls: known?.report ? await resolveResults(ledger, calls) : calls, approvals, turns }, now);
  // The tree below it, each child as its own record says.
  return report.children ? { ...report, children: await childTree(ledger, known, report.children, CHILD_TREE_DEPTH) } : report;
}
