import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { AgentDefinition } from '../define.js';
import type { Ledger } from '../ledger/ledger.js';
import { BUDGET_FIELDS, EXTENDABLE_GUARDS, type ApprovalRecord, type ApprovalStatus, type RunRecord } from '../ledger/records.js';
import { ErrorNames, InvalidInputError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Clock, TaskCallbacks } from './ports.js';
import { approvalRequest, loadRun, loadToolUse } from './turns.js';

/**
 * Approvals pause the execution on a task token. The token never leaves the ledger: a person sees
 * and decides an opaque approval id, and the decision is recorded once (pending → decided, a
 * conditional write) before it is delivered to Step Functions. Delivery is repeatable: a decision
 * that reached a dead execution is delivered again when the run asks again.
 */

export const RequestApprovalInput = z.union([
  z.object({
    runId: z.string().min(1),
    turn: z.number().int().positive(),
    call: z.number().int().positive(),
    taskToken: z.string().min(1),
  }),
  z.object({
    runId: z.string().min(1),
    extension: z.object({ guard: z.enum(EXTENDABLE_GUARDS), extension: z.number().int().positive(), limit: z.number().positive() }),
    taskToken: z.string().min(1),
  }),
]);

export const Decision = z
  .object({
    decision: z.enum(['approve', 'reject']),
    reason: z.string().max(500).optional(),
    decidedBy: z.string().min(1).max(100).optional(),
  })
  .strict();
export type Decision = z.infer<typeof Decision>;

export interface ApprovalDeps {
  ledger: Ledger;
  callbacks: TaskCallbacks;
  clock: Clock;
  /** Called when a new approval waits for a person (the local run prints it; on AWS it is logged). */
  notify?: (approval: ApprovalRecord) => void;
  /** Only this agent's approvals are decided and expired here (agents may share a table). */
  agentName?: string;
}

/** Whether an approval is this deployment's to decide. */
function ours(deps: Pick<ApprovalDeps, 'agentName'>, approval: ApprovalRecord): boolean {
  return deps.agentName === undefined || approval.agent === undefined || approval.agent === deps.agentName;
}

/** Sends a recorded decision to the waiting execution. `false` when no execution waits on the token. */
export async function deliverDecision(callbacks: TaskCallbacks, approval: ApprovalRecord): Promise<boolean> {
  switch (approval.status) {
    case 'approved':
      return callbacks.succeed(approval.taskToken, { approvalId: approval.approvalId, status: approval.status });
    case 'rejected':
      return callbacks.fail(approval.taskToken, ErrorNames.ApprovalRejected, approval.reason || 'rejected');
    case 'expired':
      return callbacks.fail(approval.taskToken, ErrorNames.ApprovalExpired, approval.reason || 'expired');
    case 'pending':
      return false;
  }
}

export function createRequestApproval(deps: ApprovalDeps & { agent: AgentDefinition }) {
  return async (input: unknown): Promise<{ approvalId: string; status: ApprovalStatus }> => {
    const request = parseOrThrow(RequestApprovalInput, input, 'RequestApproval input');
    const run = await loadRun(deps.ledger, request.runId);
    const now = deps.clock.now();
    const subject = 'extension' in request ? budgetSubject(run, request.extension) : await toolSubject(deps.agent, deps.ledger, run, request.turn, request.call);
    const requested: ApprovalRecord = {
      kind: 'approval',
      approvalId: `apv_${randomBytes(16).toString('base64url')}`,
      runId: run.runId,
      agent: deps.agent.name,
      ...subject,
      taskToken: request.taskToken,
      status: 'pending',
      decideBy: new Date(now.getTime() + run.config.approvalTimeoutSeconds * 1000).toISOString(),
      createdAt: now.toISOString(),
    };
    const stored = await deps.ledger.upsertApproval(requested);
    if (stored.status === 'pending') {
      if (stored.approvalId === requested.approvalId) deps.notify?.(stored);
    } else {
      // Decided while no execution was waiting (e.g. during a restart): deliver it now.
      await deliverDecision(deps.callbacks, { ...stored, taskToken: request.taskToken });
    }
    return { approvalId: stored.approvalId, status: stored.status };
  };
}

