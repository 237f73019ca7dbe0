/**
 * `<benchmark> --json | node --import tsx bench/check.ts <mode>`: fails (exit 1, naming each
 * problem) when a benchmark's figures say it stopped measuring — a lost run, a duplicate payment, a
 * missing, null or NaN figure (JSON writes NaN and ±Infinity as null), a scenario with no completed
 * run — or that it got slower: every speed figure is held to a bound as a ratio to a floor measured
 * in the same process (SPEED_LIMITS), so a loaded machine, which slows the floor alike, does not
 * fail it, and a regression does. CI (.ci/run) runs a short form of every mode of bench/main.ts
 * through it: a benchmark that silently prints zeros is worse than none.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { pairedRatio } from './stats.js';
import { NESTED_STACK_OPERATION_RESOURCE_QUOTA, STACK_OUTPUT_QUOTA } from '../lambdas/shared/limits.js';

/** A figure: a finite number (zod refuses NaN, ±Infinity and null). */
const figure = z.number();
const count = z.number().int().nonnegative();
const lost = count.refine((value) => value === 0, { error: (issue) => `${String(issue.input)} run(s) lost` });
const none = (what: string) => count.refine((value) => value === 0, { error: (issue) => `${String(issue.input)} ${what}` });

/** bench/stats.ts's Estimate: the interval is undefined (null) only for a single run. */
const Estimate = z
  .object({ runs: z.number().int().min(1, { error: 'no completed run' }), mean: figure, sd: figure.nullable(), halfWidth: figure.nullable(), relative: figure.nullable() })
  .refine((estimate) => estimate.runs <= 1 || (estimate.sd !== null && estimate.halfWidth !== null && estimate.relative !== null), {
    error: 'the confidence interval of two or more runs is missing',
  });

const Scenario = z.object({ executions: Estimate, waste: figure, duplicatePayments: none('duplicate payment(s)'), runsLost: lost });

const Waste = z
  .object({
    options: z.object({ crashRuns: count }),
    results: z
      .array(
        z.object({
          n: count,
          theory: z.object({ checkpoint: figure, restart: figure }),
          checkpoint: Scenario.extend({ invocations: figure, msPerStep: figure }),
          restart: Scenario.extend({ invocations: figure, attemptsPerRun: figure, sideEffectsThrownAway: figure }),
          crashes: Scenario.extend({ engines: count, crashesSurvived: z.object({ injected: count, killedFromOutside: count }) }).optional(),
        }),
      )
      .min(1),
  })
  .superRefine((report, ctx) => {
    report.results.forEach((result, index) => {
      if (report.options.crashRuns > 0 && !result.crashes) ctx.addIssue({ code: 'custom', path: ['results', index, 'crashes'], message: 'crash runs were asked for and not reported' });
    });
  });

/**
 * Issue 38: the DynamoDB ledger's requests per agent step (each a round trip of the step on AWS),
 * on the dynalite row: ≤ 2. Counts, the same on any machine at p = 0 (a turn's parallel calls write
 * no run item, and in one instance take turns on the run item they check: no conflict): a plain
 * bound, not a ratio, held just above what the code makes so that a request added to every write
 * call (+0.15), turn (+0.40) or read call (+0.45) fails. A model turn reads, writes its reservation
 * (which counts the last turn's calls) and records its turn (3 requests); a call is handed what its
 * turn's write left and reads nothing (lambdas/steps/handed-step.ts): a read records, a put of its
 * own item (1), a write claims with ConditionChecks of the run and kill items and completes (2). The
 * target is met on the 100-step day (1.82); CI's 20-step form measures more (the run's start and end
 * over fewer steps, and 8 turns to 12 calls).
 */
export const DYNAMODB_REQUESTS_PER_STEP = {
  bound: 2.2,
  target: 2,
  measured: "CI's 20-step form 2.10 (the 100-step day 1.82), its write units 6.05 a step (5.1 before: a write's claim is a transaction with ConditionChecks of the run and kill items, billed twice; 9.25 while a read's record was one too) since a call is handed its turn's state and reads nothing (2026-12-06); 2.70 (the 100-step day 2.54) since a call counts no step of its own, its write units 5.1 (8.1 before); 2.70 since the decision after a final answer is made from what its turn's write saw, not a read (2026-12-05); 2.75 since Finalize and a fork's tools read no run of their own and the benchmark meters before its own read of the run; 2.90 since 0.8.0 (no BudgetCheck read at an execution's start), 2.95 in 0.7.0 (3.30 while BudgetCheck read between turns)",
} as const;

const OverheadRow = z.object({
  target: z.string(),
  msPerStep: figure,
  cpuMsPerStep: figure,
  ratioToFloor: figure.optional(),
  cpuRatioToFloor: figure.positive().optional(),
  threadCpuRatioToFloor: figure.positive().optional(),
  ledgerCallsPerStep: figure.optional(),
  transitionsPerStep: figure.positive(),
  lambda: z.object({ invocationsPerStep: figure.positive(), billedMsPerStep: figure.positive(), gbSecondsPerStep: figure.positive() }).optional(),
  dynamodb: z.object({
    requestsPerStep: figure.positive().max(DYNAMODB_REQUESTS_PER_STEP.bound, {
      error: (issue) => `${issue.input} DynamoDB requests per agent step: over the bound of ${DYNAMODB_REQUESTS_PER_STEP.bound} (target ${DYNAMODB_REQUESTS_PER_STEP.target}: each request is a round trip of the step on AWS)`,
    }),
    readUnitsPerStep: figure.positive(),
    writeUnitsPerStep: figure.positive(),
    unmetered: none('DynamoDB request(s) not metered'),
  }).optional(),
  // The twin's IAM was on (decisions were made) and refused nothing.
  iam: z.object({ allowed: count.min(1, { error: 'no IAM decision: enforcement was off' }), denied: none('IAM call(s) denied') }).optional(),
  peakRssMb: figure.positive(),
  runs: count.min(1),
});
const Money = z.object({ dollars: figure.nonnegative() });

/**
 * Issue 38's DynamoDB target on the sample day (`--overhead --ledgers dynalite --steps 100 --runs 1`):
 * at most DYNAMODB_REQUESTS_PER_STEP.target requests a step over the nightly day's length, where
 * CI's 20-step form (held at its bound above) weighs the run's start and end over fewer steps. The
 * requests are counts, the same at any load: a plain bound, held at the target itself.
 */
const DynamoDbDay = z.object({
  steps: count.min(100, { error: (issue) => `${String(issue.input)} steps: the sample day's target is held over 100 steps or more (--steps 100)` }),
  results: z.array(z.object({ target: z.string(), dynamodb: z.object({ requestsPerStep: figure.positive() }).optional() }).passthrough()).refine(
    (rows) => rows.some((row) => row.dynamodb),
    { message: 'no row measured DynamoDB (--ledgers dynalite)' },
  ).superRefine((rows, context) => {
    for (const row of rows) {
      const requests = row.dynamodb?.requestsPerStep;
      if (requests !== undefined && requests > DYNAMODB_REQUESTS_PER_STEP.target)
        context.addIssue({ code: 'custom', message: `${requests} DynamoDB requests per agent step on the sample day (${row.target}): over the target of ${DYNAMODB_REQUESTS_PER_STEP.target}` });
    }
  }),
});

const Overhead = z.object({
  results: z
    .array(OverheadRow)
    .min(2)
    // The DynamoDB row says what it asked of DynamoDB: its requests per step are held above.
    .refine((rows) => rows.every((row) => row.target !== 'DynamoDB ledger on dynalite' || row.dynamodb), { message: 'the DynamoDB row has no DynamoDB figures (requests, read and write units per step)' }),
  cliRuns: z.array(z.object({ ledger: z.string(), wallMs: figure, peakRssMb: figure.positive() })).min(1),
  aws: z.object({
    // Issue 38: ≤ 2 state transitions (what Step Functions bills) per agent step, the run's start
    // and end included (CI's 20-step day: 1.95). Exact counts, the same on any machine: plain bounds.
    transitionsPerStep: figure.positive().max(2, { error: (issue) => `${issue.input} state transitions per agent step: over issue 38's target of 2 (the run's start and end included)` }),
    // And as the loop's shape, which a workload's calls per turn do not move: one transition a tool
    // call and at most three a model turn (CallModel, which decides before it calls, its Choice, the
    // Map; the final answer's turn has no Map): ≤ 2 a step once turns average one call, as both days' do.
    loopTransitions: z.object({
      perStep: figure.positive(),
      perToolCall: figure.positive().max(1, { error: (issue) => `${issue.input} state transitions per tool call: over the bound of 1 (a state added to each call's iteration is billed on every call)` }),
      perTurn: figure.positive().max(3, { error: (issue) => `${issue.input} state transitions per model turn: over the bound of 3 (a state added to the turn is billed on every turn)` }),
    }),
    per100StepRun: z.object({
      stepFunctions: Money.extend({ transitions: figure.positive() }),
      lambdaRequests: Money.extend({ invocations: figure.positive() }),
      lambdaDuration: Money.extend({ gbSeconds: figure.positive() }),
      dynamodb: Money.extend({ readUnits: figure.positive(), writeUnits: figure.positive() }).nullable(),
      dollars: figure.positive(),
    }),
    lambdaDollarsPerSecondWaiting: figure.positive(),
  }),
  // The turn's calls ran side by side: under two tool latencies, not one per call.
  parallelTurn: z
    .object({ calls: count.min(2), toolLatencyMs: figure.positive(), turnMs: figure.positive(), mostInFlight: count.min(1) })
    .refine((turn) => turn.turnMs < 2 * turn.toolLatencyMs, { message: 'the parallel turn took as long as its calls one after another' }),
});

const Cost = z.object({
  turns: count.min(1),
  identicalDecisions: z.literal(true),
  uncached: z.object({ dollars: figure.positive() }),
  cached: z.object({ dollars: figure.positive() }),
  ratio: figure,
  target: figure,
  otherModels: z.array(z.object({ spec: z.string(), uncached: figure, cached: figure })).min(1),
});

/**
 * Long runs (bench/longruns.ts), the run without compaction and the one with it: both succeeded,
 * each handed off to a new execution at least once (its history bounded: more than one execution),
 * and the compacting run compacted (and its largest prompt came out smaller for it).
 */
const Longruns = z
  .object({
    results: z
      .array(
        z.object({
          compaction: z.object({ window: count.min(1) }).nullable(),
          status: z.literal('succeeded', { error: (issue) => `the run ended ${String(issue.input)}, not succeeded` }),
          steps: count.min(1),
          inputTokens: z.object({ lastTurn: figure, maxTurn: figure, total: figure }),
          compactions: count,
          eventsPerExecution: z.array(count.min(1)).min(2, { error: (issue) => `no hand-off: the run was one execution of ${String((issue.input as number[])[0])} events` }),
        }),
      )
      .length(2),
  })
  .superRefine((report, context) => {
    const plain = report.results.findIndex((result) => result.compaction === null);
    const compacting = report.results.findIndex((result) => result.compaction !== null);
    if (plain === -1 || compacting === -1) return context.addIssue({ code: 'custom', path: ['results'], message: 'not one run without compaction and one with it' });
    const [without, withCompaction] = [report.results[plain]!, report.results[compacting]!];
    if (withCompaction.compactions === 0) context.addIssue({ code: 'custom', path: ['results', compacting, 'compactions'], message: 'the run with compaction never compacted' });
    if (without.compactions > 0) context.addIssue({ code: 'custom', path: ['results', plain, 'compactions'], message: `the run without compaction compacted ${without.compactions} time(s)` });
    if (withCompaction.compactions > 0 && withCompaction.inputTokens.maxTurn >= without.inputTokens.maxTurn) {
      context.addIssue({ code: 'custom', path: ['results', compacting, 'inputTokens', 'maxTurn'], message: `compaction left the largest prompt at ${withCompaction.inputTokens.maxTurn} input tokens, not under the ${without.inputTokens.maxTurn} without it` });
    }
  });

/** Each ledger alone (bench/ledger.ts), with the floor measured after each of its repetitions in the same process. */
const Ledger = z.object({
  rows: z
    .array(
      z.object({
        ledger: z.string(),
        msPerStep: figure.positive(),
        cpuMsPerStep: figure.positive(),
        msPerCall: figure.positive(),
        min: figure,
        max: figure,
        floor: z.object({ msPerStep: figure.positive(), cpuMsPerStep: figure.positive() }),
        ratioToFloor: figure.positive(),
        cpuRatioToFloor: figure.positive(),
      }),
    )
    .length(3),
});

/**
 * The fleet on a simulated clock (bench/fleet.ts): every run completed, none lost, a start rate, no
 * Step Functions call on an agent step's hot path, and the throttling it met accounted for.
 */
