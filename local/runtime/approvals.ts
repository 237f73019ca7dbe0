import type { ApprovalLinks } from '../../lambdas/approvals/decision.js';
import type { ApprovalPolicy } from '../../lambdas/approvals/policy.js';
import type { PrincipalDirectory } from '../../lambdas/approvals/people.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import { timersOf, type Clock } from '../../lambdas/shared/ports.js';
import { localUser } from '../services/approval-api.js';
import { localApprovalKeys } from '../state/approval-keys.js';
import type { LocalStackOptions } from './options.js';

/**
 * Approvals on this machine (local/state/approval-keys.ts): signed links to the page the approval API
 * serves, decisions signed with a local key. The page's URL is known once the API listens, so the
 * links read it through `pageUrl()`.
 */
export function localApprovalSetup(options: Pick<LocalStackOptions, 'stateDir' | 'approvals'>, pageUrl: () => string) {
  const keys = localApprovalKeys(options.stateDir);
  const links: ApprovalLinks = { signer: keys.links, approvers: options.approvals?.approvers ?? [localUser()], get pageUrl() { return pageUrl(); } };
  return {
    links,
    decisionMac: keys.decisions,
    starterMac: keys.starters,
    policy: localApprovalPolicy(options),
  };
}

/**
 * The local deployment's approval policy: the runner's, separation of duties off unless it says so.
 * The approval API's caller decides only as one of the approvers, as on AWS: by default the
 * principal the local API records (this machine's user, the one person of the local API, whose
 * link is named the same).
 */
export function localApprovalPolicy(options: Pick<LocalStackOptions, 'approvals'>): ApprovalPolicy {
  const principal = options.approvals?.principal ?? localUser();
  const policy: ApprovalPolicy = { separationOfDuties: false, ...options.approvals?.policy };
  return { ...policy, approverPrincipals: policy.approverPrincipals ?? { [principal]: [principal] } };
}

/**
 * The IAM principals of the local policy's people (the local user is none): what the local
 * template's approval API names in its resource policy, as the deployment's would
 * (synthesize.ts `people`). Undefined when there are none: the default template serves.
 */
export function templatePeople(policy: ApprovalPolicy): { approverPrincipals?: PrincipalDirectory; starterPrincipals?: PrincipalDirectory } | undefined {
  const arns = (directory: PrincipalDirectory | undefined) => {
    const kept = Object.entries(directory ?? {}).flatMap(([person, patterns]) => {
      const iam = patterns.filter((pattern) => pattern.startsWith('arn:'));
      return iam.length > 0 ? [[person, iam] as const] : [];
    });
    return kept.length > 0 ? Object.fromEntries(kept) : undefined;
  };
  const approverPrincipals = arns(policy.approverPrincipals);
  const starterPrincipals = arns(policy.starterPrincipals);
  if (!approverPrincipals && !starterPrincipals) return undefined;
  return { ...(approverPrincipals && { approverPrincipals }), ...(starterPrincipals && { starterPrincipals }) };
}

/** Node's longest timer (~24.8 days); a later deadline is re-armed when this one fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How often the expiry sweep runs on AWS (infra: once a minute): when a failed one runs again here. */
export const SWEEP_INTERVAL_MS = 60_000;

/**
 * One timer per pending approval, firing at its `decideBy` (per the runtime's clock): `onDue` then
 * expires whatever is due. A decided approval's timer finds nothing to do. `retry` runs `onDue`
 * once more a sweep interval later, as AWS's next sweep would (an expiry whose delivery failed).
 * Timers never keep the process alive by themselves.
 */
export function deadlineTimers(clock: Clock, onDue: () => void) {
  // On the clock's own timers (a test's clock fires them as it moves), else real ones.
  const timers = timersOf(clock);
  const armed = new Map<string, () => void>();
  const arm = (approval: Pick<ApprovalRecord, 'approvalId' | 'decideBy' | 'status'>): void => {
    if (approval.status !== 'pending' || armed.has(approval.approvalId)) return;
    const delay = Math.max(0, Date.parse(approval.decideBy) - clock.now().getTime());
    const cancel = timers.after(Math.min(delay, MAX_TIMER_MS), () => {
      armed.delete(approval.approvalId);
      if (Date.parse(approval.decideBy) > clock.now().getTime()) arm(approval);
      else onDue();
    });
    armed.set(approval.approvalId, cancel);
  };
  const RETRY = 'retry';
  const retry = (): void => {
    if (armed.has(RETRY)) return;
    armed.set(RETRY, timers.after(SWEEP_INTERVAL_MS, () => {
      armed.delete(RETRY);
      onDue();
    }));
  };
  return {
    arm,
    retry,
    clear: () => {
      for (const cancel of armed.values()) cancel();
      armed.clear();
    },
  };
}
