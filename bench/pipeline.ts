import { refundReconciler, startRefundWorld, type RefundWorld } from '../agents/refund-reconciler/agent.dev.js';
import type { DevWorldOptions } from '../lambdas/define.js';
import type { Day } from '../agents/refund-reconciler/domain.js';
import type { BreakerPolicy } from '../lambdas/guards/breaker.js';
import type { CfnTemplateJson } from '../local/template/asl.js';
import { summarizeHistory, type HistoryEvent, type StateSummary } from '../local/engine/local-engine.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../local/runtime/local-stack.js';
import { madeTurn } from './call-model-turns.js';
import { threadCpuClock } from './stats.js';

/**
 * The real local pipeline as the benchmark runs it: the synthesized definition on the in-process
 * engine, the Lambda handlers, the ledger (embedded unless asked for dynalite), the simulated model and payments provider over
 * HTTP. Two settings differ from `savepoint run`, both so that N steps at p stay N steps at p:
 * budgets large enough for 200 steps, and circuit breakers that never trip (independent transient
 * failures are not an outage; the breaker is measured by its own tests).
 */
export const BENCH_BREAKER: BreakerPolicy = { failures: 1_000_000, windowMs: 1_000, openMs: 1, probeLeaseMs: 1 };
export const BENCH_CONFIG = { maxSteps: 1_000, maxTokens: 10_000_000, maxDollars: 1_000, approvalTimeoutSeconds: 5 };
/** The benchmark's deployment lets its runs ask for BENCH_CONFIG's budgets (above the agent's own: lambdas/runs/budget-caps.ts). */
const BENCH_MAX_BUDGETS = { maxSteps: BENCH_CONFIG.maxSteps, maxTokens: BENCH_CONFIG.maxTokens, maxDollars: BENCH_CONFIG.maxDollars };

export type BenchStack = LocalStack<RefundWorld>;

/**
 * The refund reconciler on the local stack, its provider serving `day` (closed with the stack).
 *
 * The stack starts the world itself, as `savepoint run` does: only the stack knows the order —
 * make the state directory, open the ledger, then start the world against what the ledger
 * remembers doing (a journal that lost records is refused). A world started here, before the
 * stack, opened `<stateDir>/payments.jsonl` in a directory that did not exist yet, so every crash
 * run's engine process died at start; the benchmark only hands over the day.
 */
export function benchStack(
  options: { day: Day; template: CfnTemplateJson; failRate: number; seed: number; worldInMemory?: boolean } & Partial<LocalStackOptions<RefundWorld>>,
): Promise<BenchStack> {
  const { day, worldInMemory, ...rest } = options;
  // The provider keeps its journal in the state directory, unless asked to stay in memory (so that it can be reset between runs).
  const world = (worldOptions: DevWorldOptions) => startRefundWorld({ ...worldOptions, day, ...(worldInMemory && { stateDir: undefined }) });
  const agent = { ...refundReconciler, dev: { ...refundReconciler.dev, world } };
  return startLocalStack<RefundWorld>({ agent, breaker: BENCH_BREAKER, maxBudgets: BENCH_MAX_BUDGETS, ...rest });
}

/**
 * Lambda invocations of the agent steps (CallModel, CallTool): what "step executions" counts, less
 * `decisions`, the invocations of CallModel that decided and called no model (decisionOnlyCounter).
 */
export function stepExecutions(states: Record<string, Pick<StateSummary, 'invocations'>>, decisions: number): number {
  return (states['CallModel']?.invocations ?? 0) + (states['CallTool']?.invocations ?? 0) - decisions;
}

/**
 * Counts CallModel's invocations that made no agent step. CallModel makes the harness's decision
 * before each model call (what BudgetCheck did between turns until 0.7.0), and an entry whose
 * decision ends the run, or sends it to a compaction or a handoff, calls no model: orchestration,
 * as BudgetCheck's invocations were, not one of the N steps. Such an entry's Task succeeds with no
 * turn (call-model-turns.ts). CallModel never runs inside the Map, so an entry's attempts are the
 * TaskScheduled events between its entry and its exit. Fed the history's events in order; `feed`
 * returns the invocations of an entry found to have made no step (0 otherwise).
 */