const lambdaFigures = z.object({ throttles: count, peakConcurrent: count.min(1), limit: count.min(1) });
const sustained = z.object({ perSecond: count, seconds: count });
const Fleet = z
  .object({
    engine: z.literal('handlers'),
    runs: count.min(1),
    completed: count,
    lost,
    steps: count.min(1),
    startsPerSecond: figure.positive().nullable(),
    sustainedStartsBound: z.object({ perSecond: figure.positive(), byApi: z.record(z.string(), figure.positive()) }),
    stepsPerSecond: figure.positive(),
    throttled: z.object({ attempts: count, absorbedByStartBackoff: count, stepCallsThrottled: none('throttled Step Functions call(s) of a step'), failedCalls: none('throttled call(s) failed after the retries'), quotasOn: z.literal(true, { error: 'the API quotas were not on' }) }),
    // A run's steps make no Step Functions call (issue 34: the history is bounded, never read); a handoff's start is the one left.
    sfnApiCallsPerStep: figure.nonnegative().max(0.005, { error: (issue) => `${String(issue.input)} Step Functions calls per agent step (the hot path makes none; a handoff starts one successor in thousands of steps)` }),
    sfnCallsPerRun: z.record(z.string(), figure.nonnegative()),
    controlPlaneThrottles: count,
    lambda: lambdaFigures,
    sustainedStarts: sustained,
    aws: z.object({ perRun: z.object({ dollars: figure.positive() }) }),
  })
  .refine((report) => report.completed === report.runs, { error: 'not every run completed' })
  .refine((report) => report.runs < 2 || report.startsPerSecond !== null, { error: 'no start rate for two or more runs' });

/**
 * Issue 34's bar for the fleet, on simulated figures (deterministic for a seed, so held absolutely):
 * starts sustained at 100 a second or more for 60 simulated seconds or more, no run lost, no
 * control-plane call throttled, with Lambda's account concurrency in force.
 */
export const FLEET_TARGET = { startsPerSecond: 100, sustainedSeconds: 60 } as const;

/** The fleet model (bench/fleet-model.ts, `--fleet <n> --model`): issue 34's bar, held. */
const FleetModel = z
  .object({
    engine: z.literal('model'),
    runs: count.min(1),
    completed: count,
    lost,
    startsPerSecond: figure.positive().nullable(),
    sustainedStarts: z.object({
      perSecond: count.min(FLEET_TARGET.startsPerSecond, { error: (issue) => `starts sustained at ${String(issue.input)}/s, under ${FLEET_TARGET.startsPerSecond}/s` }),
      seconds: count.min(FLEET_TARGET.sustainedSeconds, { error: (issue) => `starts sustained for ${String(issue.input)} simulated s, under ${FLEET_TARGET.sustainedSeconds} s` }),
    }),
    sfnCallsPerRun: z.record(z.string(), figure.nonnegative()),
    controlPlaneThrottles: none('control-plane call(s) throttled'),
    lambda: lambdaFigures.extend({ retriesExhausted: none('Lambda invocation(s) out of retries') }),
    /**
     * The fleet budget's day counter (issue 34 item 4): one item, one partition's ~1,000 write units
     * a second. A write to it throttled is the start of a storm (each throttle retried is another
     * write); leasing or spending past its limit is an overshoot. Failed conditions (writers racing
     * on the item) are figures, not failures: each is retried, and counted in its writes.
     */
    fleetBudget: z.object({
      counterWrites: count.min(1, { error: 'no write to the fleet budget\'s counter: the model did not reserve from it' }),
      peakWritesPerSecond: count,
      failedConditions: count,
      throttled: none('write(s) to the fleet budget\'s counter throttled'),
      overshootMicros: none('micro-dollars leased or spent over the fleet budget\'s limit'),
      leasedPeakMicros: count,
      spentMicros: count,
      limitMicros: count.min(1),
      runsStopped: count,
    }),
  })
  .refine((report) => report.completed === report.runs, { error: 'not every run completed' })
  .refine((report) => report.fleetBudget.leasedPeakMicros <= report.fleetBudget.limitMicros && report.fleetBudget.spentMicros <= report.fleetBudget.limitMicros, { error: 'the fleet budget leased or spent past its limit' });

/** `--fleet <n> --agree`: the real handlers and the model, and whether they agree on what the model stands for. */
const FleetAgreement = z
  .object({
    handlers: z.object({ runs: count.min(1), lost, sfnCallsPerRun: z.record(z.string(), figure.nonnegative()), controlPlaneThrottles: count }),
    model: z.object({ runs: count.min(1), lost, sfnCallsPerRun: z.record(z.string(), figure.nonnegative()), controlPlaneThrottles: count }),
    agreement: z.object({
      sfnCallsPerRun: z.literal(true, { error: 'the model and the handlers made different Step Functions calls per run' }),
      controlPlaneThrottles: z.literal(true, { error: 'the model and the handlers met different control-plane throttles' }),
      lost: z.literal(true, { error: 'the model and the handlers lost different numbers of runs' }),
    }),
    agree: z.literal(true),
  })
  .refine((report) => report.handlers.runs === report.model.runs, { error: 'the model ran another number of runs' });

/**
 * Issue 21's cold-start targets (bench/cold-start.ts reports against them): every function's
 * bundle — what a cold start loads — at most 1 MB, and the model and tool steps' import at most
 * 150 ms of CPU.
 */
export const COLD_START_TARGETS = { bundleBytes: 1_000_000, importCpuMs: 150, importCpuSteps: ['call-model', 'call-tool'] } as const;

/** The cold start of every function (bench/cold-start.ts): each figure there, no dev file, the bundles under their target (import CPU: SPEED_LIMITS). */
const ColdStart = z
  .object({
    node: z.string(),
    functions: z
      .array(
        z.object({
          step: z.string().min(1),
          bundleBytes: figure.positive().max(COLD_START_TARGETS.bundleBytes, { error: (issue) => `a ${String(issue.input)}-byte bundle, over the ${COLD_START_TARGETS.bundleBytes}-byte target` }),
          mapBytes: figure.positive({ error: 'no source map beside the bundle' }),
          files: z.array(z.string()).min(1),
          devSources: z.array(z.string()).max(0, { error: (issue) => `dev-only sources in the bundle: ${(issue.input as string[]).join(', ')}` }),
          importCpuMs: figure.positive(),
          startCpuMs: figure.positive(),
          importCpuRatio: figure.positive(),
          lazyChunks: z.array(z.object({ file: z.string(), holds: z.string(), bytes: figure.positive(), importCpuMs: figure.positive().optional() })),
        }),
      )
      .min(1),
  })
  .superRefine((report, ctx) => {
    for (const step of COLD_START_TARGETS.importCpuSteps) {
      if (!report.functions.some((fn) => fn.step === step)) ctx.addIssue({ code: 'custom', path: ['functions'], message: `no figures for ${step}` });
    }
  });

/** A command's process (bench/growth.ts): its CPU, and its Node start's in the same process (bench/peak-rss.mjs). */
const CommandProcess = z.object({ wallMs: figure.positive(), cpuMs: figure.positive(), startCpuMs: figure.positive(), peakRssMb: figure.positive() });
/**
 * Each pair's CPU ms, the command against one run and against many, measured side by side (three
 * or more: a median); and the command's CPU on the small directory over its own process's start
 * (held: SPEED_LIMITS.cli).
 */
const OneAndMany = z.object({ oneRun: CommandProcess, manyRuns: CommandProcess, cpuMsPairs: z.array(z.tuple([figure.positive(), figure.positive()])).min(3), cpuRatioToStart: figure.positive() });

/** A reading command answered by a running serve (bench/growth.ts servedCommands): its best figures and the median of its CPU over its own Node start. */
const ServedCommand = CommandProcess.extend({ cpuRatioToStart: figure.positive() });

/**
 * Engine heap a finished run may leave (bench/growth.ts, KB). Once the embedded ledger noted where
 * each finished run's lines are (~0.7 KB at 10 steps) and the simulated model's prompt cache kept a
 * prefix hash a run (~0.1 KB): 0.72–0.98 measured in 10 runs of CI's form at load 11–31, every run
 * reconciling the same day; since the ledger lets go of finished runs entirely (ledger.cold/):
 * 0.16–0.49, none of it the ledger's (heap diff). With one retainer found and
 * removed put back, it measured: the IAM memo 4.04, the AbortSignal.any WeakRefs 1.98 (each fails
 * this), the fork lineages 1.17 (under it: test/unit/fork.test.ts holds that one); all of them:
 * 5.1–5.3. Since each run reconciles a day of its own (its refunds and reviews new business-key
 * effects, half of them approved): 4.28 in two runs while the embedded ledger kept every `EFFECT#`
 * partition in memory (this fails it); 0.48–1.2 in 11 runs once it let go of them (1.2 in a CI
 * run on a fresh clone), ~0.25 of that the prompt cache until it holds 4,096 prefixes, the rest
 * V8's own (code, transition arrays). So the bound is 1.8: every retainer above still fails it,
 * and a run of these workloads has half again its highest figure as room.
 */
export const GROWTH_HEAP_PER_RUN_KB = 1.8;

/**
 * How much more a reading command may cost against many runs than against one (bench/growth.ts):
 * flat, up to the noise of a shared machine. Before the index, `status` against 150 runs took 2.9 s
 * and 262 MB against 0.43 s and 72 MB; `runs` and `approvals` loaded the whole ledger too.
 */
// CPU at 1.4, on the median of the pairs' ratios (bench/stats.ts pairedRatio): a process's CPU moves
// by a fifth on a shared machine, and CI's short form, comparing the best of 2 reps run one side
// after the other, measured the same code at 0.79–1.20 and once `status` at 1.40; the whole-ledger
// load it guards against took 1.61–1.68 (`runs`, `approvals`). Memory, the steadier figure: the
// best of the reps, at 1.15. Not all noise: `approvals` took 1.23× (median of 9 pairs; one CI 1.41)
// while each command walked the state directory three times (7 ms each at 150 runs, the cold
// store's files), 1.06× once it walked it once (cli/owner.ts checkStateDirOnce), and 1.19–1.21× in
// CI until the commands ended their process once written (V8's first full collection ran after the
// output against 150 runs): 0.95–0.97× (2026-12-03, load 1.6–2.5).
export const GROWTH_TOLERANCE = { cpu: 1.4, memory: 1.15 } as const;
/**
 * `verify --all` parses and seal-checks every line, and its peak RSS follows the garbage that
 * leaves (V8 grows its young generation under the allocation rate; what it retains after a full
 * GC is flat: 18 MB at a 20 MB log). Before it streamed, it took 1.49× the memory of one run at 150
 * runs of 10 steps, 2.28× at 40 steps; streaming, 1.25–1.31× and 1.3–1.36×.
 */
export const VERIFY_MEMORY_TOLERANCE = 1.4;
/** The commands held flat in time and memory; `verify --all` checks every line, so only its memory is. */
const FLAT_COMMANDS = ['status', 'runs', 'approvals'] as const;

/**
 * A long-lived state directory (bench/growth.ts): figures for every part, and growth bounded — the
 * reading commands against many runs cost about what they cost against one, `verify --all` streams
 * (its memory bounded), and a finished run leaves next to nothing in the engine's heap
 * (GROWTH_HEAP_PER_RUN_KB; before: ~120 KB, then 5.1–5.3 KB measured as now).
 */
const Growth = z
  .object({
    options: z.object({ runs: count.min(2), steps: count.min(1) }),
    engine: z.object({ heapAfterWarmMb: figure.positive(), heapAtEndMb: figure.positive(), heapPerRunKb: figure.max(GROWTH_HEAP_PER_RUN_KB, { error: (issue) => `${String(issue.input)} KB of engine heap per finished run (bounded: at most ${GROWTH_HEAP_PER_RUN_KB})` }) }),
    stateDir: z.object({ bytesPerRun: figure.positive() }),
    status: OneAndMany,
    runs: OneAndMany,
    approvals: OneAndMany,
    verifyAll: OneAndMany,
    /** The three reading commands while `savepoint serve` answers on the directory of one run (held: SPEED_LIMITS.cliServed). */
    served: z.object({ status: ServedCommand, runs: ServedCommand, approvals: ServedCommand }),
  })
  .superRefine((report, context) => {
    const over = (name: string, many: number, one: number, tolerance: number) =>
      context.addIssue({ code: 'custom', path: [name, 'manyRuns', 'peakRssMb'], message: `${name} against ${report.options.runs} runs takes ${many} MB against ${one} MB with one: more than ${tolerance} times` });
    for (const name of FLAT_COMMANDS) {
      const { oneRun, manyRuns, cpuMsPairs } = report[name];
      const cpu = pairedRatio(cpuMsPairs);
      if (cpu > GROWTH_TOLERANCE.cpu) {
        context.addIssue({ code: 'custom', path: [name, 'cpuMsPairs'], message: `${name} against ${report.options.runs} runs takes ${cpu.toFixed(2)} times the CPU it takes against one (the median of ${cpuMsPairs.length} pairs ${JSON.stringify(cpuMsPairs)}): more than ${GROWTH_TOLERANCE.cpu} times` });
      }
      if (manyRuns.peakRssMb > oneRun.peakRssMb * GROWTH_TOLERANCE.memory) over(name, manyRuns.peakRssMb, oneRun.peakRssMb, GROWTH_TOLERANCE.memory);
    }
    const { oneRun, manyRuns } = report.verifyAll;
    if (manyRuns.peakRssMb > oneRun.peakRssMb * VERIFY_MEMORY_TOLERANCE) over('verifyAll', manyRuns.peakRssMb, oneRun.peakRssMb, VERIFY_MEMORY_TOLERANCE);
  });

