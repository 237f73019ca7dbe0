import { inputTokensOf } from '../lambdas/records/messages.js';
import { lifecycleOf, type Lifecycle } from '../client/index.js';
import { resolveResults } from '../lambdas/ledger/blobs.js';
import { InvalidInputError } from '../lambdas/shared/errors.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { ApprovalRecord, RunRecord, ToolCallRecord, TurnRecord } from '../lambdas/records/ledger-records.js';
import { COUNTED_GUARDS, spentOf } from '../lambdas/records/guards.js';
import { executionChain, handoffThreshold } from '../lambdas/guards/history.js';
import { executionName, type HistoryAsk, type HistoryLine, type HistorySource } from './history.js';

/**
 * What the console shows, computed from the ledger (what a run did) and the execution history
 * (how the engine drove it): never from what the model claims.
 */

export interface RunRow {
  runId: string;
  agent: string;
  status: RunRecord['status'];
  lifecycle: Lifecycle;
  day: string;
  createdAt: string;
  finishedAt?: string;
  steps: number;
  dollars: number;
  durationSeconds: number;
  pendingApprovals: number;
  /** How many executions drove the run so far (handoffs, recoveries, resumes): the status is the run's, whichever of them drives it. */
  executions: number;
  /** The execution that drives the run now (or drove it last). */
  execution: string;
  killed: boolean;
}

/** A run whose record fails verification: named, never shown as if it could be trusted (`savepoint verify <runId>`). */
export interface DamagedRun {
  runId: string;
  error: string;
}

/** The most runs the list holds: the newest that match its filter. */
export const MAX_RUN_ROWS = 1000;

/**
 * The run list (the newest MAX_RUN_ROWS runs that match the filter; `more` when others match too),
 * and the runs left out of it because their records fail verification.
 */
export async function runRows(ledger: Ledger, filter: { agent?: string; status?: string; day?: string }, now: Date): Promise<{ runs: RunRow[]; damaged: DamagedRun[]; more?: true }> {
  const damaged: DamagedRun[] = [];
  // A filter looks at every run: applied to the newest 1,000 only, it missed every older run that
  // matched it (a state directory with many runs showed no failed run of last week).
  const limit = filter.agent || filter.status || filter.day ? Number.MAX_SAFE_INTEGER : MAX_RUN_ROWS + 1;
  const [runs, pending] = await Promise.all([ledger.listRuns(limit, { onDamaged: (runId, error) => damaged.push({ runId, error: error.message }) }), ledger.listPendingApprovals()]);
  const rows = runs
    .map((run) => {
      const waiting = pending.filter((approval) => approval.runId === run.runId).length;
      const end = run.finishedAt ? Date.parse(run.finishedAt) : now.getTime();
      return {
        runId: run.runId,
        agent: run.agent,
        status: run.status,
        lifecycle: lifecycleOf(run.status, waiting, run.error),
        day: run.createdAt.slice(0, 10),
        createdAt: run.createdAt,
        ...(run.finishedAt && { finishedAt: run.finishedAt }),
        steps: run.steps,
        dollars: run.costMicros / 1_000_000,
        durationSeconds: Math.max(0, Math.round((end - Date.parse(run.createdAt)) / 100) / 10),
        pendingApprovals: waiting,
        executions: run.executions.length,
        execution: executionName(run.executionArn),
        killed: Boolean(run.killed),
      } satisfies RunRow;
    })
    .filter((row) => (!filter.agent || row.agent === filter.agent) && (!filter.status || row.status === filter.status || row.lifecycle === filter.status) && (!filter.day || row.day === filter.day))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return { runs: rows.slice(0, MAX_RUN_ROWS), damaged, ...(rows.length > MAX_RUN_ROWS && { more: true as const }) };
}

/** Running totals after a step, against the run's budgets. */
export type Cumulative = {
  steps: number;
  tokens: number;
  dollars: number;
};