export function decisionOnlyCounter(): { feed(event: HistoryEvent & { executionArn?: string }): number } {
  const entries = new Map<string, { attempts: number; turn: boolean }>();
  return {
    feed(event) {
      const execution = event.executionArn ?? '';
      const entered = event.stateEnteredEventDetails;
      if (entered) {
        if (entered.name === 'CallModel') entries.set(execution, { attempts: 0, turn: true });
        else entries.delete(execution);
        return 0;
      }
      const entry = entries.get(execution);
      if (!entry) return 0;
      if (event.type === 'TaskScheduled') entry.attempts += 1;
      if (event.taskSucceededEventDetails) entry.turn = madeTurn(event.taskSucceededEventDetails.output);
      if (event.stateExitedEventDetails?.name !== 'CallModel') return 0;
      entries.delete(execution);
      return entry.turn ? 0 : entry.attempts;
    },
  };
}

/** decisionOnlyCounter over a whole history. */
export function decisionOnlyInvocations(events: readonly HistoryEvent[]): number {
  const counter = decisionOnlyCounter();
  return events.reduce((sum, event) => sum + counter.feed(event), 0);
}

/** Every Lambda invocation, the orchestration steps (StartRun, BudgetCheck, Finalize …) included. */
export function allInvocations(states: Record<string, Pick<StateSummary, 'invocations'>>): number {
  return Object.values(states).reduce((sum, state) => sum + state.invocations, 0);
}

export interface Attempt {
  status: string;
  executionArn: string;
  /** Agent steps the run recorded (model turns + tool calls). */
  steps: number;
  executions: number;
  invocations: number;
  wallMs: number;
  /** CPU time (user + system) the process spent during the run: on a shared machine, steadier than wall time. */
  cpuMs: number;
  /** …and the main thread alone (bench/stats.ts threadCpuMs), undefined where Node cannot say. */
  threadCpuMs: number | undefined;
  /** What the provider created during the attempt: refunds, reviews, reports. */
  sideEffects: number;
  /** Refund requests the provider paid more than once. */
  duplicatePayments: number;
}

/**
 * One execution of a fresh run in a fresh world: the provider is reset to `day` as it was, so
 * every run (and every restart attempt) faces the same N steps. `ended`: called as the execution
 * ends, before this function reads the run back (a meter read there counts the steps' requests
 * alone, not this read's).
 */
export async function runOnce(stack: BenchStack, runId: string, day: Day, ended?: () => void): Promise<Attempt> {
  stack.world.payments.resetWorld(day);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const threadCpu = threadCpuClock();
  const { executionArn } = stack.engine.startExecution({ name: runId, input: { runId, input: { date: day.date }, config: BENCH_CONFIG } });
  const done = await stack.engine.waitForExecution(executionArn);
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const threadCpuMs = threadCpu();
  ended?.();
  const history = stack.engine.getExecutionHistory(executionArn);
  const states = summarizeHistory(history);
  const run = await stack.ledger.getRun(runId);
  const paid = stack.world.payments.refunds().map((refund) => refund.refundRequestId);
  return {
    status: done.status,
    executionArn,
    steps: run?.steps ?? 0,
    executions: stepExecutions(states, decisionOnlyInvocations(history)),
    invocations: allInvocations(states),
    wallMs,
    cpuMs,
    threadCpuMs,
    sideEffects: paid.length + stack.world.payments.reviews().length + stack.world.payments.reports().length,
    duplicatePayments: paid.length - new Set(paid).size,
  };
}

export interface RestartRun {
  executions: number;
  invocations: number;
  attempts: number;
  /** Refunds, reviews and reports made by the attempts that were thrown away. */
  thrownAway: number;
  duplicatePayments: number;
}

/**
 * One completed run of the restart-from-scratch baseline (a stack on the variant without Retry,
 * recovery off): a fresh run from step 1 after every failure, until one attempt succeeds.
 */
export async function restartRun(stack: BenchStack, day: Day, label: string): Promise<RestartRun> {
  const run: RestartRun = { executions: 0, invocations: 0, attempts: 0, thrownAway: 0, duplicatePayments: 0 };
  for (;;) {
    const attempt = await runOnce(stack, `${label}-a${run.attempts + 1}`, day);
    run.attempts += 1;
    run.executions += attempt.executions;
    run.invocations += attempt.invocations;
    run.duplicatePayments += attempt.duplicatePayments;
    if (attempt.status === 'SUCCEEDED') return run;
    run.thrownAway += attempt.sideEffects;
  }
}