/** Replay (bench/replay.ts): every replay identical, none with a live call, each figure measured. */
const Replay = z.object({
  steps: count.min(1),
  runMs: figure.positive(),
  replays: z.object({ coldMs: figure.positive(), warmMedianMs: figure.positive().nullable(), samplesMs: z.array(figure.positive()).min(1), setupMs: z.array(figure.nonnegative()).min(1) }),
  share: z.object({ cold: figure.positive(), warm: figure.positive().nullable() }),
  // Held (SPEED_LIMITS): the warm share needs a second replay (CI's `--replays 6`: the median of five warm ones).
  cpu: z.object({ runMs: figure.positive(), coldMs: figure.positive(), warmMedianMs: figure.positive(), share: z.object({ cold: figure.positive(), warm: figure.positive() }) }),
  identical: z.literal(true, { error: 'a replay diverged from the run it replayed' }),
  liveCalls: none('live call(s) made by a replay'),
  // Held (SPEED_LIMITS): the median of the replay processes' shares.
  cli: z.object({ runCpuMs: figure.positive(), runCpuMsSamples: z.array(figure.positive()).min(3), replayCpuMs: z.array(figure.positive()).min(1), shares: z.array(figure.positive()).min(1), share: figure.positive() }),
});

/**
 * Issue 38's test-suite target: `npm test` in 300 s of CPU on this 2-core machine, as a ratio to
 * bench/suite-floor.mjs's batch of 5 processes at the machine's usual speed here. That speed moves
 * by a tenth and more within an hour, load or not: the batch measured 541 ms (eight batches at load
 * 0.1, 2026-12-06 12:50 UTC), 530, 571 and 618 ms in three fresh-clone CIs (12:52–13:13 UTC, whose
 * suites took 304, 337 and 354 s: the same code) and 600 ms (eight batches at load 1, 13:13 UTC).
 * `floorCpuMs` is the median of those five sittings.
 */
export const TEST_SUITE_TARGET = { cpuSeconds: 300, floorCpuMs: 571 } as const;
const Suite = z.object({
  command: z.literal('npm test', { error: (issue) => `the suite benchmark ran ${JSON.stringify(issue.input)}, not the README's test command` }),
  cpuSeconds: z.object({ user: figure.positive(), system: figure.nonnegative(), total: figure.positive() }),
  wallSeconds: figure.positive(),
  floor: z.object({ cpuMs: figure.positive(), beforeMs: z.array(figure.positive()).min(1), afterMs: z.array(figure.positive()).min(1) }),
  ratioToFloor: figure.positive(),
  load: z.tuple([figure.nonnegative(), figure.nonnegative()]),
});

/**
 * Following a run's events (bench/events.ts): both rows measured, every subscriber's delivery
 * counted, and the resume after at least 50 random disconnects losing and repeating nothing
 * (exact, on any machine). The CPU the subscribers add is held by SPEED_LIMITS.events.
 */
const Events = z.object({
  steps: count.min(10),
  subscribers: count.min(1),
  eventsPerRun: count.min(1, { error: 'no event was derived' }),
  rows: z.array(z.object({ subscribers: count, msPerStep: figure.positive(), cpuMsPerStep: figure.positive() })).length(2),
  addedCpuShare: figure,
  delivery: z.object({ samples: count.min(1, { error: 'no delivery was timed' }), medianMs: figure.nonnegative(), p99Ms: figure.nonnegative(), stepMs: figure.positive() }),
  resume: z.object({
    disconnects: count.min(50, { error: (issue) => `${String(issue.input)} disconnects: fewer than the 50 a resume is held to` }),
    runs: count.min(1),
    events: count.min(1),
    lost: none('event(s) lost on a resume'),
    duplicated: none('event(s) delivered twice on a resume'),
  }),
});

/**
 * The live OpenTelemetry export on and off (bench/tracing.ts): the four rows measured, and the
 * collector received at least one request per step with the export on (a span or metrics request
 * per turn and per call: fewer says the export stopped sending).
 */
const Tracing = z
  .object({
    steps: count.min(1),
    runs: count.min(1),
    exportRequests: count,
    rows: z.array(z.object({ tracing: z.string(), msPerStep: figure.positive(), cpuMsPerStep: figure.positive() })).length(4),
    addedPerStep: z.array(z.object({ tracing: z.string(), msPerStep: figure, cpuMsPerStep: figure, cpuShare: figure })).length(3),
  })
  .refine((report) => report.rows[0]!.tracing === 'off', { error: 'the first row is not the one with tracing off' })
  .refine((report) => report.exportRequests >= 3 * report.steps * (report.runs + 1), { error: 'the collector received fewer export requests than the traced steps made' });

// ---- speed: every figure held as a ratio to a floor measured in the same process ----------------

/**
 * A speed figure CI holds. Each is a ratio to a floor measured in the same process, in the same
 * seconds: a machine loaded by other work slows the floor with the figure, so load does not fail
 * the check, and a regression does. `bound` is what CI fails over: set from CI's short form
 * (.ci/run) measured on this 2-core machine, with margin for its noise (the figures are in
 * `measured`). `target` is the issue's goal for the same ratio (null where it states none): where
 * the code does not meet it yet, the bound is the looser, and the check prints the target and the
 * gap beside the figure, so the gap stays in view until it is closed.
 */
export interface SpeedLimit {
  readonly bound: number;
  readonly target: number | null;
  /** What CI's short form measured (and at which load), from which the bound was set. */
  readonly measured: string;
  /** Why the short form's figure can meet the target while the code does not (said beside "met", so that the log does not overstate it). */
  readonly caveat?: string;
  /**
   * A target in ms of CPU per agent step (issue 38's for the DynamoDB ledger), printed beside the
   * figure and never held: CI's hosts differ in speed, which only a ratio to a floor divides out.
   */
  readonly cpuMsTarget?: number;
}

/**
 * The overhead rows in CI's short form (3 runs of 20 steps a row): measured at more runs on 2026-12-04
 * (five runs of the short form and six with --runs 30 at load 0.8–1.8; 0.6.5's code alike), the row's ratio to
 * its floor rises with the runs: the floor's CPU per step falls by about half as its code warms up, the row's by a fifth or less.
 */
const STEADY_STATE = "met only in this short form: 3 × 20 steps are too few for the floor to reach its warm speed (about half its short-form figure by 30 runs; the row's falls far less), and with --runs 30 the ratio is 3.4–4.2× in memory, 3.6–6.1× on disk (docs/benchmarks.md)";

/**
 * CPU a fresh `node -e` process spends starting (V8's snapshot, Node's bootstrap) before its
 * script's first import, on this machine with Node 22, which CI runs (bench/cold-start.ts `startCpuMs`): what
 * the 150 ms import-CPU target is over, as a ratio. It moves with load far less than an import;
 * a Node release that starts faster or slower moves the ratio, so the check names the Node major
 * version it was measured on.
 */
export const NODE_START_CPU = { ms: 25, nodeMajor: 22, measured: 'Node 22.23.5: medians of 3, 22.9–27.9 ms over the 15 functions in three runs at load 1–2 (2026-12-02 05:50 UTC); Node 20 was 25–33 ms at load 22–30' } as const;

/**
 * Issue 38's target for the reading commands: `status`, `runs` and `approvals` on a small state
 * directory (bench/growth.ts's one run) in at most 200 ms of CPU, the whole process.
 */
export const CLI_TARGETS = { cpuMs: 200, commands: ['status', 'runs', 'approvals'] } as const;

/**
 * CPU a `node --import bench/peak-rss.mjs` process has spent when its preload runs (Node's start,
 * the ESM loader's included, before the CLI's first import; bench/peak-rss.mjs), on this machine
 * with Node 22, which CI runs: what the 200 ms target is over, as a ratio. Node 22's ESM loader
 * starts in about a third of Node 20's CPU (68.7–75.8 ms there at load 24–26), so every ratio over
 * it is about three times Node 20's for the same command.
 */
export const CLI_START_CPU = { ms: 24, nodeMajor: 22, measured: 'startCpuMs 22.9–24.4 in CI\'s growth form at load 1–2 on Node 22.23.5 (2026-12-02 05:53 UTC)' } as const;

