import type { AgentDefinition } from '../define.js';
import type { ApprovalLedger, FleetLedger, RunLedger, TurnLedger } from '../ledger/ledger.js';
import type { ApprovalRecord, RunRecord } from '../records/ledger-records.js';
import type { Clock } from '../shared/ports.js';
import { createRecoverRun, type EndedExecution, type ExecutionStarter, type RecoveryPolicy } from './recover-run.js';

/**
 * The sweeper: what the event-driven recovery missed. Recovery normally starts from the EventBridge
 * rule on a FAILED or TIMED_OUT execution; if that event never arrived, or its Lambda failed past
 * its retries (the message then waits in the failed-events queue), the run stays `running` with no
 * execution driving it. Every 15 minutes the sweeper lists the agent's runs still marked `running`,
 * asks Step Functions how their execution ended, and resumes them through the very same
 * `createRecoverRun` — same verdict, same bound, same idempotency key (`<arn>@<stopDate>`), so a
 * sweep racing the event-driven recovery starts the same named execution, not a second one.
 *
 *   run running, execution RUNNING                 → left alone
 *   run running, execution FAILED / TIMED_OUT      → recovered (or given up past the bound)
 *   run running, execution gone (history expired)  → recovered as LOST
 *   run running, execution ABORTED / SUCCEEDED     → reported (a kill the stop rule missed; an
 *                                                    execution that ended without finishing the run)
 *
 * It also reports pending approvals whose execution is gone (nobody would ever receive the
 * decision) and how long the oldest approval has waited: the metrics behind two alarms.
 */

/** How an execution stands, as the sweeper needs it (`DescribeExecution`); `undefined`: no such execution. */
export interface ExecutionDescription {
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'PENDING_REDRIVE';
  /** ISO time the execution ended. */
  stopDate?: string;
  error?: string;
  cause?: string;
}

export interface ExecutionLookup {
  describe(executionArn: string): Promise<ExecutionDescription | undefined>;
}

export interface SweepDeps {
  /** Whose runs are swept; none: every run of the ledger (the stack's shared sweeper, infra/control-plane.ts). */
  agent?: Pick<AgentDefinition, 'name'>;
  ledger: Pick<RunLedger, 'listRunningRuns' | 'getRun' | 'recordRecovery' | 'finishRun'> & Pick<ApprovalLedger, 'listPendingApprovals'> & Pick<TurnLedger, 'listConversation'> & Pick<FleetLedger, 'returnFleetLease'>;
  executions: ExecutionLookup;
  starter: ExecutionStarter;
  clock: Clock;
  policy?: RecoveryPolicy;
  /**
   * An execution that ended less than this long ago is left to the event-driven recovery (which
   * normally answers within seconds). @default 5 minutes
   */
  graceMs?: number;
  /** The most runs read per sweep. @default 1000 */
  maxRuns?: number;
}

export interface SweepResult {
  /** Runs of this agent marked `running` that were looked at. */
  checked: number;
  recovered: { runId: string; executionArn: string; reason: string }[];
  gaveUp: { runId: string; reason: string }[];
  /** Runs that need a person: their execution ended in a way recovery does not answer. */
  reported: { runId: string; reason: string }[];
  /** Runs that could not be swept (the error is in the log; the next sweep tries again). */
  failed: { runId: string; error: string }[];
  approvalsWaiting: number;
  /** Seconds the oldest pending approval has waited (0 when none waits). */
  oldestApprovalAgeSeconds: number;
  /** Pending approvals whose execution is gone: a decision would reach nobody. */
  orphanedApprovals: { approvalId: string; runId: string; reason: string }[];
  /** One line for the log: what was done and what needs a person (run ids and reasons, nothing else). */
  summary: string;
}

const GRACE_MS = 5 * 60_000;

