import type { ApprovalLinks } from '../../lambdas/approvals/decision.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import { type Clock } from '../../lambdas/shared/ports.js';
import type { LocalStackOptions } from './options.js';
/**
 * Approvals on this machine (local/state/approval-keys.ts): signed links to the page the approval API
 * serves, decisions signed with a local key. The page's URL is known once the API listens, so the
 * links read it through `pageUrl()`.
 */
export declare function localApprovalSetup(options: Pick<LocalStackOptions, 'stateDir' | 'approvals'>, pageUrl: () => string): {
    links: ApprovalLinks;
    decisionMac: import("../../lambdas/approvals/decision-mac.js").DecisionMac;
    starterMac: import("../../lambdas/approvals/decision-mac.js").DecisionMac;
    policy: import("../../lambdas/approvals/policy.js").ApprovalPolicy;
};
/**
 * One timer per pending approval, firing at its `decideBy` (per the runtime's clock): `onDue` then
 * expires whatever is due. A decided approval's timer finds nothing to do. Timers never keep the
 * process alive by themselves.
 */
export declare function deadlineTimers(clock: Clock, onDue: () => void): {
    arm: (approval: Pick<ApprovalRecord, 'approvalId' | 'decideBy' | 'status'>) => void;
    clear: () => void;
};
