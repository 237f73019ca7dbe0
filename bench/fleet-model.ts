/**
 * The fleet at a scale the real handlers cannot reach on this machine (10,000 runs × 100 steps is
 * a million steps): a discrete-event model of each run's AWS calls, on simulated time.
 *
 * What it models, and where each part comes from:
 * - a run's work is the **plan** of one run the real handlers made in the twin (`planOf`: the
 *   synthesized definition on the engine, the warm-up run of bench/fleet.ts): its Lambda
 *   invocations in order, the tool calls of a turn side by side (the ToolCalls Map), which of them
 *   wait for the model, its ledger calls per invocation, and every Step Functions API call its
 *   steps made (counted at the twin's endpoint), the successors' starts of a handoff included;
 * - Step Functions' per-account API quotas: the twin's own token buckets (local/aws/
 *   sfn-api-throttling.ts) on the simulated clock; the driver offers starts at a rate and backs a
 *   throttled start off with full jitter, as bench/fleet.ts does;
 * - Lambda's account concurrency (1,000 by default): an invocation over it is throttled
 *   (`Lambda.TooManyRequestsException`) and retried as the definition's Retry field says (read from
 *   the synthesized ASL: interval, backoff rate, max delay, full jitter, MaxAttempts); a Task whose
 *   retries run out fails its run: counted lost (the model does not resume it);
 * - latencies: a model call's and a ledger call's, log-normal as in bench/fleet.ts; a Lambda holds
 *   its concurrency for exactly its ledger and model waits. State transitions take no time;
 * - with `budget`, the agent's fleet budget (issue 34 item 4): each model call reserved first by the
 *   ledger's rules, within its run's lease or by a lease written to the day's counter item, one
 *   DynamoDB partition of ~1,000 write units a second (bench/fleet-budget.ts FleetBudgetCounter):
 *   its writes, throttles and failed conditions, and the most it ever leased out against its limit.
 *
 * What it does not model: the handlers themselves (they are the plan's), Lambda's cold starts, and
 * failures other than throttling. bench/fleet.ts `--agree` runs the real handlers and this model
 * side by side on the same parameters and compares their figures.
 */
import type { HistoryEvent } from '../local/engine/local-engine.js';
import { SfnQuotas } from '../local/aws/sfn-api-throttling.js';
import { LAMBDA_ACCOUNT_CONCURRENCY } from '../lambdas/shared/limits.js';
import { logNormal } from './fleet-sim.js';
import { FleetBudgetCounter, type BudgetCounterFigures } from './fleet-budget.js';
import { madeTurn } from './call-model-turns.js';

/** One Lambda invocation of a plan. */
export interface PlannedTask {
  readonly state: string;
  /** It waits for the model (CallModel, Compact). */
  readonly model: boolean;
}

/** A run's work: phases in order, each one invocation or a turn's tool calls side by side. */
export interface RunPlan {
  readonly phases: readonly (readonly PlannedTask[])[];
  /** Ledger calls an invocation makes, on average (each waits a ledger latency). */
  readonly ledgerCallsPerInvocation: number;
  /** The Step Functions calls the run's steps made (not its own start), by API. */
  readonly stepCalls: Readonly<Record<string, number>>;
}

/** The definition's retrier of Lambda's own faults, as the synthesized ASL states it. */
export interface LambdaRetry {
  readonly intervalSeconds: number;
  readonly backoffRate: number;
  readonly maxDelaySeconds: number;
  readonly maxAttempts: number;
}

const MODEL_STATES = new Set(['CallModel', 'Compact']);

