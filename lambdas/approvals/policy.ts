import type { ApprovalRecord, DecisionChannel, RunConfig, RunRecord } from '../records/ledger-records.js';

/**
 * The approval policy: set by whoever deploys the agent (construct props, or the local runner),
 * never by the run's input, the model or a tool result. Pure and table-tested, like `decide`.
 */
export interface ApprovalPolicy {
  /** The identity that started a run may not approve its requests. @default true on AWS, false locally */
  readonly separationOfDuties: boolean;
  /** Above this amount (minor units), an approval needs two different approvers. @default none */
  readonly secondApproverAboveMinor?: number;
}

/** Who decides, as they proved it: a link's approver, an IAM principal, a local user. */
export interface Identity {
  readonly id: string;
  readonly via: DecisionChannel;
}

export type Verdict =
  | { action: 'decide' }
  /** The first of two approvals: recorded, the approval stays pending for a second person. */
  | { action: 'first' }
  | { action: 'refuse'; status: 403 | 409; message: string };

/** Whether `identity` may decide `approval` now, and what its decision does. */
export function decisionVerdict(input: {
  approval: ApprovalRecord;
  run: Pick<RunRecord, 'runId' | 'startedBy'>;
  identity: Identity;
  decision: 'approve' | 'reject';
  policy: ApprovalPolicy;
  /** The run the decider means (a link's claim, or the body's `runId`). */
  runId?: string;
  linkId?: string;
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
  if (policy.separationOfDuties && run.startedBy !== undefined && identity.id === run.startedBy) {
    return { action: 'refuse', status: 403, message: `separation of duties: ${identity.id} started run ${run.runId} and cannot decide its approvals` };
  }
  if (input.decision === 'reject' || !needsTwo(approval, policy)) return { action: 'decide' };
  if (!approval.firstApproval) return { action: 'first' };
  if (approval.firstApproval.by === identity.id) {
    return { action: 'refuse', status: 403, message: `second approver: ${identity.id} approved already; another person must approve` };
  }
  return { action: 'decide' };
}

export function needsTwo(approval: Pick<ApprovalRecord, 'amount'>, policy: ApprovalPolicy): boolean {
  return policy.secondApproverAboveMinor !== undefined && approval.amount !== undefined && approval.amount.minor > policy.secondApproverAboveMinor;
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