// The bounds: CI's short forms (.ci/run) three times on 2026-12-02, 00:53 UTC at load 5 (with one
// run or repetition a row, as CI took then) and 01:10–01:50 at load 25–40 (the machine shared by
// several test suites), the figures in `measured` in that order (the ledger's and the replay's with
// the runs made while fitting them); each bound about 1.5× the highest. The floors are CPU-bound code, and under heavy load the paths
// that make system calls (the disk, dynalite's loopback HTTP) slow more than they do: those ratios
// still move 2–4× with load, and their bounds carry it.
export const SPEED_LIMITS = {
  /**
   * bench/overhead.ts: a row's CPU per agent step over the floor's (the local engine with stub
   * tasks), each in the row's own process, on the main thread (threadCpuRatioToFloor): each of the
   * row's runs against the floor runs just before and after it, the median of the runs' ratios. The process's CPU
   * (cpuRatioToFloor, in the report beside it) also counts V8's background threads, whose concurrent
   * marking of the row's garbage lands in whichever runs are going on, the floor's included. CI's
   * form, 26 reports at load 1.3–8.2 (issue 38, 2026-12-06 03:27–03:39 UTC, the last 4 beside 4
   * busy loops; main's code alternated with this one's): with a floor after each run and the ratio
   * of medians, the process's CPU measured 2.04–5.09 in memory and 2.45–6.33 on disk (the highest
   * 2.5× the lowest); with each run paired with the floor around it, 2.67–4.56 and 3.48–6.08
   * (1.7×); the main thread's, paired, 3.81–4.74 and 4.60–6.10 (1.24× and 1.33×). The memory and
   * disk bounds were about 1.35× the highest of those and under twice the lowest. Those reports
   * read a floor still warming (five warm-up runs); since 2026-12-07 each row and its floor warm for
   * 600 steps and the bounds are set on 18 reports of that form at load 1–11 (the comments below):
   * every one passes, and each with its row's CPU doubled fails (test/unit/bench-check.test.ts).
   */
  overhead: {
    // Issue 38's second pass (04:28–04:46 UTC, load 13–26, one row process each, this branch on main): in memory 4.26, 4.98, 4.19, 3.76, 2.95, 3.69, 3.33; on disk 5.71, 4.55, 3.37, 4.76, 4.94, 4.83, 3.68 — main's own 4.19, 3.93, 3.46 and 4.33, 4.29, 3.59 alternated with them: no change measurable under this load, and the target still 1.3–2× away.
    // Issue 38's overhead, fourth pass (17:20–18:10 UTC, load 19–37, CI's form, main and this pass alternated six times): in memory 3.24–5.15 against 3.16–4.76; on disk 3.08–4.51 against 3.43–5.17 — the target still 1.3–1.9× away, so the bounds stay.
    // Issue 38's overhead, fifth pass (22:33–22:43 UTC, load 4–5.4, CI's form, main and this pass alternated eleven times): in memory 1.85–2.68 (median 2.10, 10 of 11 within 2.5)
    // against 1.97–3.03 (2.48, 6 of 11); on disk 2.32–3.75 (2.98) against 2.65–4.20 (3.31). In memory the target is about met at this load; on disk it is 1.2× away, so the bounds stay.
    // The figures above and the bounds before (9 in memory, 10 on disk) were the process's CPU, a floor after each run.
    // 0.15.0 (a tool call handed its turn's state: the state sealed, and carried through the Map to each call) costs these two rows
    // about a fifth of CPU per step: memory 4.33–5.71, disk 5.95–6.73 in six reports at load 0.4–4, against 3.81–4.74 and 4.60–6.10
    // before it; the bounds 7.5 and 9 pass them with a third to spare and still fail each report below doubled (the lowest, 7.62 and 9.2).
    // Issue 38 item 3 (2026-12-06 05:37–05:40 UTC, load 7–9, CI's form with --ledgers memory,disk, main and this pass alternated six
    // times): the handed state carried as the text its turn's write sealed (no records' trees through the Map, no canonical JSON of
    // them) — in memory 4.28–5.27 (median 4.53) against 4.65–5.30 (4.78), on disk 5.04–5.88 (5.22) against 5.60–6.06 (5.73), the
    // wire-format row 5.50–5.84 (5.62) against 6.00–6.69 (6.31): about a tenth off each, the target still 1.8–2.1× away, so the bounds stay.
    // 2026-12-06 12:10–12:30 UTC (branch lean, load 5–9, CI's form, six pairs alternated with main): the ledger's handed-state
    // store made once and the in-process Lambda context one object of a class — memory 4.04–4.57 (median 4.26) against 4.33,
    // disk 4.69–5.59 (4.84) against 5.00: no change, not merged. Per step the engine (the floor's own work) is ~200 µs and the
    // harness adds ~550–650 µs (ledger 96, GC 70, Node's microtasks, timers and signals 65, steps 57, the Task's payload text,
    // checks and copies 49, zod 36, IAM 34, the agent's tools 34): 2.5× needs the harness under ~300 µs, half of what it runs a
    // step, each layer cold code costing about its size (the CallTool input's parse 10.2 µs in a run, 0.15 µs in a hot loop).
    // Cuts to the engine lower the floor as much as the row. The bounds stay.
    // 2026-12-06 14:35–14:45 UTC (load 1–3, the memory row's process, three pairs): the floor is half one defect of the engine's
    // JSONPath library. The interpreter asks jsonpath-plus for each path of a state (`JSONPath({ path, json, wrap: false })`);
    // for a scalar answer jsonpath-plus throws and catches an Error (its NewError) to return it, ~5 µs against ~0.45 for the
    // query, ~20 times a step. With the throw taken out (jsonpath-plus evaluated with `autostart: false`, an experiment on the
    // installed copy, not merged) the floor's main thread went 0.106 -> 0.056 ms a step and the memory row's 0.51 -> 0.44: the
    // row 14% cheaper, its × floor 4.8 -> 7.8. In a `savepoint run` process it saves nothing measurable (2.32 ms of CPU a step
    // either way: 12 alternated pairs of 20- and 120-step days, the slope of the medians), and the engine imports jsonpath-plus
    // itself, so only the CLI bundle could put another module in its place (done on branch engine-jsonpath, its answers tested
    // equal to jsonpath-plus's; not merged). A fix of the engine would halve this floor: the target, set against this floor,
    // would then ask for ~0.14 ms a step.
    // 2026-12-07 (0.19.0's CI read 8.47 in memory against the bound of 7.5, main's code unchanged: its row still warming, 2.14 ->
    // 1.10 ms of CPU a step over its three runs): after five warm-up runs of 20 steps the floor was still getting cheaper (0.154 ->
    // 0.107 ms of main-thread CPU a step over twelve more runs, the row 0.92 -> 0.68), so the ratio read the floor while it warmed
    // and rose with the runs measured (4.7–5.0 with three, 6.4–6.8 with seven, at load 7). Now 600 steps of warm-up (30 runs of
    // 20): both flat over twelve runs, the ratio higher and steadier. CI's form, 18 reports: at load 1–3, in memory 4.95–6.10
    // (median 5.4), on disk 5.93–7.39, the wire row 5.50–8.31, dynalite 28.2–36.9; beside 4 busy loops (load 4–5) 5.23–5.93,
    // 6.12–8.14, 6.78–7.90, 30.5–35.9; beside 10 (load 11) 5.71–7.67, 7.00–8.54, 8.06–11.83, 31.8–47.6. The bounds: in memory 9.5
    // and on disk 11, each above every report (1.24× and 1.29× the highest, at load 11) and under the lowest doubled (9.9 and
    // 11.9); the wire row's 14 (its highest 11.83, at load 11) still passes a doubling, as before.
    'embedded ledger, in memory': { bound: 9.5, target: 2.5, measured: "main thread, after 600 warm-up steps: 4.95–6.10 (median 5.5) in 15 reports at load 1–5, 5.71–7.67 in three at load 11 (2026-12-07). After five warm-up runs: main thread: 4.28–5.27 (median 4.53) in six reports at load 7–9 since the handed state is sealed text; 4.33–5.71 in six reports at load 0.4–4 since 0.15.0 (a call handed its turn's state); 3.81–4.74 (median 4.09) in 26 reports at load 1.3–8.2 (2026-12-06); the process's CPU before: 5.79, 5.98, 4.03, 3.73; 2.95–4.98 (issue 38, second pass); 1.85–2.68 at load 4–5 (fifth pass)", caveat: STEADY_STATE },
    'embedded ledger, on disk': { bound: 11, target: 2.5, measured: "main thread, after 600 warm-up steps: 5.93–8.14 in 15 reports at load 1–5, 7.00–8.54 in three at load 11 (2026-12-07). After five warm-up runs: main thread: 5.04–5.88 (median 5.22) in the same six reports; 5.95–6.73 in the same six reports since 0.15.0; 4.60–6.10 (median 5.09) in 26 reports at load 1.3–8.2 (2026-12-06); the process's CPU before: 3.51, 5.37, 6.58, 6.18; 3.37–5.71 (issue 38, second pass); 2.32–3.75 at load 4–5 (fifth pass)", caveat: STEADY_STATE },
    // Issue 38's target for this row is absolute (≤ 6 ms of CPU a step: 18.6–49.3 ms measured), so not a ratio here.
    // This row and the next keep their bounds (set on the process's CPU, which measured higher for them): a 2× regression passes them.
    'DynamoDB ledger on dynalite': { bound: 100, target: null, measured: "main thread, after 600 warm-up steps: 28.2–36.9 at load 1–5, 31.8–47.6 at load 11 (2026-12-07); before: main thread: 23.4–31.8 (median 28.7) in 26 reports at load 1.3–8.2 (2026-12-06); the process's CPU before: 13.2, 30.2, 49.4, 64" },
    'embedded ledger, in memory, wire-format simulated model': { bound: 14, target: null, measured: "main thread, after 600 warm-up steps: 5.50–8.31 at load 1–5, 8.06–11.83 at load 11 (2026-12-07); before: main thread: 5.50–5.84 (median 5.62) in the same six reports; 5.17–5.99 (median 5.58) in 26 reports at load 1.3–8.2 (2026-12-06); the process's CPU before: 6.09, 6.04, 6.65, 7.90" },
  },
  /** bench/ledger.ts: a ledger's CPU per step over the floor's (each record as JSON text in a map), in the same process. */
  ledger: {
    // Since 0.15.0 the row makes the calls of a call handed its turn's state: the state's seal (an HMAC over its canonical JSON),
    // twice a pair of steps, is most of what the map-of-JSON floor does not do: 6.6–11.4 at load 1–2, 16 in a fresh-clone CI.
    'embedded, memory': { bound: 25, target: null, measured: '6.6–11.4 at load 1–2 and 16 in a CI since 0.15.0; 3.9–9.8 in nine runs before' },
    'embedded, disk': { bound: 70, target: null, measured: '15.3–45 in nine runs' },
    // Issue 38's target for this row is absolute, ≤ 6 ms of CPU an agent step (`cpuMsTarget`: printed, not held): with the
    // ledger's own marshalling and cached middleware and the stand-in's shared table descriptions (issue 38 item 4,
    // 2026-12-04 21:51–22:10 UTC, CI's form alternated with main's code), 4.68–6.12 ms in 20 runs at load 1.0–2.0, 19 of
    // them ≤ 6 and 16 ≤ 5.5 (main's 5.64–6.99), 4.76–5.29 in 5 of 6 at load 3.6–4.4 (one 6.78; main's 6.03–7.62) and 5.31–7.94 at load 4.6–5.9
    // (main's 6.69–8.89): met at a light load, not yet under a heavy one. The ratio's bound is 1.5× the highest of the
    // runs at load 3.6–5.9 (525–670 at load 1.0–2.0); main's code measured 635–975 beside them, so the bound catches a
    // regression of half again, not the 15–20% the change made.
    'DynamoDB on dynalite, memory': { bound: 1_300, target: null, cpuMsTarget: 6, measured: '525–881 in 42 runs at load 1.0–5.9 (issue 38 item 4); 447–1904 in nine runs before it' },
  },
  /**
   * bench/replay.ts: a replay's CPU over the run's it replays (issue 38: ≤ 10% warm, ≤ 20% cold):
   * warm and the first in the benchmark's process, and as a user runs them (`cli`: `savepoint
   * replay`'s process over `savepoint run`'s, each its own process on one state directory).
   */
  replay: {
    // Issue 38's fourth pass (14:22–14:32 UTC, load 16–27, CI's form six times, this branch): the replay walks the loop over the steps with no
    // engine (local/replay/loop.ts). The engine's replay measured 0.39–0.53 warm and 0.46–0.67 cold at load 16–21 (0.88 and 1.09 at
    // load 25–40), its CLI process 0.54–0.69 of the run's: the bounds, about twice the highest measured now in process and 1.5 times as processes (both feel the same load), fail it.
    // Issue 38's sixth pass (22:15–22:28 UTC, load 4.7–8.5, CI's form four times and `--replays 5` three times, each alternated with
    // main's code): the CLI bundle holds zod in one file (bin/bundle.js BUNDLED_PACKAGES), 15–25 ms less CPU in every CLI process,
    // `savepoint run`'s as well as `savepoint replay`'s (330–379 ms against main's 347–399), so the `cli` share hardly moved
    // (0.256–0.271 against 0.243–0.281); the in-process replay runs the same code (0.117–0.130 warm, 0.136–0.147 the first). The bounds stay.
    // Issue 38, a pass on the warm replay (2026-12-05 12:49–12:53 UTC, CI's form sixteen times alternated with main's code at load
    // 1.1–2.9): the replay's ledger keeps each record written as it is, frozen where it is, not a frozen copy (embedded-memory.ts
    // `frozenInPlace`; main's copies of the 329 writes of a replay timed at ~1.3 ms of its ~28 ms, warm), and keeps no order of use in memory only.
    // Warm 0.066–0.125 (median 0.095; 31–60 ms, median 35) against 0.079–0.147 (0.106; 35–63 ms, median 41); the first replay
    // costs more, 0.122–0.179 (0.144; median 56 ms) against 0.104–0.179 (0.131; 50 ms): the freezing in place (in process, six
    // times each, the first replay 55 ms median against main's 48 and 49 with the records kept unfrozen, a variant measured only:
    // the steps' own objects frozen beneath them). `savepoint replay`'s process, a first replay too, unchanged (0.260 against 0.268).
    // The bounds stay.
    // Issue 38, 2026-12-06 10:00–10:45 UTC (helper "warm", CI's form alternated with main's code, 20 pairs at load 4.3–6.6 and 12
    // after merging main at load 5.0–6.7): the replay's in-memory ledger makes and seals no handed state (`handsState: false`: its
    // loop hands CallTool none, each call reads), a read from a sort key found by halving, an unsealed item a class. Warm median
    // 0.0877 → 0.0735 and 0.0917 → 0.0779, the highest 0.0974 → 0.0882 and 0.1135 → 0.0883; the first 0.1355 → 0.1274 and
    // 0.1265 → 0.1200. A warm sample's spread is mostly where a scavenge falls (a replay allocates ~7.6 MB; a scavenge every
    // ~14 MB, 2–9 ms). The bounds stay.
    warm: { bound: 0.35, target: 0.1, measured: "0.0735 and 0.0779 (medians; at most 0.0883) over 32 runs at load 4–7 with the replay's ledger handing no state; 0.094–0.108 (median 0.100) at load 6–7 on the built harness; 0.077–0.114 (median 0.103) at load 6–9 (the replay's own flags, clocks without timers); 0.066–0.125 (median 0.095) with records kept as written; 0.117–0.130 (sixth pass); 0.162–0.184 (fourth pass); the engine's 0.31–0.88" },
    cold: { bound: 0.45, target: 0.2, measured: "0.1274 and 0.1200 (medians) over the same 32 runs; 0.118–0.130 (median 0.127) at load 6–7 on the built harness; 0.108–0.135 (median 0.125) at load 6–9 (the replay's own flags, clocks without timers); 0.122–0.179 (median 0.144) with records kept as written; 0.136–0.147 (sixth pass); 0.176–0.224 (fourth pass); the engine's 0.36–1.09" },
    // 0.9.1 (2026-12-05, load 2–3): `savepoint run` 673–680 ms of CPU (from 785–802: the CLI bundle requires its CommonJS packages, and
    // the interpreter's validator loads only if called), `savepoint replay` the same 175–183 ms (it loads neither): the share 0.26–0.27.
    // Issue 38, a pass on the replay's process (2026-12-05 12:01–12:06 UTC, CI's form twelve times alternated with main's code at load
    // 5–9): a failure's stack trace written only when read, sameJson walking no string, no state-directory lock for a read (the
    // ledger's own names its command), node:http and commander's child_process loaded when used, the named command registered
    // alone, a cheaper bundle check: `savepoint replay` 171 against 194 ms of CPU, cli 0.216–0.251 (median 0.244) against
    // 0.241–0.302 (0.269); warm and the first within their noise (0.088–0.128 and 0.113–0.166 against 0.078–0.132 and 0.120–0.175).
    // Twelve runs earlier at load 9–12, without the cheaper check: 0.208–0.249 (0.236) against 0.230–0.292 (0.256). The bounds stay.
    // 2026-12-05 evening (five pairs alternated at load 6–11): the bundle's files made ASCII (a `—` in a comment had Node decode zod's
    // 760 kB chunk as UTF-16 at every start) moved `--version` 92 → 88, `status` 149 → 145, `replay` 217 → 215 ms; V8's --no-lazy
    // while the compile cache is on (every function's code kept, not only each module's top level) took the share from a median of
    // 0.27 to 0.23, but `savepoint run` up 3–5% (~77 built-ins it loads later compile from source), +4 MB peak RSS, +50 ms on the
    // first start after an upgrade, and a V8 flag changed after the VM started: not merged (branch cli-start). Where replay's
    // ~200 ms went then: Node's start 28, the bundle check 15, zod's load 17, the ledger's open and first read 23, the agent 10,
    // replayRun 88 (flat: sameJson ~5%, zod's parses ~8%, freezing ~5%).
    // 2026-12-06 00:00–00:45 UTC (branch replay-cli): Node's built-ins read through process.getBuiltinModule, not through
    // Node's ES module of each (bin/bundle.js BUILTIN_IMPORT; that module read every export: node:fs's loaded fs/promises,
    // readline and the file streams, node:crypto's the Web Crypto modules). `savepoint replay` of the sample day 3% fewer
    // instructions (callgrind, V8 single-threaded, alternated: 871–898 M against 843–858 M, ~6 ms of its ~195); every
    // command's start (`--version`) 6% fewer (413–416 M against 386–393 M), `savepoint run`'s too: it loads three of Node's
    // modules fewer and none more (its CPU, 700–1100 ms at load 5–11, too noisy to show ~6 ms). The replay process's CPU
    // alternated 12 and 15 times with main's at load 4–6: medians 198.5 against 203, 263 against 260 (min 188–191 both); the
    // `cli` share in the bench's form, six and five pairs at load 5–11, within its noise (0.238–0.296 against 0.206–0.358). Of the replay's
    // instructions, V8's lazy compiles are 17% (the compile cache keeps each module's top level only), the scavenges 5%, the
    // code cache's reads 3%. The bounds stay.
    // 2026-12-06 02:30–03:10 UTC (branch cli-start2): the CLI bundle's imports of its own files resolved by a module.registerHooks
    // resolve hook (bin/bundle.js resolveBundleImports), not Node's resolver. Alternated with main at load 2–5: `savepoint replay`
    // 203 -> 193 ms of CPU (11 pairs, medians), `savepoint run` 779 -> 732 (7), `status` 145 -> 124 (11), `--version` 79 -> 77 (11);
    // CI's form fourteen pairs: cli 0.258–0.260 against 0.268–0.271 (medians; 0.236–0.276 against 0.191–0.329), warm and the
    // first unchanged (0.099–0.111 and 0.144–0.152 against 0.099–0.105 and 0.143–0.158). Measured and left: every arrow without
    // `this` and every function expression of the bundle made a parenthesized function (V8 compiles those with their script, so
    // the compile cache keeps them): replay 200 -> 194 ms, as V8 then compiles each such function inside a lazily compiled
    // declaration or method (most of the harness) with it, called or not, and it needs a JavaScript parser where the bundle is
    // built; commander's module functions so alone, V8's `//# allFunctionsCalledOnLoad` (no effect on Node 22's modules), the
    // bundle's whitespace minified, its files read by a load hook: none moved replay's CPU. The bounds stay.
    // 2026-12-06 05:05–05:30 UTC (branch replay-share): `savepoint replay` starts with V8 flags of its own, set before the
    // compile cache is on (bin/savepoint.js ONE_PASS_FLAGS: --no-lazy, every function's code read from the cache, and
    // --no-turbofan, whose compiles of the nine or so functions a replay makes hot cost more than they saved, still so over 30
    // replays of the sample day in one process); the recorded clocks arm no timer (local/replay/recording.ts). Alternated with
    // main's code: the replay process 150 -> 118 ms of CPU (10 pairs, medians; 186 -> 149 for a run of 163 steps), `savepoint
    // run`, `status` and `--version` unchanged (their flags are the defaults). CI's form seven pairs at load 6–9: cli
    // 0.178–0.220 (median 0.202; replay processes ~133 ms, run ~662) against main's 0.253–0.289 (0.262; ~175 and ~670);
    // warm 0.077–0.114 (0.103) and the first 0.108–0.135 (0.125) against 0.097–0.135 (0.115) and 0.123–0.154 (0.132): the
    // in-process replay runs the harness's steps (~95% of its CPU; the replay's own comparisons and recorded answers ~5%).
    // The `cli` bound 0.35: 1.6× the highest measured, and a replay process twice as heavy fails it.
    // 2026-12-06 05:45–06:15 UTC (branch replay-share2, after hotpath-cpu's merge): where the replay process's CPU goes, by
    // process.cpuUsage marks (medians of 10, load 3–7): Node's start ~22 ms, flags and compile cache ~6, the bundle check ~7 (473
    // source stamps, 129 bundle files), zod ~13 (its chunk: 760 kB, 1.19 MB of code cache under --no-lazy), the main chunk ~19,
    // the ledger's open ~5, getRun ~8.5 (each of the run's ~250 lines hashed, parsed and its seal checked), the agent ~5, the
    // replay chunk ~6, the replay ~50. V8's coverage of a replay: of the 1.54 MB of code it loads, 0.62 MB of zod (0.36 MB of it
    // its 62 locales besides English), 0.31 MB of the harness and 47 kB of commander never run, all read from the compile cache
    // (--no-lazy); the kernel's share of the process ~16% (10.2k page faults against 2.3k for `node -e 0`: the code cache's
    // copies and what it deserializes). Changed: zod's locales loaded from zod's own build at their first call (bin/bundle.js
    // zodLocalesOnCall: the zod chunk 760 -> 408 kB, its cache 1.19 -> 0.90 MB, 650 page faults fewer; the zod mark 13.4 -> 10.3
    // ms), and a seal's text written in one pass (seal.ts sealedText; getRun 8.5 -> 5.9 ms). Alternated with main's code:
    // `savepoint replay` 145 -> 142.5 ms of CPU (30 pairs, medians; paired difference 3 ms), `savepoint run` 719 -> 707 (8);
    // CI's form nine pairs at load 2–5: cli 0.198–0.212 (median 0.205; replay ~136.5 ms, run ~668) against main's 0.200–0.212
    // (0.206; ~140 and ~680): both processes lighter, the share hardly moved. Measured and left: zod compiled lazily (V8's
    // --lazy while its chunk loads, its own cache directory: +5 ms, the functions a replay calls then compile), --no-sparkplug
    // (+4.5 ms), --always-sparkplug, --single-threaded-gc, larger semi-spaces (none lower), every other command's module left
    // unloaded for `replay` (the main chunk 17.5 -> 12.2 ms, the ledger, agent and replay chunk as much more: the replay loads
    // that code anyway), the seal checks on open skipped (an upper bound only: ~3.5 ms). The bounds stay.
    // 2026-12-06 06:30–06:40 UTC (branch run-start): `savepoint run`, `resume` and `fork` start with the replay's V8 flags too
    // (bin/savepoint.js ONE_PASS_COMMANDS), the ~125 modules of Node's a run loads loaded before the flags change (loadRunBuiltins:
    // else each compiled from its source). Alternated with main's code at load 1–3: a run of 3 steps 320 -> 270 ms of CPU
    // (9 pairs, medians), the sample day 670 -> 550 (9), a fork of it at turn 15 725 -> 565 (8); `status` and `--version`
    // unchanged (90 and 60 ms); --no-lazy alone a run of 3 steps' gain, not the day's (590), --no-turbofan alone the
    // reverse (290 and 570). The first start after a bundle change as costly as main's (~390 ms for 3 steps, 3 pairs), the
    // flags' cache directory 1.5 -> 5 MB, peak RSS 2-3 MB lower. CI's form five pairs: run 604 -> 485 ms, replay the same
    // (~124), so cli 0.207 -> 0.251 (medians): the share rose as the run it divides by got lighter. The bounds stay.
    // The lead then kept --no-lazy alone for the run commands (2026-12-06 06:57 UTC): on a run of 125 steps both flags took
    // 0.58-0.61 s of CPU against main's 0.66-0.71 but 0.58-0.59 s of wall time against 0.53-0.61 (the run's own thread slower
    // unoptimised), --no-lazy alone 0.61-0.63 s of CPU and 0.49-0.52 s of wall (5 rounds alternated, load 2-3), and a longer
    // run, where TurboFan's code pays, keeps it. The 0.15.1 CI before that change: cli 0.25 (replay 120 and 118 ms, run 476).
    // 2026-12-06 07:25–07:56 UTC (branch replay3, load 4–11): the in-process run and replays on the built harness (dist/, as
    // an installed package runs it; bench/built.ts), not the sources through tsx (keepNames' `__name` wrappers, a second copy of
    // the harness); a command line's other command modules left unloaded (cli/register-commands.ts); sameJson's fields read once.
    // CI's form seven pairs alternated with main's code at load 6–7: warm 0.094–0.108 (median 0.100) against 0.100–0.108 (0.102),
    // the first 0.118–0.130 (0.127) against 0.133–0.151 (0.148), cli 0.210–0.219 (0.216) against 0.216–0.224 (0.219); the replay
    // process 113 -> 112 ms of CPU (20 pairs, paired median -1 to -2). Where the replay process's ~120 ms go (process.cpuUsage
    // marks, medians of 10): Node's start 23, flags 3, the bundle check 6 (473 source stamps 2.3, the index 1.2, the outputs
    // 0.5, bin/bundle.js's own load 1.5), zod's chunk 9, the CLI's chunk 13, the ledger's open 4.5 and first read 5.5, the
    // agent 4.5, the replay's chunks 8.8, the replay 41.5 (its steps: CallModel ~0.6 ms each, CallTool ~0.35; the replay's own
    // comparisons, answers and clock ~4.5 ms), the exit 1. 1,049 zod schemas are built before the replay starts (~7 ms: the
    // agent's 234, the harness's records and steps ~600, the model providers' ~80 and other commands' ~90 that a replay never
    // parses with); none after. Measured and left: V8's semi-spaces larger (Node's own start +8 ms), --no-lazy-feedback-allocation,
    // --maglev, --no-maglev, --no-parallel-scavenge, --single-threaded-gc, --no-concurrent-sparkplug (none lower); the replay's
    // request comparison left out entirely (an upper bound, not a change: -1.5 ms in the process, -5 ms on the first replay in
    // process, -2 ms warm). The bounds stay.
    // 2026-12-06 12:05–12:28 UTC (branch start4, load 5–6, marks of 11 replays, medians, ~112 ms in all): Node's start 20.5,
    // bin/savepoint.js 2.5, the built-ins before the flags 2.7, bin/bundle.js 1, the bundle check 5.4 (476 statSyncs ~2.2), zod's
    // chunk 8.5, the CLI's main chunk 10.3, commands 1.3, the ledger's modules and open 5.6, the first getRun 3, the agent 4.6, the
    // replay's modules 6.6, replayRun 38.5, the exit 0.7: all but the last three paid by `savepoint run` too. Measured and left:
    // the stamps compared as numbers (CI's form 0.2165 -> 0.2140, eight pairs: noise), 30 more modules on the replay's path
    // (~0.03 ms each, so merging the small chunks saves ~1 ms), --min-semi-space-size=64 (slower), --maglev (no change). The
    // 0.20 needs ~10 ms off the replay alone: no part of the start path holds that much. The bounds stay.
    // 2026-12-07 10:10–11:30 UTC (branch h3): counted by cachegrind (`node --single-threaded --predictable --hash-seed=1
    // --random-seed=1`: the same count run after run, ±0.1 M; its V8 flags make Node compile its own built-ins from source, a
    // fixed ~80 M of the total), a replay of the sample day is 642.1 M instructions: Node's start 110, the built-ins and flags 76,
    // the bundle's check 28 (489 stats 10.5, its index 7.8), zod's chunk 51, the CLI's 25, the ledger's modules and open 22, the
    // first getRun 33, the agent 48 (its dev module's simulator 10.5 of it), the replay's modules 31, replayRun 190 (of which the
    // requests' comparison 10: every message of every request compared again, 841 of them). Cut: a message sent again compared
    // once (answers.ts comparedMessages, the pair frozen), esbuild's __export filling a dictionary (bin/bundle.js
    // namespacesAsDictionaries: a hidden class per name of zod's 992 was ~5 M), one-shot SHA-256 for the ledger's line hashes
    // and seal comparisons, the embedded ledger's instance id made when first used: 642.1 -> 627.3 M (-2.3%); the replay process
    // 107 -> 104 ms of CPU (54 pairs alternated with main at load 3–6, medians; paired difference -2, mean -2.5); CI's form ten
    // pairs at load 1–2 against this branch's base: 0.2137 (0.2065–0.2233) against 0.2162 (0.2074–0.2313), warm and the first
    // unchanged. Measured and left: V8's --minor-ms (the main thread's GC 7 -> 4 ms, the process's CPU the same),
    // --semi-space-growth-factor=8 and a larger first semi-space (fewer scavenges, the same time: what survives is copied either
    // way), --baseline-batch-compilation-threshold (±0.5%); a partition's lines read in one read (-0.1%); the run config of
    // defineAgent parsed whole, not by a `.partial()` of it (-0.1%); objects frozen in place marked as plainCopy's (-0.4% of
    // instructions, but the in-process warm replay +7%, a WeakSet of every record's objects); indexed loops for the embedded
    // ledger's walks (no change). The bounds stay.
    // 2026-12-07 14:50–15:20 UTC (branch h8, issue 38 item 2, load 7–12): CI's form three times on its base, cli 0.2048,
    // 0.2182, 0.2179 (replay processes 90–109 ms of CPU, runs 422–481). cachegrind (`node --random-seed=1`, 576.1–576.4 M):
    // the modules' code read from the compile cache 76 M (V8's deserializer 58.6, Node's cache handling 19 of which crc32 of
    // each module's source and cache 14: 2.3 MB of cache, zod's 0.90 MB, the CLI's main chunk 0.44, the steps' 0.22),
    // scavenges 42 M (nine), Sparkplug's batch compiles 31.7 M (135 batches), Node's own functions compiled at first call
    // 12.3 M (882), V8's read-only snapshot 17.6 M. The kernel is ~a fifth of the process's CPU (8.6k minor page faults against
    // 2.4k for `node -e 0`). zod: 584 schemas built, the harness's all on first use (schemaOnFirstUse) but defineAgent's config
    // (63) and 9 others, the agent's own 234 (domain.ts 95, agent.ts 49, and its dev module's 90): none left to defer.
    // Measured and left, each in process CPU (resourceUsage, 30 pairs alternated, paired medians): V8's
    // --semi-space-growth-factor=16 with the replay's flags (the young generation at its largest after the third scavenge:
    // three scavenges, not nine; -36 M instructions, -6.2%) moves none of the CPU: user -1.4 ms, system +1.5 ms (+1.5k page
    // faults of the larger semi-space, peak RSS 70 -> 77 MB); =8 -0.7%. The agent's module loaded without its dev module
    // (`withDev` adds only `dev`, which a replay never reads): -11 M (-1.9%), CPU +0.7 ms (noise), and a first replay would
    // build a second agent bundle. The bundle's check skipped entirely (an upper bound): -4.7 ms; of its ~23 M, the identity's
    // digest (four files, ~50 kB hashed) 4.1 M (1.8 of it OpenSSL's first hash, which the ledger pays next if not here), its
    // index 3.4 M, 491 source stamps 10 M, the outputs' 169 with their manifest 4 M: each part alone within the noise
    // (-1.7 to +1.8 ms). Flags: --no-sparkplug +2.3%, --no-baseline-batch-compilation -0.3%,
    // --invocation-count-for-feedback-allocation=32 +3.6%, --single-threaded-gc 0, --lazy +17 ms. Changed, the other way:
    // the young generation kept at its first size (bin/savepoint.js ONE_PASS_COMMANDS, --semi-space-growth-factor=1: a
    // semi-space of 1 MB, not grown to 8): 22 scavenges, not 9, +1.6% instructions (585.8 M), but 1.6k fewer page faults and a
    // young generation that stays in the CPU's caches: the replay process -4.8 ms of CPU (60 pairs, paired median; user -0.7,
    // system -3.6; a run of 169 steps -5.1, 40 pairs), peak RSS 71 -> 65 MB. CI's form ten pairs alternated with the code
    // before it at load 7.5–13.5: cli 0.1908–0.2086 (median 0.1996; the replay processes' median 95.5 ms, runs 416–591)
    // against 0.1944–0.2264 (0.2103; 102.5 ms, runs 415–598); warm and the first unchanged (the bench's own process). Left:
    // the same flag for `savepoint run`, `resume` and `fork` (bin/savepoint.js ONE_PASS_COMMANDS): a long run scavenges far
    // more often in 1 MB and promotes sooner. 2026-12-07 (10–12 alternated pairs each, medians, load 1–6): a run of 3 steps,
    // the sample day, a resume and a fork of a small run -5 to +8 ms of CPU (noise; the day's 20.5k -> 14.6k page faults,
    // peak RSS 126 -> 103 MB), but a run of 401 steps +180–240 ms of ~1.2 s (41 -> 502 scavenges, GC 47 -> 300 ms) and one
    // of 2,001 steps 8.6 -> 12.8 s (526 -> 8,811 scavenges, 2 -> 10 major GCs, peak RSS 204 -> 300 MB); a cap on the young
    // generation holds only from Node's command line (--max-semi-space-size 4 or 8 MB: +25 ms for 3 steps, +1–2.7 s for
    // 2,001). The 0.20 in CI (0.22–0.23 there) needs ~5% more. A replay of a run of more than 500 steps sets V8's default
    // factor back once it has read the run (cli/replay-heap.ts: kept at 1 MB, 1,001 steps 292 -> 340 ms of CPU). 0.22.0's
    // first fresh-clone CI: 0.21 (replays 83–93 ms, runs 408–435).
    // The rest is the code the process reads (about half of it never run: --no-lazy reads every function) and the pages it
    // touches. The bounds stay.
    cli: { bound: 0.35, target: 0.2, measured: "0.1908–0.2086 (median 0.1996) at load 7.5–13.5 (the replay's young generation kept at 1 MB; the code before it 0.1944–0.2264, median 0.2103, beside it); 0.2065–0.2233 (median 0.2137) at load 1–2 (a message sent again compared once, zod's namespaces filled as dictionaries; this branch's base 0.2162 beside it); 0.210–0.219 (median 0.216) at load 6–7 (other commands' modules unloaded; main's 0.216–0.224 beside it); 0.198–0.212 (median 0.205) at load 2–5 (zod's locales on call, one-pass seal text; main's 0.200–0.212 beside it); 0.178–0.220 (median 0.202) at load 6–9 with the replay's own V8 flags (main's 0.253–0.289 beside it); 0.208–0.251 (medians 0.236–0.244) at load 5–12 (a lighter `savepoint replay` process); 0.26–0.27 (0.9.1: a lighter `savepoint run`); 0.256–0.271 (sixth pass); 0.254–0.330 (fourth pass); the engine's 0.54–0.69" },
  },
  /**
   * bench/tracing.ts: the CPU per step the export adds over the same stack's with tracing off,
   * interleaved run by run, each traced run against the untraced one of its round (the median of
   * seven pairs). CI's form was 20 steps, where a run's start and end (its spans and metrics flushed)
   * weigh over few steps: the metrics row 1.20-2.09 in eight reports on the same code, 2.14 on the first CI of
   * 0.18.0's work (it did not land; not a regression: 0.17.0 measured 1.07-1.71 beside it). 100 steps since
   * 0.18.0 (2026-12-06, load ~1, eight reports): one bound for the three rows.
   */
  tracing: {
    'OTLP/HTTP protobuf, spans only': { bound: 2, target: null, measured: '0.49-0.72 (100 steps); 0.65-1.08 (20 steps); earlier 20-step medians 0.01-1.34' },
    'OTLP/HTTP protobuf': { bound: 2, target: null, measured: '0.89-1.16 (100 steps); 1.25-2.09 (20 steps); earlier 0.16-0.85' },
    'OTLP/HTTP JSON': { bound: 2, target: null, measured: '0.61-1.09 (100 steps); 1.06-1.31 (20 steps); earlier 0.23-0.75' },
  },
  /**
   * bench/cold-start.ts: the model and tool steps' import CPU over the same process's start
   * (importCpuRatio). The target, 150 ms, over NODE_START_CPU: 5.56. Since the bundles map stack
   * traces lazily (no --enable-source-maps: issue 38), met under load: 4.49 and 4.77 (109 and 135
   * ms) at load 16–21, where the bundles before measured 5.29 and 5.41 (and 6.15–7.11 at load
   * 25–40). The import slows with load more than Node's start (1.1–1.3× from load 7 to 40), so the
   * bound is the highest measured with that room, 6.5, not the target: the old bundles at load 25+ fail it.
   */
  coldStart: { bound: 6.5, target: COLD_START_TARGETS.importCpuMs / NODE_START_CPU.ms, measured: 'Node 22, 9 runs, each bundle only its own step (its wiring module, no runs API), node:http2 on first use, KMS and Step Functions on first use in CallTool, zod jitless: call-model 4.99–5.05, call-tool 5.24–5.29 (123–127 and 131–132 ms) at load 4.7–5.7, against 5.77–5.81 and 6.13–6.24 (139–142, 154–156 ms) for the bundles before, measured side by side in two rounds (2026-12-02 22:39 and 22:51 UTC); 7 runs, node:http without its facade: call-model 5.19, call-tool 5.49 (142 and 148 ms) at load 0.8 (2026-12-02 22:03 UTC); with it 5.59, 5.98 (161, 172 ms) at load 0–0.4, 6.69 for call-tool on CI\'s fresh machine (3 runs); earlier bundles: call-model 4.56–4.83, call-tool 4.40–4.86 (104–116 ms) at load 0–2 (05:50 UTC); Node 20: call-model 4.49, call-tool 4.77 at load 16–21 (2026-12-02 04:38 UTC); 4.35, 4.29 (98 and 105 ms) at load 3–7 (05:05 UTC); before lazy source maps 5.29, 5.41 at load 16; 6.15, 6.27 at load 25–28; 7.11, 6.79 at load 28–40' },
  /**
   * bench/growth.ts: `savepoint status`, `runs` and `approvals` against a state directory of one
   * run, the whole process's CPU over its own Node start's (cpuRatioToStart). The target, 200 ms,
   * over CLI_START_CPU.
   */
  // Measured on Node 22.23.5 at load 1–2 (2026-12-02 05:53 UTC), CI's growth form; each bound about
  // 1.5× that. On Node 20 (a start of ~70 ms) the same commands measured 3.4–4.6 at load 10–26;
  // the commit before the lazy imports (the local engine and the Step Functions SDK loaded for
  // every command: 525–826 ms) fails these bounds. status is 1.4× over the target (279 ms: it
  // also asks whether an engine drives the run), runs and approvals at it (188–189 ms).
  /**
   * bench/events.ts: the CPU per step that 100 subscribers of the run's event stream add to the
   * engine's process, over the run's alone (issue 33's target: ≤ 10%). The cost is each follower's
   * connection (once a run) and a socket write per follower per delivery (15–35 µs each here), so
   * the deliveries a write wakes are spaced by the process's CPU time, 0.5 ms per follower
   * (event-feed.ts WAKE_CPU_MS_PER_FOLLOWER): ~12 writes per subscriber per 100-step run whatever
   * the load. Spaced by the wall clock (50 ms for 100) they were 20 at load 9 and 50 at load 17,
   * a loaded machine stretching the steps in wall time, not in CPU. CI's form, 100 steps × 3 runs,
   * on 2 cores at load 13–31 (2026-12-02 11:00–11:45 UTC): 0.112, 0.405, 0.45, 0.805, 0.169,
   * 0.215, 0.616, 0.25, 0.152, 0.105, 0.223, 0.506, 0.29, 0.346 (median 0.27); the wall-clock
   * spacing before, run alternately with it: 0.728, 0.598, 1.373, 0.262, 0.505, 0.212, 0.711
   * (median 0.6), and 0.36, 0.25 at load 9–11. At that load
   * the process's own CPU per step alone moves by a third between runs (3.25–5.2 ms), so the
   * figure's noise is as large as what it measures; the 10% is not shown. The bound is 1.5× the
   * highest measured, so that a machine that loaded passes and a return to one delivery per write
   * (0.63 at load 8–9 before deliveries were bounded) at that load fails.
   * With each batch framed as an HTTP chunk once and written to the sockets as it is, and a woken
   * run no longer read on the wall clock between wakes (2026-12-02 14:00–14:35 UTC, load 14–31):
   * 0.027, 0.069, 0.07, 0.113, 0.214, 0.28, 0.308, 0.435, 0.448, 0.454, 0.555, 0.558, 0.578,
   * 0.618, 0.688 (median 0.435); the code before, in the same hour: 0.24–0.66 (median ~0.48). The
   * noise is as large as the difference. Profiled (perf, the followed row against the alone one),
   * the added CPU per 100-step run is ~20 ms of connections (HTTP parsing, the credential's two
   * SHA-256, the API Gateway twin's relay), ~20 ms of deliveries (~10 reads of the whole run and
   * ~100 socket writes each, ~17 µs a write), and more GC and cache misses beside the subscribers'
   * process (they parse every event on the same 2 cores): the connections alone are ~6% of such a
   * short run, so the 10% is not met; the bound stays.
   */
  events: { bound: 1.2, target: 0.1, measured: '0.027–0.688 (median 0.435) at load 14–31 with chunks framed once (2026-12-02 14:00 UTC); 0.105–0.805 (median 0.27) at load 13–31 with CPU-spaced wakes; 0.21–1.37 (median 0.6) with wall-clock wakes at that load, 0.2–0.42 at load 8–11' },
  /**
   * bench/events.ts: the median delay from a record's write to its event's arrival at a subscriber,
   * in steps of the run it follows (the median over the 100 subscribers' deliveries / ms per step,
   * both from the same runs). The issue asks for a few steps' time. In the engine's process a
   * followed run is read when the ledger records to it (local/runtime/recorded-runs.ts), once the
   * process has spent 0.5 ms of CPU per follower since the last read (event-feed.ts
   * WAKE_CPU_MS_PER_FOLLOWER: 50 ms of CPU for 100, ~14 steps of 3.5 ms), or at the poll (25 ms +
   * 2.5 ms per follower) if sooner. CI's form at load 13–31 (2026-12-02 11:00–11:45 UTC): 6.4,
   * 5.1, 4.6, 5.7, 4.3, 3.7, 5.5, 8.3, 8.4, 7.8 steps (205–304 ms median); with wall-clock wakes
   * (50 ms for 100) 1.7–3.2 steps at that load, 6.5–11.9 at load 8.6–8.9 and 26 at load ~2. The
   * bound, 60, holds an unloaded machine (where the CPU gap is ~14 steps) with room; it fails the
   * poll alone (every 25 ms + 2.5 ms per follower: 212–235 ms) where steps are fast (106 steps at
   * 2 ms a step).
   */
  eventsDelay: { bound: 60, target: 3, measured: '6.3–9.4 at load 14–31 with chunks framed once (median 171–284 ms, p99 466–942 ms; 2026-12-02 14:00 UTC); 3.7–8.4 at load 13–31 (CPU-spaced wakes); 6.5, 7.2, 11.9 at load 8.6–8.9 and 26 at load ~2 (wall-clock wakes)' },
  /**
   * bench/suite.ts: `npm test`'s CPU (its processes' included) over the floor's batch measured
   * before and after it: the target, 300 s over the floor at the machine's usual speed here
   * (TEST_SUITE_TARGET). Six fresh-clone CIs of the same suite took 304, 337, 354, 323, 312 and
   * 337 s of CPU while the floor measured 530, 571, 618, 595, 587 and 603 ms: the ratio moved 11%
   * where the seconds moved 16%. The bound was 1.5× the highest, so that a suite twice as costly fails.
   * 2026-12-07 (0.20.0 and 0.21.0, the suite grown to 4,682 tests): eight fresh-clone CIs read
   * 657–825, the floor at 437–505 ms (faster than it was, the suite's seconds not: 309–363 s), so
   * 900 left 9% over the highest. Now 1,100: 1.33× the highest, and still under twice the lowest
   * (1,314), so a suite twice as costly fails.
   */
  suite: { bound: 1_100, target: Math.round((TEST_SUITE_TARGET.cpuSeconds * 1000) / TEST_SUITE_TARGET.floorCpuMs), measured: '668, 697, 728 and 743 in the fresh-clone CIs of 0.20.0 and 742, 657, 718 and 825 in those of 0.21.0 (2026-12-07, load 0.6–4.9; 309–363 s of CPU, the floor 437–505 ms); 575, 591, 573, 543, 532 and 559 in six fresh-clone CIs (2026-12-06 12:52–13:42 UTC, load 0.6–4.5; 304.4, 337.3, 354.1, 322.9, 312.1 and 336.7 s of CPU, the floor 530, 571, 618, 595, 587 and 603 ms)' },
  cli: {
    status: { bound: 17, target: CLI_TARGETS.cpuMs / CLI_START_CPU.ms, measured: '11.1 (279 ms) at load 1–2 on Node 22' },
    runs: { bound: 12, target: CLI_TARGETS.cpuMs / CLI_START_CPU.ms, measured: '7.8 (188 ms) at load 1–2 on Node 22' },
    approvals: { bound: 12, target: CLI_TARGETS.cpuMs / CLI_START_CPU.ms, measured: '7.6 (189 ms) at load 1–2 on Node 22' },
  },
  /**
   * bench/growth.ts `served`: the same commands while `savepoint serve` runs on the directory, as
   * issue 33 has the CLI use it: the public client asks its runs API and no ledger is opened.
   * Held at the 200 ms target itself. Measured alternately with main's CLI (which opened the
   * engine's ledger over loopback) at load 8–9, start CPU 37–49 ms: status 5.04–6.01 (246–265 ms)
   * against main's 9.47–12.08 (442–569 ms), runs 5.73–6.69 (237–258) against 6.51–7.84
   * (301–341), approvals 5.23–6.09 (247–274) against 7.15–7.35 (298–319). Main's status fails it.
   */
  cliServed: {
    status: { bound: CLI_TARGETS.cpuMs / CLI_START_CPU.ms, target: CLI_TARGETS.cpuMs / CLI_START_CPU.ms, measured: '5.04–6.01 (246–265 ms) at load 8–9; main 9.47–12.08' },
    runs: { bound: CLI_TARGETS.cpuMs / CLI_START_CPU.ms, target: CLI_TARGETS.cpuMs / CLI_START_CPU.ms, measured: '5.73–6.69 (237–258 ms) at load 8–9; main 6.51–7.84' },
    approvals: { bound: CLI_TARGETS.cpuMs / CLI_START_CPU.ms, target: CLI_TARGETS.cpuMs / CLI_START_CPU.ms, measured: '5.23–6.09 (247–274 ms) at load 8–9; main 7.15–7.35' },
  },
} as const satisfies Record<string, SpeedLimit | Record<string, SpeedLimit>>;