/** The plan of a run from its executions' histories, in order (a handoff's successor after its predecessor). */
export function planOf(histories: readonly (readonly HistoryEvent[])[], ledgerCallsPerInvocation: number, stepCalls: Record<string, number>): RunPlan {
  const phases: PlannedTask[][] = [];
  for (const events of histories) {
    const byId = new Map(events.map((event) => [event.id, event]));
    const stateOf = (event: HistoryEvent): string | undefined => {
      let at: HistoryEvent | undefined = event;
      while (at && !at.stateEnteredEventDetails) at = byId.get(at.previousEventId);
      return at?.stateEnteredEventDetails?.name;
    };
    let map: PlannedTask[] | undefined;
    const scheduled = new Map<number, { state: string; model: boolean }>();
    for (const event of events) {
      if (event.type === 'MapStateEntered') phases.push((map = []));
      else if (event.type === 'MapStateExited') map = undefined;
      else if (event.type === 'TaskScheduled') {
        const state = stateOf(event)!;
        const task = { state, model: MODEL_STATES.has(state) };
        scheduled.set(event.id, task);
        if (map) map.push(task);
        else phases.push([task]);
      } else if (event.type === 'TaskSucceeded') {
        // CallModel decides before it calls: a decision that called no model (a stop before the
        // call, a compaction's, a handoff's) answers without a turn, and waits for no model.
        let at: HistoryEvent | undefined = event;
        while (at && at.type !== 'TaskScheduled') at = byId.get(at.previousEventId);
        const task = at && scheduled.get(at.id);
        if (task?.state === 'CallModel' && !madeTurn(event.taskSucceededEventDetails?.output)) task.model = false;
      }
    }
  }
  return { phases: phases.filter((phase) => phase.length > 0), ledgerCallsPerInvocation, stepCalls };
}

/** The Lambda retrier of a synthesized definition (the one that lists Lambda.TooManyRequestsException). */
export function lambdaRetryOf(definition: { States: Record<string, { Retry?: { ErrorEquals: string[]; IntervalSeconds?: number; BackoffRate?: number; MaxDelaySeconds?: number; MaxAttempts?: number }[] }> }): LambdaRetry {
  for (const state of Object.values(definition.States)) {
    const retrier = state.Retry?.find((r) => r.ErrorEquals.includes('Lambda.TooManyRequestsException'));
    if (retrier) return { intervalSeconds: retrier.IntervalSeconds ?? 1, backoffRate: retrier.BackoffRate ?? 2, maxDelaySeconds: retrier.MaxDelaySeconds ?? Infinity, maxAttempts: retrier.MaxAttempts ?? 3 };
  }
  throw new Error('the definition retries no Lambda.TooManyRequestsException');
}

export interface FleetModelOptions {
  readonly runs: number;
  /** Starts offered per simulated second. */
  readonly offered: number;
  readonly plan: RunPlan;
  readonly lambdaRetry: LambdaRetry;
  readonly random: () => number;
  readonly modelLatency: { median: number; p95: number; max: number };
  readonly ledgerLatency: { median: number; p95: number; max: number };
  /** @default LAMBDA_ACCOUNT_CONCURRENCY (1,000) */
  readonly lambdaConcurrency?: number;
  /** The agent's fleet budget its model calls reserve from (micro-dollars a call reserves and then costs). @default none */
  readonly budget?: { readonly dollarsPerDay: number; readonly leaseMicros: number; readonly reservationMicros: number; readonly costMicros: number };
}

export interface FleetModelReport {
  readonly runs: number;
  readonly completed: number;
  readonly lost: number;
  /** Each run's start (its StartExecution admitted), simulated ms from the first offer. */
  readonly startedAt: number[];
  readonly endedAt: number[];
  /** Step Functions calls admitted, by API (the starts included). */
  readonly sfnCalls: Record<string, number>;
  /** Step Functions calls throttled, by API (the driver's start attempts included). */
  readonly sfnThrottled: Record<string, number>;
  readonly lambda: { invocations: number; throttles: number; peakConcurrent: number; limit: number; retriesExhausted: number };
  /** The fleet budget's counter (with `budget`): its writes, throttles, failed conditions, spend and peak lease. */
  readonly budget?: BudgetCounterFigures;
  /** Runs stopped because the fleet budget was spent (not lost: stopped as a budget stops them). */
  readonly budgetStopped: number;
  readonly simulatedMs: number;
}