export type TimelineItem =
  | {
      kind: 'turn';
      step: number;
      turn: number;
      at: string;
      model: string;
      text: string[];
      toolUses: { id: string; name: string; input: unknown }[];
      stopReason: string;
      tokens: { input: number; output: number; cachedInput: number };
      dollars: number;
      latencyMs: number;
      cumulative: Cumulative;
    }
  | {
      kind: 'call';
      step: number;
      turn: number;
      call: number;
      at?: string;
      name: string;
      effect: 'read' | 'write';
      args: Record<string, unknown>;
      idempotencyKey: string;
      status: ToolCallRecord['status'];
      outcome?: ToolCallRecord['outcome'];
      result?: unknown;
      attempts: number;
      latencyMs?: number;
      approval?: Pick<ApprovalRecord, 'approvalId' | 'status' | 'summary' | 'decideBy' | 'decidedBy' | 'reason' | 'decidedAt'>;
      cumulative: Cumulative;
    }
  | { kind: 'retry'; at: string; execution: string; state: string; error: string }
  | { kind: 'guard'; at: string; guard: string; action: string; reason: string }
  | { kind: 'execution'; at?: string; execution: string; executionArn: string; status?: string; index: number; via: ExecutionLink['via']; reason: string; link?: string }
  | { kind: 'recovery'; at: string; attempts: number; reason: string; execution: string }
  | { kind: 'budget-approval'; at: string; approvalId: string; status: string; summary: string }
  | { kind: 'kill'; at: string; by: string; reason: string };

export interface Timeline {
  runId: string;
  page: number;
  pages: number;
  pageSize: number;
  totalSteps: number;
  budgets: { steps: number; tokens: number; dollars: number };
  items: TimelineItem[];
}

const parseResult = (result: string | undefined): unknown => {
  if (result === undefined) return undefined;
  try {
    return JSON.parse(result);
  } catch {
    return result;
  }
};

/**
 * One execution of a run's chain: how it got the run (its first start, a continue-as-new handoff,
 * an automatic recovery, a resume), why, and what became of it — a handed-off execution ends
 * SUCCEEDED while the run goes on in its successor.
 */
export interface ExecutionLink {
  executionArn: string;
  name: string;
  index: number;
  via: 'start' | 'handoff' | 'recovery' | 'resume' | 'migrate';
  reason: string;
  /** The execution's own status (`RUNNING`, `SUCCEEDED`, …), where the history knows it. */
  status?: string;
  /** What it is for the run: `driving`, `handed off`, `superseded` (a recovery or resume took over), or the run's end status. */
  role: 'driving' | 'handed off' | 'superseded' | RunRecord['status'];
  startedAt?: string;
  /** Where to watch it (the AWS console, on a deployed stack). */
  link?: string;
}

const RECOVERY_NAME = /-recovery-(\d+)$/;

/** Why an execution took the run over by `savepoint migrate`: who moved it, from which version to which. */
function migrationReason(run: RunRecord, executionArn: string): string {
  const migration = run.migrations?.find((m) => m.to.executionArn === executionArn);
  const version = (side: { version?: string; fingerprint: string }) => (side.version ? `version ${side.version}` : side.fingerprint.slice(0, 12));
  return migration ? `migrated by ${migration.by}: ${version(migration.from)} → ${version(migration.to)}` : 'migrated to a new version';
}

/** How the run's executions are asked for: what a source that keeps them needs to know of the run (HistoryAsk). */
export const historyAsk = (run: Pick<RunRecord, 'status'>): HistoryAsk => ({ runEnded: run.status !== 'running' });