/** One figure a report holds to its limit: where it is in the report, what it is, its value. */
export interface HeldFigure {
  readonly path: string;
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly limit: SpeedLimit;
  /** The row's own CPU per agent step, for a limit with a `cpuMsTarget`. */
  readonly cpuMsPerStep?: number;
}

/** The speed figures of a report that passed its schema, each with its limit; `missing` names a figure the report lacks. */
function speedFigures(mode: Mode, report: any): { figures: HeldFigure[]; missing: string[] } {
  const figures: HeldFigure[] = [];
  const missing: string[] = [];
  const rows = <T extends Record<string, SpeedLimit>>(limits: T, list: any[], key: string, value: (row: any) => number | undefined, where: string, unit: string, name: (row: string) => string) => {
    for (const [row, limit] of Object.entries(limits)) {
      const index = list.findIndex((item) => item[key] === row);
      const measured = index === -1 ? undefined : value(list[index]);
      if (measured === undefined) missing.push(`${where}: no figure (${unit}) for the row ${JSON.stringify(row)}`);
      else figures.push({ path: `${where}.${index}`, name: name(row), value: measured, unit, limit, ...(limit.cpuMsTarget !== undefined && { cpuMsPerStep: list[index].cpuMsPerStep }) });
    }
  };
  switch (mode) {
    case 'overhead':
      rows(SPEED_LIMITS.overhead, report.results, 'target', (row) => row.threadCpuRatioToFloor, 'results', "× the floor's main-thread CPU", (row) => `overhead per step (${row})`);
      break;
    case 'ledger':
      rows(SPEED_LIMITS.ledger, report.rows, 'ledger', (row) => row.cpuRatioToFloor, 'rows', "× the floor's CPU", (row) => `the ledger alone (${row})`);
      break;
    case 'replay':
      figures.push({ path: 'cpu.share.warm', name: 'a warm replay', value: report.cpu.share.warm, unit: "of the run's CPU", limit: SPEED_LIMITS.replay.warm });
      figures.push({ path: 'cpu.share.cold', name: 'the first replay', value: report.cpu.share.cold, unit: "of the run's CPU", limit: SPEED_LIMITS.replay.cold });
      figures.push({ path: 'cli.share', name: '`savepoint replay` as a user runs it', value: report.cli.share, unit: "of `savepoint run`'s CPU", limit: SPEED_LIMITS.replay.cli });
      break;
    case 'tracing':
      rows(SPEED_LIMITS.tracing, report.addedPerStep, 'tracing', (row) => row.cpuShare, 'addedPerStep', "× tracing off's CPU added", (row) => `tracing per step (${row})`);
      break;
    case 'events':
      figures.push({ path: 'addedCpuShare', name: `${report.subscribers} subscribers of a run's events`, value: report.addedCpuShare, unit: "of the engine's CPU per step added", limit: SPEED_LIMITS.events });
      figures.push({ path: 'delivery.medianMs', name: "a record's write to its event's delivery, median", value: report.delivery.medianMs / report.delivery.stepMs, unit: "× the run's step time", limit: SPEED_LIMITS.eventsDelay });
      break;
    case 'growth':
      for (const name of CLI_TARGETS.commands) {
        figures.push({ path: `${name}.cpuRatioToStart`, name: `savepoint ${name} on one run`, value: report[name].cpuRatioToStart, unit: "× its process's Node start CPU", limit: SPEED_LIMITS.cli[name] });
        figures.push({ path: `served.${name}.cpuRatioToStart`, name: `savepoint ${name} on one run, serve answering`, value: report.served[name].cpuRatioToStart, unit: "× its process's Node start CPU", limit: SPEED_LIMITS.cliServed[name] });
      }
      break;
    case 'suite':
      figures.push({ path: 'ratioToFloor', name: `${report.command}'s CPU`, value: report.ratioToFloor, unit: "× the floor's batch", limit: SPEED_LIMITS.suite });
      break;
    case 'cold-start':
      for (const step of COLD_START_TARGETS.importCpuSteps) {
        const index = report.functions.findIndex((fn: any) => fn.step === step);
        figures.push({ path: `functions.${index}.importCpuRatio`, name: `${step}'s import`, value: report.functions[index].importCpuRatio, unit: "× the process's start CPU", limit: SPEED_LIMITS.coldStart });
      }
      if (Number(/^v(\d+)\./.exec(report.node)?.[1]) !== NODE_START_CPU.nodeMajor) {
        missing.push(`node: measured on ${report.node}, and the import target's ratio is over Node ${NODE_START_CPU.nodeMajor}'s start: measure NODE_START_CPU again (bench/check.ts)`);
      }
      break;
  }
  return { figures, missing };
}

