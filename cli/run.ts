import { DescribeExecutionCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { appendFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { z } from 'zod';
import { IsoDate } from '../lambdas/agent/domain.js';
import { loadReport, type RunReport } from '../lambdas/agent/report.js';
import type { ApprovalRecord } from '../lambdas/ledger/records.js';
import { RunId } from '../lambdas/steps/start-run.js';
import { parseOrThrow } from '../lambdas/shared/validation.js';
import { summarizeHistory } from '../local/engine.js';
import { startLocalStack } from '../local/runtime.js';
import { executionFigures, formatReport, type ExecutionFigures } from './format.js';
import { progressPrinter } from './progress.js';
import { loadDay, publishEngine, runningEngine } from './state.js';

export const ApprovalMode = z.enum(['prompt', 'approve', 'reject', 'wait']);

export const RunOptions = z.object({
  date: IsoDate.optional(),
  runId: RunId.optional(),
  failRate: z.coerce.number().min(0).max(0.5),
  seed: z.coerce.number().int().nonnegative(),
  approve: ApprovalMode.optional(),
  approvalTimeout: z.coerce.number().int().positive().max(7 * 24 * 3600).optional(),
  maxSteps: z.coerce.number().int().positive().optional(),
  maxTokens: z.coerce.number().int().positive().optional(),
  maxTokensPerTurn: z.coerce.number().int().positive().optional(),
  maxDollars: z.coerce.number().positive().optional(),
  maxWallSeconds: z.coerce.number().int().positive().optional(),
  onBudgetExceeded: z.enum(['stop', 'ask']).optional(),
  stateDir: z.string().min(1),
  memory: z.boolean(),
  day: z.string().min(1),
  json: z.boolean(),
});
export type RunOptions = z.infer<typeof RunOptions>;

export interface RunOutcome {
  report: RunReport;
  execution: ExecutionFigures;
  action: string;
}

/**
 * `savepoint run`: starts the local stack, starts (or resumes) the run through the Step Functions
 * API, shows progress and approvals as they come, and reports from the ledger at the end.
 */
export async function runCommand(raw: Record<string, unknown>, io: { out: (line: string) => void; err: (line: string) => void; interactive: boolean }) {
  const options = parseOrThrow(RunOptions, raw, 'options');
  const day = loadDay(options.day);
  const runDate = options.date ?? day.date;
  const stateDir = options.memory ? undefined : resolve(options.stateDir);
  const approvalMode = options.approve ?? (io.interactive ? 'prompt' : 'wait');
  // Unattended, nobody will decide: approvals escalate quickly so the run finishes on its own.
  const approvalTimeoutSeconds = options.approvalTimeout ?? (approvalMode === 'wait' && !io.interactive ? 5 : 300);
  const progress = options.json ? io.err : io.out;

  if (stateDir) {
    const engine = runningEngine(stateDir);
    if (engine) throw new Error(`an engine (pid ${engine.pid}) is already running on ${stateDir}; use its commands or pass --state-dir`);
  }
  const logFile = stateDir && join(stateDir, 'savepoint.log');
  const decisions: Promise<void>[] = [];
  let approvalsUrl = '';
  const onApproval = (approval: ApprovalRecord) => {
    progress(`          ⏸  approval ${approval.approvalId}: ${approval.summary} — decide by ${approval.decideBy}`);
    decisions.push(decideApproval(approval, approvalMode, approvalsUrl, progress).catch((error: unknown) => io.err(`approval ${approval.approvalId}: ${String(error)}`)));
  };

  progress(`savepoint: starting the local stack${stateDir ? ` in ${stateDir}` : ' in memory'}…`);
  const stack = await startLocalStack({
    day,
    stateDir,
    failRate: options.failRate,
    seed: options.seed,
    onApproval,
    log: logFile ? (line) => appendFileSync(logFile, `${new Date().toISOString()} ${line}\n`) : undefined,
  });
  approvalsUrl = stack.endpoints.approvals;
  const unpublish = stateDir ? publishEngine(stateDir, { pid: process.pid, startedAt: new Date().toISOString(), endpoints: stack.endpoints }) : () => undefined;
  const interrupted = new Promise<'interrupted'>((resolveInterrupt) => process.once('SIGINT', () => resolveInterrupt('interrupted')));
  try {
    const runId = options.runId ?? `refunds-${runDate}`;
    // Budgets given on the command line override the agent's defaults (RunConfig); the run
    // record keeps the figures it ran with.
    const budgets = {
      maxSteps: options.maxSteps,
      maxTokens: options.maxTokens,
      maxTokensPerTurn: options.maxTokensPerTurn,
      maxDollars: options.maxDollars,
      maxWallSeconds: options.maxWallSeconds,
      onBudgetExceeded: options.onBudgetExceeded,
    };
    const config = { approvalTimeoutSeconds, ...Object.fromEntries(Object.entries(budgets).filter(([, value]) => value !== undefined)) };
    const started = Date.now();
    const print = progressPrinter(progress, started);
    const stop = stack.engine.on((event) => print(event));
    const { executionArn } = await stack.sfn.send(
      new StartExecutionCommand({
        stateMachineArn: stack.stateMachineArn,
        name: `${runId}-${started.toString(36)}`,
        input: JSON.stringify({ runId, runDate, config }),
      }),
    );
    progress(`savepoint: run ${runId} — execution ${executionArn}`);
    progress(`savepoint: approvals ${approvalMode === 'prompt' ? 'are asked here' : approvalMode === 'wait' ? `wait ${approvalTimeoutSeconds} s for \`savepoint approve <id>\`, then escalate` : `are ${approvalMode}d automatically`}`);
    const finished = await Promise.race([stack.engine.waitForExecution(executionArn!), interrupted]);
    stop();
    if (finished === 'interrupted') {
      progress(`savepoint: interrupted — the run is saved; resume it with \`savepoint run --run-id ${runId}\``);
    }
    await Promise.allSettled(decisions);
    const execution = await stack.sfn.send(new DescribeExecutionCommand({ executionArn }));
    const figures = executionFigures(executionArn!, execution.status ?? 'UNKNOWN', summarizeHistory(stack.engine.getExecutionHistory(executionArn!)));
    const report = await loadReport(stack.ledger, runId, new Date());
    if (!report) throw new Error(`run ${runId} did not start: ${execution.error ?? ''} ${execution.cause ?? ''}`.trim());
    const action = execution.status === 'SUCCEEDED' && report.finishedAt && Date.parse(report.finishedAt) < started ? 'already finished' : 'ran';
    if (action === 'already finished') progress(`savepoint: run ${runId} had already finished; nothing to do (pass --run-id to start another)`);
    return { report, execution: figures, action } satisfies RunOutcome;
  } finally {
    unpublish();
    await stack.close();
  }
}