type Subject = Pick<ApprovalRecord, 'turn' | 'call' | 'toolName' | 'summary' | 'amount' | 'details' | 'budget'>;

/** A tool call its approval rule holds: what a person is asked to approve, in the tool's own words. */
async function toolSubject(agent: AgentDefinition, ledger: Ledger, run: RunRecord, turn: number, call: number): Promise<Subject> {
  const { block } = await loadToolUse(ledger, run.runId, turn, call);
  const request = approvalRequest(agent, block, run);
  if (!request) throw new InvalidInputError(`call: tool call ${turn}/${call} of run ${run.runId} (${block.name}) needs no approval`);
  return {
    turn,
    call,
    toolName: block.name,
    summary: `${request.summary} (run ${run.runId})`,
    ...(request.amount && { amount: { ...request.amount } }),
    ...(request.details && { details: { ...request.details } }),
  };
}

/** An exhausted budget: a person may extend it instead of the run stopping. */
function budgetSubject(run: RunRecord, budget: NonNullable<ApprovalRecord['budget']>): Subject {
  const current = run.config[BUDGET_FIELDS[budget.guard]];
  return {
    turn: run.modelTurns,
    call: 0,
    toolName: 'extend_budget',
    summary: `extend the ${budget.guard} budget of run ${run.runId} from ${current} to ${budget.limit} (extension ${budget.extension})`,
    budget,
  };
}

export type DecideResult =
  | { ok: true; approval: ApprovalRecord; delivered: boolean }
  | { ok: false; reason: 'not_found' | 'already_decided'; approval?: ApprovalRecord };

/** A person's decision, from the approval API or the CLI. Deciding the same way twice is harmless. */
export function createDecideApproval(deps: ApprovalDeps) {
  return async (approvalId: string, body: unknown): Promise<DecideResult> => {
    const decision = parseOrThrow(Decision, body, 'approval decision');
    const approval = await deps.ledger.findApproval(approvalId);
    if (!approval || !ours(deps, approval)) return { ok: false, reason: 'not_found' };
    const status = decision.decision === 'approve' ? 'approved' : 'rejected';
    const { decided, record } = await deps.ledger.decideApproval(
      approval,
      { status, reason: decision.reason, decidedBy: decision.decidedBy ?? 'api' },
      deps.clock.now(),
    );
    if (!decided && record.status !== status) return { ok: false, reason: 'already_decided', approval: record };
    return { ok: true, approval: record, delivered: await deliverDecision(deps.callbacks, record) };
  };
}

/**
 * Escalates every pending approval whose deadline has passed: it is recorded as expired and the
 * waiting execution resumes on its `Approval.Expired` catch, which flags the refund for review.
 */
export function createExpireApprovals(deps: ApprovalDeps) {
  return async (): Promise<{ expired: string[] }> => {
    const now = deps.clock.now();
    const expired: string[] = [];
    for (const approval of await deps.ledger.listPendingApprovals()) {
      if (approval.decideBy > now.toISOString() || !ours(deps, approval)) continue;
      const { decided, record } = await deps.ledger.decideApproval(
        approval,
        { status: 'expired', reason: `not decided by ${approval.decideBy}`, decidedBy: 'timeout' },
        now,
      );
      if (!decided) continue;
      expired.push(record.approvalId);
      await deliverDecision(deps.callbacks, record);
    }
    return { expired };
  };
}

export function formatCents(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

export function assertApprovalId(approvalId: string | undefined): string {
  if (!approvalId || !/^apv_[A-Za-z0-9_-]{10,40}$/.test(approvalId)) {
    throw new InvalidInputError(`approvalId: expected an id like apv_…, got ${JSON.stringify(approvalId ?? '')}`);
  }
  return approvalId;
}