const ratio = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(0));

/** A held figure as CI's log shows it: the value, its bound, and the target with the gap while unmet. */
export function heldLine(figure: HeldFigure): string {
  const { bound, target } = figure.limit;
  // A share of the run reads as a percentage, a ratio as "N×".
  const shown = (value: number) => (figure.unit.startsWith('×') ? ratio(value) : `${(value * 100).toFixed(0)}%`);
  const against = target === null ? 'no target stated' : figure.value <= target ? `target ${shown(target)}: ${figure.limit.caveat ?? 'met'}` : `target ${shown(target)}: ${ratio(figure.value / target)}× over it`;
  return `${figure.name}: ${shown(figure.value)}${figure.unit.startsWith('×') ? '' : ' '}${figure.unit} (CI bound ${shown(bound)}; ${against}${cpuMsAgainst(figure)})`;
}

/** A limit's target in ms of CPU per step, beside the figure: the row's CPU against it, said not held. */
function cpuMsAgainst({ limit, cpuMsPerStep }: HeldFigure): string {
  if (limit.cpuMsTarget === undefined || cpuMsPerStep === undefined) return '';
  const gap = cpuMsPerStep <= limit.cpuMsTarget ? 'met' : `${ratio(cpuMsPerStep / limit.cpuMsTarget)}× over it`;
  return `; ${cpuMsPerStep.toFixed(2)} ms of CPU a step against a target of ${limit.cpuMsTarget} ms, not held here: ${gap}`;
}