/** A min-heap of timed events (ties in insertion order). */
class Agenda {
  readonly #items: { at: number; seq: number; run: () => void }[] = [];
  #seq = 0;
  now = 0;

  at(at: number, run: () => void): void {
    const items = this.#items;
    items.push({ at, seq: this.#seq++, run });
    for (let i = items.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!before(items[i]!, items[parent]!)) break;
      [items[parent], items[i]] = [items[i]!, items[parent]!];
      i = parent;
    }
  }

  /** Runs every event in time order until none is left. */
  drain(): void {
    const items = this.#items;
    while (items.length > 0) {
      const top = items[0]!;
      const last = items.pop()!;
      if (items.length > 0) {
        items[0] = last;
        for (let i = 0; ; ) {
          const left = 2 * i + 1;
          const right = left + 1;
          let first = i;
          if (left < items.length && before(items[left]!, items[first]!)) first = left;
          if (right < items.length && before(items[right]!, items[first]!)) first = right;
          if (first === i) break;
          [items[first], items[i]] = [items[i]!, items[first]!];
          i = first;
        }
      }
      this.now = top.at;
      top.run();
    }
  }
}
const before = (a: { at: number; seq: number }, b: { at: number; seq: number }) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

/** Runs the fleet model: `runs` runs offered at `offered` a second, each doing `plan`. */
export function runFleetModel(options: FleetModelOptions): FleetModelReport {
  const agenda = new Agenda();
  const quotas = new SfnQuotas(() => agenda.now);
  const modelLatency = logNormal(options.random, options.modelLatency);
  const ledgerLatency = logNormal(options.random, options.ledgerLatency);
  const limit = options.lambdaConcurrency ?? LAMBDA_ACCOUNT_CONCURRENCY;
  const { plan, lambdaRetry, random } = options;
  const lambda = { invocations: 0, throttles: 0, peakConcurrent: 0, limit, retriesExhausted: 0 };
  let running = 0;
  const startedAt: number[] = [];
  const endedAt: number[] = [];
  let lost = 0;
  let budgetStopped = 0;
  // The budget's counter on the agenda's clock (seconds there, ms here).
  const counter = options.budget && new FleetBudgetCounter({ ...options.budget, random, ledgerLatency: () => ledgerLatency() / 1000 }, { now: () => agenda.now / 1000, at: (seconds, action) => agenda.at(seconds * 1000, action) });
  const modelCalls = new Map<number, number>();
  // The run's own Step Functions calls, spread over its phases (they are a handful at most).
  const callsAt = new Map<number, string[]>();
  const stepCalls = Object.entries(plan.stepCalls).flatMap(([api, n]) => Array.from({ length: n }, () => api));
  stepCalls.forEach((api, i) => {
    const phase = Math.floor(((i + 1) * plan.phases.length) / (stepCalls.length + 1));
    callsAt.set(phase, [...(callsAt.get(phase) ?? []), api]);
  });

  /** One invocation: admitted when the account has room, else retried as the definition says. */
  const invoke = (task: PlannedTask, done: (ok: boolean) => void, attempt = 0): void => {
    if (running >= limit) {
      lambda.throttles += 1;
      if (attempt >= lambdaRetry.maxAttempts) {
        lambda.retriesExhausted += 1;
        return done(false);
      }
      // Full jitter: a uniform wait up to the retrier's backoff for this attempt.
      const ceiling = Math.min(lambdaRetry.maxDelaySeconds, lambdaRetry.intervalSeconds * lambdaRetry.backoffRate ** attempt) * 1000;
      agenda.at(agenda.now + random() * ceiling, () => invoke(task, done, attempt + 1));
      return;
    }
    running += 1;
    lambda.invocations += 1;
    lambda.peakConcurrent = Math.max(lambda.peakConcurrent, running);
    let busy = task.model ? modelLatency() : 0;
    const ledgerCalls = Math.floor(plan.ledgerCallsPerInvocation) + (random() < plan.ledgerCallsPerInvocation % 1 ? 1 : 0);
    for (let i = 0; i < ledgerCalls; i++) busy += ledgerLatency();
    agenda.at(agenda.now + busy, () => {
      running -= 1;
      done(true);
    });
  };

  const runPhase = (index: number, runId: number): void => {
    if (index === plan.phases.length) {
      endedAt[runId] = agenda.now;
      counter?.finish(runId);
      return;
    }
    for (const api of callsAt.get(index) ?? []) {
      try {
        quotas.take(api);
      } catch {
        // Counted (quotas.throttled()); a step's SDK would retry it: the model goes on.
      }
    }
    const phase = plan.phases[index]!;
    let left = phase.length;
    let failed = false;
    const finished = (ok: boolean) => {
      if (!ok && !failed) {
        failed = true;
        lost += 1;
      }
      if (--left === 0 && !failed) runPhase(index + 1, runId);
    };
    for (const task of phase) {
      if (!(counter && task.model)) {
        invoke(task, finished);
        continue;
      }
      // A model call is reserved within the fleet budget before it is sent, and settled when answered.
      const turn = (modelCalls.get(runId) ?? 0) + 1;
      modelCalls.set(runId, turn);
      counter.reserve(runId, turn, (reserved) => {
        if (!reserved) {
          budgetStopped += 1;
          counter.finish(runId);
          return;
        }
        invoke(task, (ok) => {
          if (ok) counter.settle(runId);
          finished(ok);
        });
      });
    }
  };

  // The driver: one start offered every 1/offered s; a throttled start backs off with full jitter
  // (100 ms base, 20 s cap, 12 attempts), as bench/fleet.ts's driver does.
  const offer = (runId: number, attempt: number): void => {
    try {
      quotas.take('StartExecution');
    } catch {
      if (attempt >= 12) {
        lost += 1;
        return;
      }
      agenda.at(agenda.now + random() * Math.min(20_000, 100 * 2 ** attempt), () => offer(runId, attempt + 1));
      return;
    }
    startedAt[runId] = agenda.now;
    runPhase(0, runId);
  };
  for (let runId = 0; runId < options.runs; runId++) agenda.at((runId * 1000) / options.offered, () => offer(runId, 0));
  agenda.drain();

  return {
    runs: options.runs,
    completed: endedAt.filter((at) => at !== undefined).length,
    lost,
    startedAt: startedAt.filter((at) => at !== undefined),
    endedAt: endedAt.filter((at) => at !== undefined),
    sfnCalls: quotas.admitted(),
    sfnThrottled: quotas.throttled(),
    lambda,
    ...(counter && { budget: counter.figures() }),
    budgetStopped,
    simulatedMs: agenda.now,
  };
}

/**
 * How long starts were sustained: the start window's whole seconds (from the first start), each
 * second's starts, and the least of them. `perSecond` ≥ 100 over `seconds` ≥ 60 is issue 34's bar.
 */
export function sustainedStarts(startedAt: readonly number[]): { perSecond: number; seconds: number } {
  if (startedAt.length < 2) return { perSecond: 0, seconds: 0 };
  const first = Math.min(...startedAt);
  const perSecond = new Map<number, number>();
  for (const at of startedAt) perSecond.set(Math.floor((at - first) / 1000), (perSecond.get(Math.floor((at - first) / 1000)) ?? 0) + 1);
  // The last second is partial (the starts stop within it): only whole seconds count.
  const seconds = Math.floor((Math.max(...startedAt) - first) / 1000);
  let least = Infinity;
  for (let s = 0; s < seconds; s++) least = Math.min(least, perSecond.get(s) ?? 0);
  return { perSecond: seconds > 0 ? least : 0, seconds };
}
