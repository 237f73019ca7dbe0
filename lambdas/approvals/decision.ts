export { signedLinks, type ApprovalLinks } from './links.js';
import type { ApprovalLinks } from './links.js';
import { APPROVAL_ID_PATTERN, approvalIdRefusal } from './approval-id.js';
import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import type { Ledger } from '../ledger/ledger.js';
import { approvalSkOf, type ApprovalRecord } from '../records/ledger-records.js';
import { decisionMessage, firstApprovalMessage, verifiedFirstApproval, type DecisionMac } from './decision-mac.js';
import type { LinkSigner } from './links.js';
import type { ApprovalNotifier, ApprovalRequested } from './notify.js';
import { decisionVerdict, type ApprovalPolicy, type Identity } from './policy.js';
import { namedPeople, personIn } from './people.js';
import { ErrorNames, InvalidInputError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Clock, TaskCallbacks } from '../shared/ports.js';
import { loadRun } from '../conversation/turns.js';
import { uncoveredWaitMs, waitOf } from './waits.js';

/**
 * Approvals pause the execution on a task token. The token never leaves the ledger: a person sees
 * and decides an opaque approval id, and the decision is recorded once (pending → decided, a
 * conditional write) before it is delivered to Step Functions. Delivery is repeatable: a decision
 * that reached a dead execution is delivered again when the run asks again, and one that never
 * reached its execution when a decider asks again (createDecideApproval).
 */

/** The longest reason a decision records (the approval page's box takes as many). */
export const MAX_DECISION_REASON = 500;

export const Decision = schemaOnFirstUse(() => z
  .object({
    decision: z.enum(['approve', 'reject']),
    reason: z.string().max(MAX_DECISION_REASON).optional(),
    /** The run the decider means to decide for: a decision for another run is refused (403). */
    runId: z.string().min(1).max(100).optional(),
    /** The signed link the approval page was opened with (people; machines sign with IAM instead). */
    link: z.string().min(1).max(2000).optional(),
  })
  .strict());
export type Decision = z.infer<ReturnType<typeof Decision>>;

/** Signed links for people: who gets one, and where the approval page is served. */

export interface ApprovalDeps {
  ledger: Ledger;
  callbacks: TaskCallbacks;
  clock: Clock;
  /** Called when a new approval waits for a person (the local run prints it; on AWS it is logged). */
  notify?: (approval: ApprovalRecord, event: ApprovalRequested) => void;
  /** Where approval-requested events go (EventBridge and SNS on AWS). */
  notifier?: ApprovalNotifier;
  links?: ApprovalLinks;
  /** Signs decisions (the callback) and verifies them (CallTool). */
  decisionMac?: DecisionMac;
  policy?: ApprovalPolicy;
  /** Only this agent's approvals are decided and expired here (agents may share a table). */
  agentName?: string;
}

export const DEFAULT_POLICY: ApprovalPolicy = { separationOfDuties: true };

/** Whether an approval is this deployment's to decide. */
export function ours(deps: Pick<ApprovalDeps, 'agentName'>, approval: ApprovalRecord): boolean {
  return deps.agentName === undefined || approval.agent === undefined || approval.agent === deps.agentName;
}

/**
 * Sends a recorded decision to the waiting execution, after adding its wait to the run's
 * approval-wait counter (once per approval): waiting for a person is not work. `false` when no
 * execution waits on the token. The token is read from the ledger (only the approval functions'
 * roles may) unless the caller holds it (RequestApproval is handed it by Step Functions).
 */
export async function deliverDecision(deps: Pick<ApprovalDeps, 'ledger' | 'callbacks'>, approval: ApprovalRecord, taskToken?: string): Promise<boolean> {
  if (approval.status === 'pending') return false;
  await countWait(deps.ledger, approval);
  const token = taskToken ?? (await deps.ledger.getTaskToken(approval));
  if (token === undefined) return false;
  switch (approval.status) {
    case 'approved':
      return deps.callbacks.succeed(token, { approvalId: approval.approvalId, status: approval.status });
    case 'rejected':
      return deps.callbacks.fail(token, ErrorNames.ApprovalRejected, approval.reason || 'rejected');
    case 'expired':
      return deps.callbacks.fail(token, ErrorNames.ApprovalExpired, approval.reason || 'expired');
  }
}