/**
 * What an agent added to a stack costs (bench/deploy.ts, issue 34): its resources under what the
 * shared control plane measured (82; 88 with the run events stream of issue 33; 74 in one stack and
 * 75.3 nested with each role's statements inline, infra/inline-policy-role.ts; 33 in one stack and
 * 40.8 in nested stacks of 4 with one API, one recovery and one ExecutionStopped per stack,
 * infra/stack-api.ts and infra/recovery.ts), held at the issue's target of 40 (44 nested: each
 * nested stack has its own API, beside the keys whose policies name its roles), at most $2 a month
 * idle, and the many-agent app within one operation's 2,500 resources and the parent's 200 outputs.
 */
export const DEPLOY_BOUNDS = { resourcesPerAgent: 40, nestedResourcesPerAgent: 44, idleDollarsPerAgent: 2 } as const;
const Deploy = z.object({
  flat: z.object({ perAgent: figure.max(DEPLOY_BOUNDS.resourcesPerAgent, { error: (issue) => `${issue.input} resources per added agent: over the bound of ${DEPLOY_BOUNDS.resourcesPerAgent}` }), idlePerAgent: figure.max(DEPLOY_BOUNDS.idleDollarsPerAgent, { error: (issue) => `$${issue.input} a month idle per added agent: over $${DEPLOY_BOUNDS.idleDollarsPerAgent}` }) }),
  nested: z.object({
    perAgent: figure.max(DEPLOY_BOUNDS.nestedResourcesPerAgent, { error: (issue) => `${issue.input} resources per added agent in nested stacks: over the bound of ${DEPLOY_BOUNDS.nestedResourcesPerAgent}` }),
    idlePerAgent: figure.max(DEPLOY_BOUNDS.idleDollarsPerAgent, { error: (issue) => `$${issue.input} a month idle per added nested agent: over $${DEPLOY_BOUNDS.idleDollarsPerAgent}` }),
    operation: figure.max(NESTED_STACK_OPERATION_RESOURCE_QUOTA, { error: (issue) => `${issue.input} resources in one operation: over CloudFormation's ${NESTED_STACK_OPERATION_RESOURCE_QUOTA}` }),
    parentOutputs: figure.max(STACK_OUTPUT_QUOTA, { error: (issue) => `${issue.input} outputs on the parent: over CloudFormation's ${STACK_OUTPUT_QUOTA}` }),
  }),
  synthMs: figure.positive(),
});