export function createSweep(deps: SweepDeps) {
  const recover = createRecoverRun({ ledger: deps.ledger, starter: deps.starter, clock: deps.clock, policy: deps.policy });
  const graceMs = deps.graceMs ?? GRACE_MS;
  return async (): Promise<SweepResult> => {
    const now = deps.clock.now();
    const result: SweepResult = {
      checked: 0,
      recovered: [],
      gaveUp: [],
      reported: [],
      failed: [],
      approvalsWaiting: 0,
      oldestApprovalAgeSeconds: 0,
      orphanedApprovals: [],
      summary: '',
    };
    // A run whose record fails verification cannot be trusted, nor recovered: it needs a person
    // (named in `failed`, which the RunsNeedingAttention alarm counts), and the others are swept.
    const listed = await deps.ledger.listRunningRuns({ onDamaged: (runId, error) => result.failed.push({ runId, error: `${error.name}: ${error.message}` }) });
    const runs = listed.filter((run) => ours(deps, run.agent)).slice(0, deps.maxRuns ?? 1000);
    for (const run of runs) {
      result.checked += 1;
      try {
        const execution = await deps.executions.describe(run.executionArn);
        const ended = endedExecution(run, execution);
        if (ended === 'running') continue;
        if ('report' in ended) {
          result.reported.push({ runId: run.runId, reason: ended.report });
          continue;
        }
        if (now.getTime() - Date.parse(ended.endedAt) < graceMs) continue;
        const outcome = await recover(ended);
        if (outcome.action === 'recovered') result.recovered.push({ runId: run.runId, executionArn: outcome.executionArn, reason: outcome.reason });
        else if (outcome.action === 'gave-up') result.gaveUp.push({ runId: run.runId, reason: outcome.reason });
      } catch (error) {
        result.failed.push({ runId: run.runId, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      }
    }

    const pending = (await deps.ledger.listPendingApprovals()).filter((approval) => ours(deps, approval.agent));
    result.approvalsWaiting = pending.length;
    for (const approval of pending) {
      const age = Math.max(0, Math.floor((now.getTime() - Date.parse(approval.createdAt)) / 1000));
      result.oldestApprovalAgeSeconds = Math.max(result.oldestApprovalAgeSeconds, age);
      try {
        const reason = await orphaned(deps, approval);
        if (reason) result.orphanedApprovals.push({ approvalId: approval.approvalId, runId: approval.runId, reason });
      } catch (error) {
        result.failed.push({ runId: approval.runId, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      }
    }
    result.summary = summarize(result);
    return result;
  };
}

/** Agents may share a table: each sweeps its own runs (records of older versions name no agent), the stack's sweeper all. */
function ours(deps: Pick<SweepDeps, 'agent'>, agent: string | undefined): boolean {
  return deps.agent === undefined || agent === undefined || agent === deps.agent.name;
}

/** What recovery needs to know about the execution of a running run, or why it is not recovery's to answer. */
export function endedExecution(run: RunRecord, execution: ExecutionDescription | undefined): EndedExecution | 'running' | { report: string } {
  const base = { runId: run.runId, executionArn: run.executionArn };
  // The history of an execution is kept 90 days; the run record's last update is a stable ending
  // (a second sweep builds the same recovery key).
  if (!execution) return { ...base, status: 'LOST', endedAt: run.updatedAt, error: 'ExecutionDoesNotExist' };
  switch (execution.status) {
    case 'RUNNING':
    case 'PENDING_REDRIVE':
      return 'running';
    case 'FAILED':
    case 'TIMED_OUT':
      return {
        ...base,
        status: execution.status,
        endedAt: execution.stopDate ?? run.updatedAt,
        ...(execution.error ? { error: execution.error } : {}),
        ...(execution.cause ? { cause: execution.cause } : {}),
      };
    case 'ABORTED':
      return { report: `execution ${shortName(run.executionArn)} was stopped but the run is still marked running (the kill was not recorded): run \`savepoint kill ${run.runId}\`` };
    case 'SUCCEEDED':
      return { report: `execution ${shortName(run.executionArn)} succeeded but the run is still marked running: resume it with \`savepoint resume ${run.runId}\`` };
  }
}

async function orphaned(deps: SweepDeps, approval: ApprovalRecord): Promise<string | undefined> {
  const run = await deps.ledger.getRun(approval.runId);
  if (!run) return 'its run does not exist';
  if (run.status !== 'running') return `its run is ${run.status}`;
  const execution = await deps.executions.describe(run.executionArn);
  if (!execution) return `execution ${shortName(run.executionArn)} does not exist`;
  if (execution.status !== 'RUNNING') return `execution ${shortName(run.executionArn)} is ${execution.status}`;
  return undefined;
}

function shortName(executionArn: string): string {
  return executionArn.split(':').pop() ?? executionArn;
}

function summarize(result: SweepResult): string {
  const list = (items: { runId: string; reason?: string; error?: string }[]) => items.map((item) => `${item.runId}${item.reason ?? item.error ? `: ${item.reason ?? item.error}` : ''}`).join('; ');
  const parts = [`checked ${result.checked} running runs`, `recovered ${result.recovered.length}`, `gave up ${result.gaveUp.length}`, `${result.approvalsWaiting} approvals waiting`];
  if (result.gaveUp.length > 0) parts.push(`given up: ${list(result.gaveUp)}`);
  if (result.reported.length > 0) parts.push(`needs a person: ${list(result.reported)}`);
  if (result.failed.length > 0) parts.push(`not swept: ${list(result.failed)}`);
  if (result.orphanedApprovals.length > 0) parts.push(`orphaned approvals: ${result.orphanedApprovals.map((a) => `${a.approvalId} (run ${a.runId}: ${a.reason})`).join('; ')}`);
  return parts.join(', ').slice(0, 4_000);
}
