import { crossRunApproval } from '../tools/aggregates.js';
import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import type { AgentDefinition } from '../define.js';
import type { Ledger } from '../ledger/ledger.js';
import { BUDGET_FIELDS, EXTENDABLE_GUARDS, type ApprovalRecord, type ApprovalStatus, type RunRecord } from '../records/ledger-records.js';
import { deliverDecision, signedLinks, type ApprovalDeps } from '../approvals/decision.js';
import { approvalRequested } from '../approvals/notify.js';
import { effectSubject, shareEffectApproval, sharedDecisionOf } from '../approvals/shared.js';
import { InvalidInputError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { loadRun, loadTurn } from '../conversation/turns.js';
import { deriveRecordedCall } from '../conversation/tool-calls.js';

/**
 * The RequestApproval step: records a pending approval with the execution's task token (or finds
 * the one recorded already) and tells the approvers; how it is decided: approvals/decision.ts.
 */

export const RequestApprovalInput = schemaOnFirstUse(() => z.union([
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
]));

export function createRequestApproval(deps: ApprovalDeps & { agent: AgentDefinition }) {
  return async (input: unknown): Promise<{ approvalId: string; status: ApprovalStatus } | { approvalId: null; status: 'not needed' }> => {
    const request = parseOrThrow(RequestApprovalInput(), input, 'RequestApproval input');
    const run = await loadRun(deps.ledger, request.runId);
    const now = deps.clock.now();
    const subject = 'extension' in request ? budgetSubject(run, request.extension) : await toolSubject(deps.agent, deps.ledger, run, request.turn, request.call);
    if (!subject) {
      // Nothing to ask any more: the total across runs the call was refused on has taken it in
      // since (another run of the same effect reserved it as its holder). The wait ends at once;
      // CallTool runs the call again, and its reservation holds now.
      await deps.callbacks.succeed(request.taskToken, { approvalId: null, status: 'not needed' });
      return { approvalId: null, status: 'not needed' };
    }
    const asked: ApprovalRecord = {
      kind: 'approval',
      approvalId: `apv_${randomBytes(16).toString('base64url')}`,
      runId: run.runId,
      agent: deps.agent.name,
      ...subject,
      status: 'pending',
      decideBy: new Date(now.getTime() + run.config.approvalTimeoutSeconds * 1000).toISOString(),
      createdAt: now.toISOString(),
    };
    // An effect's call in concurrent runs asks a person once (approvals/shared.ts): leading, or following the request of the run that asked first.
    const requested = await shareEffectApproval(deps.ledger, asked, now);
    // Leading under an earlier attempt's id (a retry): told already if that attempt recorded it.
    const earlier = requested.approvalId !== asked.approvalId ? await deps.ledger.getApproval(run.runId, requested.turn, requested.call) : undefined;
    const stored = await deps.ledger.upsertApproval(requested, request.taskToken);
    if (stored.status === 'pending' && stored.sharedWith) {
      // Nobody is told: the leader's decision wakes this execution, or did already (then it is delivered now).
      const decided = await sharedDecisionOf(deps.ledger, stored);
      if (decided) await deliverDecision(deps, { ...stored, status: decided.status, ...(decided.reason && { reason: decided.reason }) }, request.taskToken);
    } else if (stored.status === 'pending') {
      if (!earlier && stored.approvalId === requested.approvalId) await tell(deps, stored);
    } else {
      // Decided while no execution was waiting (e.g. during a restart): deliver it now.
      await deliverDecision(deps, stored, request.taskToken);
    }
    return { approvalId: stored.approvalId, status: stored.status };
  };
}

/** Tells the approvers: one event with the summary, the amount, the deadline and a signed link each. */
async function tell(deps: ApprovalDeps, approval: ApprovalRecord): Promise<void> {
  const links = await signedLinks(deps.links, approval);
  const event = approvalRequested(approval, links);
  try {
    await deps.notifier?.approvalRequested(event);
  } catch (error) {
    // The approval stands (listed by the API and `savepoint approvals`, escalated at its deadline):
    // a notification that did not go out must not fail the run.
    console.error(JSON.stringify({ level: 'ERROR', message: 'approval notification failed', approvalId: approval.approvalId, error: String(error) }));
  }
  deps.notify?.(approval, event);
}

type Subject = Pick<ApprovalRecord, 'turn' | 'call' | 'toolName' | 'summary' | 'amount' | 'details' | 'description' | 'budget' | 'effect'>;

/**
 * A tool call its approval rule holds: what a person is asked to approve, in the tool's own words.
 * Undefined when only the total across runs held it and it no longer does.
 */
async function toolSubject(agent: AgentDefinition, ledger: Ledger, run: RunRecord, turn: number, call: number): Promise<Subject | undefined> {
  const recorded = await loadTurn(ledger, run.runId, turn);
  const derived = await deriveRecordedCall(ledger, agent, run, recorded, call);
  // The run's own rule or limits first; else the total across the agent's runs CallTool was refused.
  const request =
    derived.approval ??
    (derived.tool && derived.args !== undefined
      ? await crossRunApproval(ledger, agent, { tool: derived.tool, args: derived.args }, { runId: run.runId, turn, call, ...(derived.effectKey !== undefined && { effectKey: derived.effectKey }) })
      : undefined);
  if (!request) {
    // No rule asks: CallTool was refused its reservation across runs. Asked without one, a person is
    // never asked for nothing; a call of a tool with no aggregate here was not sent by CallTool.
    if (derived.tool?.aggregate) return undefined;
    throw new InvalidInputError(`call: tool call ${turn}/${call} of run ${run.runId} (${derived.block.name}) needs no approval`);
  }
  const described = derived.tool?.describe?.(derived.args);
  return {
    ...(derived.effectKey !== undefined && { effect: { key: derived.effectKey, subject: effectSubject(derived.block.name, derived.args) } }),
    turn,
    call,
    toolName: derived.block.name,
    summary: `${request.summary} (run ${run.runId})`,
    ...(request.amount && { amount: { ...request.amount } }),
    ...(request.details && { details: { ...request.details } }),
    ...(described !== undefined && { description: described }),
  };
}

/** An exhausted budget (or a tripped loop detector): a person may extend it instead of the run stopping. */
function budgetSubject(run: RunRecord, budget: NonNullable<ApprovalRecord['budget']>): Subject {
  if (budget.guard === 'loop') {
    return {
      turn: run.modelTurns,
      call: 0,
      toolName: 'continue_after_loop',
      summary: `let run ${run.runId} go on after its loop detector tripped at turn ${budget.limit} (extension ${budget.extension})`,
      budget,
    };
  }
  const current = run.config[BUDGET_FIELDS[budget.guard]];
  return {
    turn: run.modelTurns,
    call: 0,
    toolName: 'extend_budget',
    summary: `extend the ${budget.guard} budget of run ${run.runId} from ${current} to ${budget.limit} (extension ${budget.extension})`,
    budget,
  };
}