/** Decides one approval the way the run was told to, through the approval API (the real route). */
async function decideApproval(approval: ApprovalRecord, mode: z.infer<typeof ApprovalMode>, approvalsUrl: string, progress: (line: string) => void) {
  let decision: 'approve' | 'reject' | undefined = mode === 'approve' || mode === 'reject' ? mode : undefined;
  let reason = mode === 'prompt' ? undefined : `decided by --approve ${mode}`;
  if (mode === 'prompt') {
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    try {
      const answer = (await rl.question(`  approve ${approval.summary}? [y/N] `)).trim().toLowerCase();
      decision = answer === 'y' || answer === 'yes' ? 'approve' : 'reject';
      reason = decision === 'reject' ? (await rl.question('  reason: ')).trim() || 'rejected at the terminal' : 'approved at the terminal';
    } finally {
      rl.close();
    }
  }
  if (!decision) return;
  const response = await fetch(`${approvalsUrl}/${approval.approvalId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ decision, reason, decidedBy: 'savepoint-cli' }),
  });
  const body = (await response.json()) as { status?: string; message?: string };
  progress(`          ✓  approval ${approval.approvalId}: ${response.ok ? body.status : `${response.status} ${body.message}`}`);
}

/** 0 succeeded · 1 failed · 3 stopped by a guard (a budget, a loop, a kill). */
export function exitCodeOf(report: RunReport): number {
  if (report.status === 'succeeded') return 0;
  return report.status === 'stopped' || report.status === 'killed' ? 3 : 1;
}

export { formatReport };