/**
 * Delivers a recorded decision to its run and to the runs that share it (`wakeFollowers`): what a
 * decision, a decider's retry of one, and the expiry sweep each do. Whether the approval's own
 * execution got it (`deliverDecision`).
 */
export async function deliverToEveryRun(deps: Pick<ApprovalDeps, 'ledger' | 'callbacks'>, decided: ApprovalRecord): Promise<boolean> {
  const delivered = await deliverDecision(deps, decided);
  await wakeFollowers(deps, decided);
  return delivered;
}

/**
 * Delivers a recorded decision to every run that waits on it (`deliverToEveryRun`), then drops its
 * `undelivered` mark (a no-op without one): what a decision, a decider's retry and the expiry
 * sweep's redelivery each do. Whether the approval's own execution got it.
 */
export async function deliverOwed(deps: Pick<ApprovalDeps, 'ledger' | 'callbacks'>, decided: ApprovalRecord): Promise<boolean> {
  const delivered = await deliverToEveryRun(deps, decided);
  await deps.ledger.markDelivered(decided);
  return delivered;
}

/**
 * Wakes the calls of other runs that wait on a decided approval instead of asking a person again
 * (approvals/shared.ts): each follower's execution gets the decision on its own token, and its
 * CallTool takes the decision as its own. A follower that is gone, or decided meanwhile, is passed over.
 */
async function wakeFollowers(deps: Pick<ApprovalDeps, 'ledger' | 'callbacks'>, leader: ApprovalRecord): Promise<void> {
  if (!leader.effect || leader.status === 'pending') return;
  const shared = await deps.ledger.getEffectApproval(leader.effect.key);
  if (shared?.leader.approvalId !== leader.approvalId) return;
  for (const ref of shared.followers) {
    const follower = await deps.ledger.getApproval(ref.runId, ref.turn, ref.call);
    if (follower?.status !== 'pending' || follower.sharedWith?.approvalId !== leader.approvalId) continue;
    // As the leader's decision, on the follower's token (its wait is counted when its CallTool records it).
    await deliverDecision(deps, { ...follower, status: leader.status, ...(leader.reason && { reason: leader.reason }) });
  }
}

/**
 * Adds a decided approval's wait to its run, once (the step key is the approval's): only the part
 * of it no other wait of the run already covers, so that the run's waiting time is the union of
 * its waits, not their sum (two approvals of one turn wait side by side). Approvals of the same
 * turn are the only ones that can overlap it: a turn's calls all end before the next turn.
 */
export async function countWait(ledger: Pick<Ledger, 'listConversation' | 'countStep'>, approval: ApprovalRecord): Promise<void> {
  if (waitOf(approval) === undefined) return;
  const { approvals } = await ledger.listConversation(approval.runId, { fromTurn: approval.turn });
  const waitedMs = uncoveredWaitMs(approval, approvals);
  if (waitedMs > 0) await ledger.countStep(approval.runId, `wait:${approvalSkOf(approval)}`, { approvalWaitMs: waitedMs });
}

export type DecideResult =
  | { ok: true; approval: ApprovalRecord; delivered: boolean; waitingForSecond?: boolean }
  | ({ ok: false; status: 401 | 403 | 404 | 409 | 410; message: string; approval?: ApprovalRecord } & Partial<AlreadyDecided> & Partial<ApprovedFirst>);

/**
 * What the 409 of an approval decided already adds: whether its recorded decider is the person the
 * caller proved to be, and (when this answer delivered it again) whether its execution got it. A
 * client that asked again after its connection dropped (client/connect.ts `decide` through a
 * restart of serve) tells by it its own first attempt that landed from someone else's decision.
 */
export interface AlreadyDecided {
  decidedByCaller: boolean;
  delivered: boolean;
}

/**
 * That the first approval of an approval of two is the caller's (`approval`: as recorded). On the
 * 403 of a second approval by the person who gave the first (the approval still pending, waiting for
 * another person), and on the 409 of an approval another person then approved (`approved`, its
 * first approval the caller's): a first approval of two asked again after its answer was lost
 * (client/connect.ts `decide` through a restart of serve) finds by it that it landed, and counted,
 * whether or not the second person came in between. Someone else's first approval, a rejection,
 * or an approval decided without the caller's approval never carry it.
 */
