import type { ApprovalRecord, DecisionChannel, RunConfig, RunRecord } from '../records/ledger-records.js';
import type { PrincipalDirectory } from './people.js';

/**
 * The approval policy: set by whoever deploys the agent (construct props, or the local runner),
 * never by the run's input, the model or a tool result. Pure and table-tested, like `decide`.
 */
export interface ApprovalPolicy {
  /** The identity that started a run may not approve its requests. @default true on AWS, false locally */
  readonly separationOfDuties: boolean;
  /** Above this amount (minor units), an approval needs two different approvers. @default none */
  readonly secondApproverAboveMinor?: number;
  /**
   * With separation of duties on, what a run needs whose starter the deployment cannot tell apart
   * from its approvers: no verified starter (a plain `StartExecution`, the schedule, whose input
   * anyone who may start the machine can write) or one recorded under no name the deployment gives
   * a person (approvals/people.ts). `two-approvers`: every approval of such a run needs two different
   * people, so nobody approves alone what they may have started. `any-approver` gives that up.
   * @default 'two-approvers'
   */
  readonly unknownStarter?: 'two-approvers' | 'any-approver';
  /**
   * Who may decide through the signed API, by person (approvals/people.ts): an IAM principal (the
   * local user on loopback) that is nobody here is refused, 403. Always set on AWS (none given:
   * nobody decides by IAM, only by link).
   * @default unset: the transport's caller decides as itself (a process that holds the ledger)
   */
  readonly approverPrincipals?: PrincipalDirectory;
  /** Who may start runs through the runs API, by person: a start by anyone else is refused, 403. @default anyone the transport let through */
  readonly starterPrincipals?: PrincipalDirectory;
}

/** Who decides, as they proved it: a link's approver, an IAM principal, a local user. */
export interface Identity {
  /** The person (approvals/people.ts), or, where the deployment names none, the principal's own identity. */
  readonly id: string;
  readonly via: DecisionChannel;
  /** The principal the transport verified (an IAM ARN, `local:<user>`), before it is resolved to a person. */
  readonly principal?: string;
}

export type Verdict =
  | { action: 'decide' }
  /** The first of two approvals: recorded, the approval stays pending for a second person. */
  | { action: 'first' }
  /**
   * `firstApprovalByCaller`: refused as the second approval of the person who gave the first, the
   * approval still waiting for another: what that person's approval asked again is answered.
   */
  | { action: 'refuse'; status: 403 | 409 | 410; message: string; firstApprovalByCaller?: true };

/** Whether `identity` may decide `approval` now, and what its decision does. */
export function decisionVerdict(input: {
  approval: ApprovalRecord;
  run: Pick<RunRecord, 'runId' | 'startedBy'>;
  identity: Identity;
  decision: 'approve' | 'reject';
  policy: ApprovalPolicy;
  /** When the decision is made (the deps' clock). */
  now: Date;
  /** The run the decider means (a link's claim, or the body's `runId`). */
  runId?: string;
  linkId?: string;
  /**
   * Every name the deployment gives a person (approvals/people.ts `namedPeople`): a starter
   * recorded under another (or none) cannot be told apart from the approvers.
   * @default every recorded starter is a person of its own
   */
  people?: ReadonlySet<string>;
}): Verdict {
  const { approval, run, identity, policy } = input;
  if (input.linkId && approval.usedLinks?.includes(input.linkId)) {
    return { action: 'refuse', status: 409, message: 'link: already used (each link decides once)' };
  }
  if (input.runId !== undefined && input.runId !== approval.runId) {
    return { action: 'refuse', status: 403, message: `runId: approval ${approval.approvalId} belongs to run ${approval.runId}, not ${input.runId}` };
  }
  if (approval.status !== 'pending') {
    return { action: 'refuse', status: 409, message: `approval ${approval.approvalId} is already ${approval.status}${approval.decidedBy ? ` (by ${approval.decidedBy})` : ''}` };
  }
  // Past its deadline an approval is expired, whether or not its expiry has been recorded yet (the
  // sweep runs once a minute on AWS; no engine runs it while a local run is down): a decision then
  // would pay what the run was told to escalate. A link expires at the deadline too (links.ts).
  if (input.now.getTime() >= Date.parse(approval.decideBy)) {
    return { action: 'refuse', status: 410, message: `approval ${approval.approvalId} expired at ${approval.decideBy} (its deadline passed): nobody decides it now` };
  }
  if (policy.separationOfDuties && run.startedBy !== undefined && identity.id === run.startedBy) {
    return { action: 'refuse', status: 403, message: `separation of duties: ${identity.id} started run ${run.runId} and cannot decide its approvals` };
  }
  if (input.decision === 'reject' || !needsTwo(approval, policy, starterUnknown(run, policy, input.people))) return { action: 'decide' };
  if (!approval.firstApproval) return { action: 'first' };
  if (approval.firstApproval.by === identity.id) {
    return { action: 'refuse', status: 403, message: `second approver: ${identity.id} approved already; another person must approve`, firstApprovalByCaller: true };
  }
  return { action: 'decide' };
}