/** The executions that drove the run, in order. */
export async function executionLinks(run: RunRecord, history: HistorySource, link?: (executionArn: string) => string): Promise<ExecutionLink[]> {
  const chain = executionChain(run);
  const ask = historyAsk(run);
  return Promise.all(
    chain.map(async ({ executionArn, name, via }, index): Promise<ExecutionLink> => {
      const [lines, status] = await Promise.all([history.linesOf(executionArn, ask), history.statusOf?.(executionArn, ask)]);
      const recovery = via === 'resume' ? RECOVERY_NAME.exec(name) : null;
      const kind: ExecutionLink['via'] = recovery ? 'recovery' : via;
      const reason =
        kind === 'start'
          ? `started${run.startedBy ? ` by ${run.startedBy}` : ''}`
          : kind === 'handoff'
            ? `continue-as-new: ${chain[index - 1]!.name} reached the history threshold (${handoffThreshold(run).toLocaleString('en-US')} events)`
            : kind === 'recovery'
              ? `automatic recovery ${recovery![1]}${run.recovery?.executionName === name ? `: ${run.recovery.reason}` : ''}`
              : kind === 'migrate'
                ? migrationReason(run, executionArn)
                : 'resumed (savepoint resume or the console)';
      const last = index === chain.length - 1;
      const role: ExecutionLink['role'] =
        chain[index + 1]?.via === 'handoff' ? 'handed off' : !last ? 'superseded' : run.status === 'running' ? 'driving' : run.status;
      return {
        executionArn,
        name,
        index,
        via: kind,
        reason,
        ...(status && { status }),
        role,
        ...(lines[0] && { startedAt: lines[0].at }),
        ...(link && { link: link(executionArn) }),
      };
    }),
  );
}

/** The run's turns and tool calls in order, with the events around them, one page of steps at a time. */
export async function timeline(ledger: Ledger, history: HistorySource, run: RunRecord, options: { page: number; pageSize: number }, link?: (executionArn: string) => string): Promise<Timeline> {
  const { turns, calls: stored, approvals } = await ledger.listConversation(run.runId);
  const calls = await resolveResults(ledger, stored);
  const steps = stepItems(turns, calls, approvals);
  const events = await eventItems(run, history, approvals, link);
  const merged = mergeByTime(steps, events);
  const pages = Math.max(1, Math.ceil(steps.length / options.pageSize));
  // A page past the last is a request for what is not there, not the last page (nor page 1).
  if (options.page > pages) throw new InvalidInputError(`page: ${options.page} is past the last page (${pages}, of ${options.pageSize} steps each)`);
  const { page } = options;
  // A page holds its steps and the events before each of them (events after the run's last step go on the last page).
  let seen = 0;
  const pageOf = (step: number) => Math.min(pages, Math.max(1, Math.ceil(step / options.pageSize)));
  const items = merged.filter((item) => {
    if (item.kind === 'turn' || item.kind === 'call') {
      seen = item.step;
      return pageOf(item.step) === page;
    }
    return pageOf(seen + 1) === page;
  });
  return {
    runId: run.runId,
    page,
    pages,
    pageSize: options.pageSize,
    totalSteps: steps.length,
    budgets: Object.fromEntries(COUNTED_GUARDS.map((row) => [row.guard, run.config[row.field]])) as Timeline['budgets'],
    items,
  };
}

function stepItems(turns: TurnRecord[], calls: ToolCallRecord[], approvals: ApprovalRecord[]): TimelineItem[] {
  const callsOf = new Map<number, ToolCallRecord[]>();
  for (const call of calls) callsOf.set(call.turn, [...(callsOf.get(call.turn) ?? []), call]);
  const approvalOf = new Map(approvals.filter((approval) => !approval.budget).map((approval) => [`${approval.turn}/${approval.call}`, approval]));
  const items: TimelineItem[] = [];
  // Counted as the ledger counts (dollars in micro-dollars), shown per counted budget (records/guards.ts).
  const spent = { steps: 0, tokens: 0, micros: 0 };
  const cumulative = (): Cumulative => Object.fromEntries(COUNTED_GUARDS.map((row) => [row.guard, spentOf(row, spent)])) as Cumulative;
  const turnNumbers = [...new Set([...turns.map((turn) => turn.turn), ...calls.map((call) => call.turn)])].sort((a, b) => a - b);
  const turnOf = new Map(turns.map((turn) => [turn.turn, turn]));
  for (const number of turnNumbers) {
    const turn = turnOf.get(number);
    if (turn) {
      spent.steps++;
      spent.tokens += inputTokensOf(turn.usage) + turn.usage.output_tokens;
      spent.micros += turn.costMicros;
      items.push({
        kind: 'turn',
        step: spent.steps,
        turn: turn.turn,
        at: turn.recordedAt,
        model: turn.model,
        text: turn.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])),
        toolUses: turn.content.flatMap((block) => (block.type === 'tool_use' ? [{ id: block.id, name: block.name, input: block.input }] : [])),
        stopReason: turn.stopReason,
        tokens: { input: inputTokensOf(turn.usage), output: turn.usage.output_tokens, cachedInput: turn.usage.cache_read_input_tokens ?? 0 },
        dollars: turn.costMicros / 1_000_000,
        latencyMs: turn.latencyMs,
        cumulative: cumulative(),
      });
    }
    for (const call of (callsOf.get(number) ?? []).sort((a, b) => a.call - b.call)) {
      spent.steps++;
      const approval = approvalOf.get(`${call.turn}/${call.call}`);
      items.push({
        kind: 'call',
        step: spent.steps,
        turn: call.turn,
        call: call.call,
        ...(call.recordedAt && { at: call.recordedAt }),
        name: call.name,
        effect: call.effect,
        args: call.args,
        idempotencyKey: call.idempotencyKey,
        status: call.status,
        ...(call.outcome && { outcome: call.outcome }),
        ...(call.result !== undefined && { result: parseResult(call.result) }),
        attempts: call.attempts,
        ...(call.latencyMs !== undefined && { latencyMs: call.latencyMs }),
        ...(approval && {
          approval: {
            approvalId: approval.approvalId,
            status: approval.status,
            summary: approval.summary,
            decideBy: approval.decideBy,
            ...(approval.decidedBy && { decidedBy: approval.decidedBy }),
            ...(approval.reason && { reason: approval.reason }),
            ...(approval.decidedAt && { decidedAt: approval.decidedAt }),
          },
        }),
        cumulative: cumulative(),
      });
    }
  }
  return items;
}