export interface ApprovedFirst {
  firstApprovalByCaller: true;
}

/** How a decider proved who they are: a signed link (in the body), or the caller the transport authenticated (IAM, local user). */
export interface DecisionAuth {
  /** The authenticated caller (IAM principal; the local user on loopback). Absent for an anonymous request. */
  readonly caller?: Identity;
}

/**
 * A decision, from the approval page, the IAM API or the CLI. The decider is who they proved to
 * be — a link's approver or the authenticated caller — never a field of the body. Refusals
 * (401/403/404/409/410) change nothing; every decision is recorded once, with who, when, how
 * and why, and its MAC.
 */
export function createDecideApproval(deps: ApprovalDeps) {
  const policy = deps.policy ?? DEFAULT_POLICY;
  return async (approvalId: string, body: unknown, auth: DecisionAuth = {}): Promise<DecideResult> => {
    const decision = parseOrThrow(Decision(), body, 'approval decision');
    // Who decides is proven before the approval is looked up: whoever proves nothing (a forged
    // link, no caller) learns nothing of which approval ids exist (401 for any id).
    let identity = auth.caller;
    let runId = decision.runId;
    let linkId: string | undefined;
    if (decision.link !== undefined) {
      if (!deps.links) return { ok: false, status: 401, message: 'link: this API does not take signed links' };
      const verdict = await deps.links.signer.verify(decision.link, { approvalId }, deps.clock.now());
      if (!verdict.ok) return { ok: false, status: verdict.status, message: verdict.message };
      identity = { id: verdict.claims.approver, via: 'link' };
      if (runId !== undefined && runId !== verdict.claims.runId) return { ok: false, status: 403, message: `runId: the link is for run ${verdict.claims.runId}, not ${runId}` };
      runId = verdict.claims.runId;
      linkId = verdict.claims.linkId;
    }
    if (!identity) return { ok: false, status: 401, message: 'authentication: sign the request (IAM) or open the signed link you were sent' };
    // Only the deployment's approvers decide, each as the one person they are (approvals/people.ts).
    const person = deciderPerson(identity, policy, deps.links);
    if (!person.ok) return { ok: false, status: 403, message: person.message };
    identity = { ...identity, id: person.person };
    const approval = await deps.ledger.findApproval(approvalId);
    if (!approval || !ours(deps, approval)) return { ok: false, status: 404, message: `no approval ${approvalId}` };

    const run = await loadRun(deps.ledger, approval.runId);
    const people = policy.approverPrincipals && namedPeople({ approverPrincipals: policy.approverPrincipals, starterPrincipals: policy.starterPrincipals, linkApprovers: deps.links?.approvers ?? [] });
    const now = deps.clock.now();
    const verdict = decisionVerdict({ approval, run, identity, decision: decision.decision, policy, now, runId, linkId, ...(people && { people }) });
    if (verdict.action === 'refuse') {
      // A decided approval asked again (a repeat, a used link) is delivered again: what failed
      // between recording a decision and delivering it (a throttled SendTaskSuccess, a callback
      // that timed out after its write) left the run waiting for the backstop, days, and the
      // decider's retry is what wakes it. Repeatable: a token no longer waited on is passed over.
      if (verdict.status === 409 && approval.status !== 'pending') {
        const delivered = await deliverOwed(deps, approval);
        return { ok: false, status: 409, message: verdict.message, approval, delivered, decidedByCaller: approval.decidedBy === identity.id, ...approvedFirstBy(approval, identity) };
      }
      return { ok: false, status: verdict.status, message: verdict.message, approval, ...(verdict.firstApprovalByCaller && { firstApprovalByCaller: true }) };
    }
    if (verdict.action === 'first') {
      const signed = { by: identity.id, via: identity.via, at: now.toISOString() };
      const firstMac = deps.decisionMac && (await deps.decisionMac.sign(firstApprovalMessage(approval, signed)));
      const first = { ...signed, ...(decision.reason && { reason: decision.reason }), ...(firstMac && { mac: firstMac }) };
      const { recorded, record } = await deps.ledger.recordFirstApproval(approval, first, linkId);
      if (!recorded) return { ok: false, status: 409, message: `approval ${approvalId} changed meanwhile (now ${record.status}); open it again`, approval: record };
      return { ok: true, approval: record, delivered: false, waitingForSecond: true };
    }

    // A second approval completes the decision only on a first approval the callback signed: one
    // written past it (anything holding the ledger's seal key can write a record) is not a second
    // person. It is refused (409, naming it), not treated as absent: the approval cannot be
    // completed by replacing it (the ledger records a first approval once), and a pending approval
    // whose record was tampered with is for a person to look at, not to approve over. Nothing is
    // recorded; a rejection still decides (it needs no first approval).
    if (decision.decision === 'approve' && approval.firstApproval && deps.decisionMac && !(await verifiedFirstApproval(deps.decisionMac, approval))) {
      const key = deps.decisionMac.keyName ? `the decision key (${deps.decisionMac.keyName})` : 'the decision key';
      return {
        ok: false,
        status: 409,
        message: `approval ${approvalId}: its first approval (by ${approval.firstApproval.by}) is not signed by ${key}: it was not recorded by the approval callback and is not counted; nobody can complete this approval (reject it, or let it expire)`,
        approval,
      };
    }
    const status = decision.decision === 'approve' ? 'approved' : 'rejected';
    const decided = { status, decidedBy: identity.id, decidedVia: identity.via, decidedAt: now.toISOString() } as const;
    const decisionMac = deps.decisionMac && (await deps.decisionMac.sign(decisionMessage({ ...approval, ...decided })));
    const { decided: applied, record } = await deps.ledger.decideApproval(
      approval,
      // Recorded owed to the run (`undelivered`) until it is delivered, as an expiry is: a delivery
      // that fails after this write is made again by the expiry sweep a minute later, whether or
      // not the decider retries (expire-approvals.ts).
      { status, decidedBy: identity.id, decidedVia: identity.via, reason: decision.reason, waitedMs: now.getTime() - Date.parse(approval.createdAt), linkId, undelivered: true, ...(decisionMac && { decisionMac }) },
      now,
    );
    // Decided meanwhile by another request (delivered by it): not this one's to deliver.
    if (!applied) return { ok: false, status: 409, message: `approval ${approvalId} is already ${record.status}${record.decidedBy ? ` (by ${record.decidedBy})` : ''}`, approval: record, delivered: false, decidedByCaller: record.decidedBy === identity.id, ...approvedFirstBy(record, identity) };
    return { ok: true, approval: record, delivered: await deliverOwed(deps, record) };
  };
}