/** Whether an approval needs two people: above the policy's amount, or (`unknownStarter`) for a run whose starter nobody can tell apart. */
export function needsTwo(approval: Pick<ApprovalRecord, 'amount'>, policy: ApprovalPolicy, starterIsUnknown = false): boolean {
  if (starterIsUnknown) return true;
  return policy.secondApproverAboveMinor !== undefined && approval.amount !== undefined && approval.amount.minor > policy.secondApproverAboveMinor;
}

/**
 * Separation of duties compares the decider with the run's starter: it holds only when the
 * starter is someone. A run with no verified starter, or one recorded under no name the
 * deployment gives a person, could have been started by any approver.
 */
export function starterUnknown(run: Pick<RunRecord, 'startedBy'>, policy: ApprovalPolicy, people?: ReadonlySet<string>): boolean {
  if (!policy.separationOfDuties || policy.unknownStarter === 'any-approver') return false;
  if (run.startedBy === undefined) return true;
  return people !== undefined && !people.has(run.startedBy);
}

/** What the state machine allows, read from its definition (lambdas/approvals/limits.ts). */
export interface ExecutionLimits {
  /** The execution's own timeout (`TimeoutSeconds` of the definition). */
  readonly executionTimeoutSeconds?: number;
  /** The shortest task timeout of the states that wait for a decision (the backstop). */
  readonly approvalWaitSeconds?: number;
}

/**
 * Configurations that cannot work, refused at StartRun with the setting named: an approval that
 * would outlive the wait state, or a decision deadline after the execution's own timeout.
 */
export function configProblems(config: Pick<RunConfig, 'approvalTimeoutSeconds' | 'maxWallSeconds'>, limits: ExecutionLimits): string[] {
  const problems: string[] = [];
  const { approvalTimeoutSeconds, maxWallSeconds } = config;
  if (limits.approvalWaitSeconds !== undefined && approvalTimeoutSeconds > limits.approvalWaitSeconds) {
    problems.push(`approvalTimeoutSeconds: ${approvalTimeoutSeconds} s is longer than the state machine waits for a decision (${limits.approvalWaitSeconds} s)`);
  }
  if (limits.executionTimeoutSeconds !== undefined && approvalTimeoutSeconds + maxWallSeconds > limits.executionTimeoutSeconds) {
    problems.push(
      `approvalTimeoutSeconds: a decideBy ${approvalTimeoutSeconds} s after a request made within maxWallSeconds (${maxWallSeconds} s) ` +
        `falls after the execution's own timeout (${limits.executionTimeoutSeconds} s)`,
    );
  }
  return problems;
}

/** The limits a definition (ASL JSON) sets: its `TimeoutSeconds` and its wait-for-token Tasks'. */
export function executionLimits(definition: string): ExecutionLimits {
  type States = Record<string, { Resource?: string; TimeoutSeconds?: number; ItemProcessor?: { States?: States } }>;
  const asl = JSON.parse(definition) as { TimeoutSeconds?: number; States?: States };
  // The states of a Map's iterations too (the tool calls' approvals wait inside the ToolCalls Map).
  const all = (states: States = {}): States[string][] => Object.values(states).flatMap((state) => [state, ...all(state.ItemProcessor?.States)]);
  const waits = all(asl.States)
    .filter((state) => state.Resource?.endsWith('.waitForTaskToken') && state.TimeoutSeconds !== undefined)
    .map((state) => state.TimeoutSeconds!);
  return {
    ...(asl.TimeoutSeconds !== undefined && { executionTimeoutSeconds: asl.TimeoutSeconds }),
    ...(waits.length > 0 && { approvalWaitSeconds: Math.min(...waits) }),
  };
}