async function eventItems(run: RunRecord, history: HistorySource, approvals: ApprovalRecord[], link?: (executionArn: string) => string): Promise<TimelineItem[]> {
  const items: TimelineItem[] = [];
  const chain = await executionLinks(run, history, link);
  const ask = historyAsk(run);
  for (const execution of chain) {
    const lines: HistoryLine[] = await history.linesOf(execution.executionArn, ask);
    items.push({
      kind: 'execution',
      ...(execution.startedAt && { at: execution.startedAt }),
      execution: execution.name,
      executionArn: execution.executionArn,
      ...(execution.status && { status: execution.status }),
      index: execution.index,
      via: execution.via,
      reason: execution.reason,
      ...(execution.link && { link: execution.link }),
    });
    for (const line of lines) {
      if ((line.type === 'TaskFailed' || line.type === 'TaskTimedOut') && line.state) {
        items.push({ kind: 'retry', at: line.at, execution: line.execution, state: line.state, error: line.error ?? line.type });
      }
    }
  }
  for (const event of run.guardEvents ?? []) items.push({ kind: 'guard', at: event.at, guard: event.guard, action: event.action, reason: event.reason });
  if (run.recovery) items.push({ kind: 'recovery', at: run.recovery.at, attempts: run.recovery.attempts, reason: run.recovery.reason, execution: run.recovery.executionName });
  for (const approval of approvals.filter((a) => a.budget)) {
    items.push({ kind: 'budget-approval', at: approval.createdAt, approvalId: approval.approvalId, status: approval.status, summary: approval.summary });
  }
  if (run.killed) items.push({ kind: 'kill', at: run.killed.at, by: run.killed.by, reason: run.killed.reason });
  return items;
}

/** Steps stay in their order; each event goes before the first step recorded after it. */
function mergeByTime(steps: TimelineItem[], events: TimelineItem[]): TimelineItem[] {
  const timeOf = (item: TimelineItem) => ('at' in item && item.at ? Date.parse(item.at) : Number.NEGATIVE_INFINITY);
  const sorted = [...events].sort((a, b) => timeOf(a) - timeOf(b));
  const merged: TimelineItem[] = [];
  let e = 0;
  for (const step of steps) {
    const t = 'at' in step && step.at ? Date.parse(step.at) : undefined;
    while (e < sorted.length && t !== undefined && timeOf(sorted[e]!) <= t) merged.push(sorted[e++]!);
    merged.push(step);
  }
  while (e < sorted.length) merged.push(sorted[e++]!);
  return merged;
}