/**
 * The person a proven decider is, or why they may not decide: a link's approver must still be one
 * of the deployment's (a link outlives its approver's removal); an IAM principal (the local user)
 * must be one of `approverPrincipals`' people, and is recorded under that person's name — the
 * name of their link too, so one person counts once whichever way they decide.
 */
export function deciderPerson(identity: Identity, policy: ApprovalPolicy, links: Pick<ApprovalLinks, 'approvers'> | undefined): { ok: true; person: string } | { ok: false; message: string } {
  if (identity.via === 'link') {
    return links?.approvers.includes(identity.id) ? { ok: true, person: identity.id } : { ok: false, message: `link: ${identity.id} is not one of this deployment's approvers (approvals.approvers)` };
  }
  if (!policy.approverPrincipals) return { ok: true, person: identity.id };
  const principal = identity.principal ?? identity.id;
  const what = "approver principals (approvals.approverPrincipals)";
  const approver = personIn(principal, [policy.approverPrincipals], what);
  // One principal, one person across both lists: a starter's principal named as someone else is refused.
  return approver.ok ? personIn(principal, [policy.approverPrincipals, policy.starterPrincipals], what) : approver;
}

export function formatCents(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

export function assertApprovalId(approvalId: string | undefined): string {
  if (!approvalId || !APPROVAL_ID_PATTERN.test(approvalId)) throw new InvalidInputError(approvalIdRefusal(approvalId));
  return approvalId;
}

/** `ApprovedFirst` for a decided approval: approved, by another person, on the caller's first approval. */
function approvedFirstBy(approval: ApprovalRecord, identity: Identity): Partial<ApprovedFirst> {
  return approval.status === 'approved' && approval.decidedBy !== identity.id && approval.firstApproval?.by === identity.id ? { firstApprovalByCaller: true } : {};
}
