import * as z from 'zod';
import type { Ledger } from '../ledger/ledger.js';
import { type ApprovalRecord } from '../records/ledger-records.js';
import { type DecisionMac } from './decision-mac.js';
import type { LinkSigner } from './links.js';
import type { ApprovalNotifier, ApprovalRequested } from './notify.js';
import { type ApprovalPolicy, type Identity } from './policy.js';
import type { Clock, TaskCallbacks } from '../shared/ports.js';
/**
 * Approvals pause the execution on a task token. The token never leaves the ledger: a person sees
 * and decides an opaque approval id, and the decision is recorded once (pending → decided, a
 * conditional write) before it is delivered to Step Functions. Delivery is repeatable: a decision
 * that reached a dead execution is delivered again when the run asks again.
 */
export declare const Decision: z.ZodObject<{
    decision: z.ZodEnum<{
        approve: "approve";
        reject: "reject";
    }>;
    reason: z.ZodOptional<z.ZodString>;
    runId: z.ZodOptional<z.ZodString>;
    link: z.ZodOptional<z.ZodString>;
}, z.core.$strict>;
export type Decision = z.infer<typeof Decision>;
/** Signed links for people: who gets one, and where the approval page is served. */
export interface ApprovalLinks {
    readonly signer: LinkSigner;
    /** The page's URL without the approval id, e.g. `https://…/v1/decide`. */
    readonly pageUrl: string;
    /** Who is sent a link (e-mail addresses, chat handles): the identities their decisions are recorded under. */
    readonly approvers: readonly string[];
}
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
export declare const DEFAULT_POLICY: ApprovalPolicy;
/** Whether an approval is this deployment's to decide. */
export declare function ours(deps: Pick<ApprovalDeps, 'agentName'>, approval: ApprovalRecord): boolean;
/**
 * Sends a recorded decision to the waiting execution, after adding its wait to the run's
 * approval-wait counter (once per approval): waiting for a person is not work. `false` when no
 * execution waits on the token. The token is read from the ledger (only the approval functions'
 * roles may) unless the caller holds it (RequestApproval is handed it by Step Functions).
 */
export declare function deliverDecision(deps: Pick<ApprovalDeps, 'ledger' | 'callbacks'>, approval: ApprovalRecord, taskToken?: string): Promise<boolean>;
/**
 * Adds a decided approval's wait to its run, once (the step key is the approval's): only the part
 * of it no other wait of the run already covers, so that the run's waiting time is the union of
 * its waits, not their sum (two approvals of one turn wait side by side). Approvals of the same
 * turn are the only ones that can overlap it: a turn's calls all end before the next turn.
 */
export declare function countWait(ledger: Ledger, approval: ApprovalRecord): Promise<void>;
/**
 * The part of `approval`'s wait not covered by the waits of the approvals decided before it (an
 * order every counter agrees on: by decision time, then by key). Each approval adds what it waited
 * beyond the earlier ones, so the counts add up to the union of the waits, whatever order they are
 * counted in.
 */
export declare function uncoveredWaitMs(approval: ApprovalRecord, others: readonly ApprovalRecord[]): number;
/** One signed link per approver, valid until the approval's deadline. */
export declare function signedLinks(links: ApprovalLinks | undefined, approval: Pick<ApprovalRecord, 'approvalId' | 'runId' | 'decideBy'>): Promise<ApprovalRequested['links']>;
export type DecideResult = {
    ok: true;
    approval: ApprovalRecord;
    delivered: boolean;
    waitingForSecond?: boolean;
} | {
    ok: false;
    status: 401 | 403 | 404 | 409 | 410;
    message: string;
    approval?: ApprovalRecord;
};
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
export declare function createDecideApproval(deps: ApprovalDeps): (approvalId: string, body: unknown, auth?: DecisionAuth) => Promise<DecideResult>;
export declare function formatCents(cents: number): string;
export declare function assertApprovalId(approvalId: string | undefined): string;
