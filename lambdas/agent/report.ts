import type { Ledger } from '../ledger/ledger.js';
import { guardFigures, type GuardFigures } from '../guards/budgets.js';
import type { ApprovalRecord, GuardEvent, KillFlag, RecoveryRecord, RunRecord, ToolCallRecord } from '../ledger/records.js';

/** What a run did, computed from its ledger records (never from what the model claims it did). */
export interface RunReport {
  runId: string;
  runDate: string;
  status: RunRecord['status'];
  stopReason?: string;
  error?: { error: string; cause: string };
  steps: number;
  modelTurns: number;
  toolCalls: number;
  tokens: { input: number; output: number; cachedInput: number; total: number };
  dollars: number;
  refunds: { requests: number; issued: number; issuedCents: number; skipped: number; flagged: number; escalated: number };
  approvals: { total: number; approved: number; rejected: number; expired: number; pending: number };
  inFlight: number;
  /** Each guard's figures (used / limit), and every warning or stop, in order. */
  guards: GuardFigures;
  guardEvents: GuardEvent[];
  killed?: KillFlag;
  /** Executions that drove the run: the first, plus one per resume or recovery. */
  executions: number;
  /** The run's automatic recoveries, if any (lambdas/steps/recover.ts). */
  recovery?: RecoveryRecord;
  createdAt: string;
  finishedAt?: string;
  wallSeconds: number;
}

export function buildReport(run: RunRecord, calls: ToolCallRecord[], approvals: ApprovalRecord[], now: Date): RunReport {
  const ok = (name: string) => calls.filter((call) => call.name === name && call.status === 'completed' && call.outcome === 'ok');
  const issued = ok('issue_refund');
  const flagged = ok('flag_for_review');
  const escalated = calls.filter((call) => call.name === 'issue_refund' && (call.outcome === 'rejected' || call.outcome === 'expired'));
  const requests = requestIds(calls);
  const decided = new Set([...issued, ...flagged].map((call) => String(call.args['refundRequestId'])));
  const approvalCount = (status: ApprovalRecord['status']) => approvals.filter((approval) => approval.status === status).length;
  const end = run.finishedAt ? new Date(run.finishedAt) : now;
  return {
    runId: run.runId,
    runDate: run.runDate,
    status: run.status,
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
    refunds: {
      requests: requests.size,
      issued: issued.length,
      issuedCents: issued.reduce((sum, call) => sum + Number(call.args['amountCents'] ?? 0), 0),
      skipped: [...requests].filter((id) => !decided.has(id)).length,
      flagged: flagged.length,
      escalated: escalated.length,
    },
    approvals: {
      total: approvals.length,
      approved: approvalCount('approved'),
      rejected: approvalCount('rejected'),
      expired: approvalCount('expired'),
      pending: approvalCount('pending'),
    },
    inFlight: calls.filter((call) => call.status === 'in_flight').length,
    guards: guardFigures(run, end),
    guardEvents: run.guardEvents ?? [],
    ...(run.killed ? { killed: run.killed } : {}),
    executions: run.executions.length,
    ...(run.recovery ? { recovery: run.recovery } : {}),
    createdAt: run.createdAt,
    ...(run.finishedAt ? { finishedAt: run.finishedAt } : {}),
    wallSeconds: Math.max(0, (end.getTime() - new Date(run.createdAt).getTime()) / 1000),
  };
}

/** The refund request ids the run listed (from the recorded `list_refund_requests` results). */
function requestIds(calls: ToolCallRecord[]): Set<string> {
  const ids = new Set<string>();
  for (const call of calls) {
    if (call.name !== 'list_refund_requests' || call.outcome !== 'ok' || !call.result) continue;
    const parsed = JSON.parse(call.result) as { refundRequests?: { id?: unknown }[] };
    for (const request of parsed.refundRequests ?? []) if (typeof request.id === 'string') ids.add(request.id);
  }
  return ids;
}

export async function loadReport(ledger: Ledger, runId: string, now: Date): Promise<RunReport | undefined> {
  const run = await ledger.getRun(runId);
  if (!run) return undefined;
  const { calls, approvals } = await ledger.listConversation(runId);
  return buildReport(run, calls, approvals, now);
}