/** Each mode of bench/main.ts, the schema its `--json` must satisfy. */
export const REPORTS = { waste: Waste, overhead: Overhead, 'dynamodb-day': DynamoDbDay, cost: Cost, longruns: Longruns, ledger: Ledger, fleet: Fleet, 'fleet-model': FleetModel, 'fleet-agree': FleetAgreement, 'cold-start': ColdStart, growth: Growth, replay: Replay, tracing: Tracing, events: Events, deploy: Deploy, suite: Suite } as const;
export type Mode = keyof typeof REPORTS;

/** The problems with one benchmark's `--json` output, each naming the figure; empty when it measured. */
export function checkReport(mode: Mode, text: string): string[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return [`the output is not JSON (${error instanceof Error ? error.message : String(error)}): ${JSON.stringify(text.slice(0, 200))}`];
  }
  const parsed = REPORTS[mode].safeParse(json);
  if (!parsed.success) return parsed.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(report)'}: ${issue.message}`);
  const { figures, missing } = speedFigures(mode, parsed.data);
  return [...missing, ...figures.filter((figure) => !(figure.value <= figure.limit.bound)).map((figure) => `${figure.path}: slower than CI's bound: ${heldLine(figure)}`)];
}

// ---- main: `node --import tsx bench/check.ts <mode> [file]` (stdin without a file) -------------------

if (import.meta.filename === process.argv[1]) {
  const [mode, file] = process.argv.slice(2);
  if (!mode || !(mode in REPORTS)) {
    process.stderr.write(`usage: bench/check.ts <${Object.keys(REPORTS).join('|')}> [file]: got ${JSON.stringify(mode)}\n`);
    process.exit(2);
  }
  const text = readFileSync(file ?? 0, 'utf8');
  const problems = checkReport(mode as Mode, text);
  if (problems.length > 0) {
    process.stderr.write(`bench check: the ${mode} benchmark stopped measuring or got slower:\n${problems.map((problem) => `  ${problem}`).join('\n')}\n`);
    process.exit(1);
  }
  const report = JSON.parse(text);
  process.stdout.write(`bench check: ${mode}: ${summary(mode as Mode, report)}\n`);
  for (const figure of speedFigures(mode as Mode, report).figures) process.stdout.write(`  ${heldLine(figure)}\n`);
}

/** The figures CI's log shows for a mode that passed. */
function summary(mode: Mode, report: any): string {
  const fixed = (value: number, digits = 2) => value.toFixed(digits);
  switch (mode) {
    case 'suite':
      return `${report.command}: ${fixed(report.cpuSeconds.total, 1)} s of CPU (${fixed(report.cpuSeconds.user, 1)} user + ${fixed(report.cpuSeconds.system, 1)} system; target ${TEST_SUITE_TARGET.cpuSeconds} s at this machine's usual speed), ${fixed(report.wallSeconds, 0)} s of wall time at load ${report.load.map((load: number) => fixed(load, 1)).join('–')}; the floor's batch ${Math.round(report.floor.cpuMs)} ms (before the suite ${report.floor.beforeMs.join(', ')}, after it ${report.floor.afterMs.join(', ')}; usually ${TEST_SUITE_TARGET.floorCpuMs} here)`;
    case 'deploy':
      return `${report.flat.perAgent} resources and $${fixed(report.flat.idlePerAgent)}/month idle per added agent (nested: ${fixed(report.nested.perAgent, 1)}, $${fixed(report.nested.idlePerAgent)}; ${report.nested.operation} resources in one operation), synthesized in ${Math.round(report.synthMs)} ms`;
    case 'waste':
      return report.results
        .map((r: any) =>
          [
            `N=${r.n}: checkpoint ${fixed(r.checkpoint.executions.mean, 1)} executions/run (${r.checkpoint.executions.runs} runs)`,
            `restart ${fixed(r.restart.executions.mean, 1)} (${r.restart.executions.runs} runs)`,
            r.crashes ? `crashes ${fixed(r.crashes.executions.mean, 1)} (${r.crashes.executions.runs} runs, ${r.crashes.crashesSurvived.injected} injected + ${r.crashes.crashesSurvived.killedFromOutside} killed, 0 lost)` : 'no crash runs',
          ].join(', '),
        )
        .join('; ');
    case 'overhead': {
      // The DynamoDB row's requests per agent step, held above (a plain bound): printed with its target.
      const dynamodb = report.results.find((row: any) => row.dynamodb)?.dynamodb;
      const requests = dynamodb ? `, DynamoDB ${fixed(dynamodb.requestsPerStep)} requests/step (bound ${DYNAMODB_REQUESTS_PER_STEP.bound}, target ${DYNAMODB_REQUESTS_PER_STEP.target})` : '';
      return `${report.results.length} rows, ${fixed(report.aws.transitionsPerStep)} transitions/step${requests}, AWS $${fixed(report.aws.per100StepRun.dollars, 5)} per 100-step run, a ${report.parallelTurn.calls}-call turn in ${report.parallelTurn.turnMs} ms`;
    }
    case 'dynamodb-day': {
      const dynamodb = report.results.find((row: any) => row.dynamodb)?.dynamodb;
      return `${report.steps} steps, DynamoDB ${fixed(dynamodb.requestsPerStep)} requests/step (target ${DYNAMODB_REQUESTS_PER_STEP.target}), ${fixed(dynamodb.readUnitsPerStep)} read and ${fixed(dynamodb.writeUnitsPerStep)} write units/step`;
    }
    case 'cost':
      return `$${fixed(report.uncached.dollars, 4)} uncached, $${fixed(report.cached.dollars, 4)} cached (${fixed(report.ratio * 100, 1)}%)`;
    case 'longruns':
      return report.results.map((r: any) => `${r.steps} steps, ${r.eventsPerExecution.length} executions, ${r.compactions} compactions`).join('; ');
    case 'ledger':
      return report.rows.map((row: any) => `${row.ledger} ${fixed(row.msPerStep, 3)} ms/step (CPU ${fixed(row.cpuMsPerStep, 3)}, the floor's ${fixed(row.floor.cpuMsPerStep, 4)})`).join(', ');
    case 'cold-start': {
      const largest = report.functions.reduce((a: any, b: any) => (b.bundleBytes > a.bundleBytes ? b : a));
      const cpu = COLD_START_TARGETS.importCpuSteps.map((step) => `${step} ${fixed(report.functions.find((fn: any) => fn.step === step).importCpuMs, 0)} ms`).join(', ');
      return `${report.functions.length} functions, largest bundle ${largest.step} ${fixed(largest.bundleBytes / 1000, 0)} kB, import CPU ${cpu}`;
    }
    case 'growth':
      return `engine heap ${fixed(report.engine.heapPerRunKb, 1)} KB/run; ${(['status', 'runs', 'approvals', 'verifyAll'] as const).map((name) => `${name} ${report[name].oneRun.cpuMs} ms CPU / ${report[name].oneRun.peakRssMb} MB with 1 run, ${report[name].manyRuns.cpuMs} ms CPU / ${report[name].manyRuns.peakRssMb} MB with ${report.options.runs}, CPU ${fixed(pairedRatio(report[name].cpuMsPairs))}×`).join('; ')}; ${report.stateDir.bytesPerRun} bytes/run on disk`;
    case 'replay':
      return `${report.steps} steps: run ${report.runMs} ms, replay cold ${report.replays.coldMs} ms (${fixed(report.share.cold * 100, 0)}%), warm ${report.replays.warmMedianMs ?? '-'} ms; CPU: run ${report.cpu.runMs} ms, replay cold ${report.cpu.coldMs} ms, warm ${report.cpu.warmMedianMs} ms; as a user runs them: run ${report.cli.runCpuMs} ms (median of ${report.cli.runCpuMsSamples.join(', ')}), replay ${report.cli.replayCpuMs.join(', ')} ms of CPU; ${report.liveCalls} live calls`;
    case 'events':
      return `${report.steps} steps, ${report.eventsPerRun} events a run: write → delivery median ${report.delivery.medianMs} ms, p99 ${report.delivery.p99Ms} ms (a step ${fixed(report.delivery.stepMs)} ms); resume after ${report.resume.disconnects} disconnects: ${report.resume.lost} lost, ${report.resume.duplicated} duplicated`;
    case 'tracing':
      return `${report.steps} steps: ${report.rows.map((row: any) => `${row.tracing} ${fixed(row.msPerStep, 3)} ms/step (CPU ${fixed(row.cpuMsPerStep, 3)})`).join(', ')}; ${report.exportRequests} export requests`;
    case 'fleet-model':
      return `model: ${report.completed}/${report.runs} runs completed, ${report.lost} lost, starts sustained ≥ ${report.sustainedStarts.perSecond}/s for ${report.sustainedStarts.seconds} simulated s (bar: ${FLEET_TARGET.startsPerSecond}/s for ${FLEET_TARGET.sustainedSeconds} s), ${report.controlPlaneThrottles} control-plane throttles, Lambda ${report.lambda.throttles} throttles retried (peak ${report.lambda.peakConcurrent} of ${report.lambda.limit}); fleet budget: ${report.fleetBudget.counterWrites} counter writes (peak ${report.fleetBudget.peakWritesPerSecond}/s), ${report.fleetBudget.throttled} throttled, ${report.fleetBudget.failedConditions} failed conditions, leased at most $${fixed(report.fleetBudget.leasedPeakMicros / 1e6)} of $${fixed(report.fleetBudget.limitMicros / 1e6)}`;
    case 'fleet-agree':
      return `${report.handlers.runs} runs: handlers and model agree on Step Functions calls per run ${JSON.stringify(report.handlers.sfnCallsPerRun)}, ${report.handlers.controlPlaneThrottles} control-plane throttles, ${report.handlers.lost} lost`;
    case 'fleet':
      return `${report.completed}/${report.runs} runs completed, ${report.lost} lost, ${report.startsPerSecond} starts/s (bound ${report.sustainedStartsBound.perSecond}/s), ${report.stepsPerSecond} steps/s, ${report.sfnApiCallsPerStep} Step Functions calls/step, ${report.throttled.attempts} throttled (quotas ${report.throttled.quotasOn ? 'on' : 'off'})`;
  }
}
