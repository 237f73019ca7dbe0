/**
 * `npm run bench -- --overhead [--steps 100] [--runs 10] [--ledgers memory,disk,dynalite] [--json]`
 * (`disk-sync` among the ledgers: on disk with `durability: 'sync'`, every write fdatasync'd):
 * what the harness costs per agent step.
 *
 * The workload: the refund reconciler on a day of N agent steps (model turns + tool calls), p = 0,
 * the simulated payments provider in process with no added latency. Each row is measured in a
 * process of its own (bench/overhead-target.ts), so that its peak RSS is its own: the whole local
 * stack — the synthesized definition on the in-process engine, the step handlers, the ledger —
 * runs once to warm up and then `runs` times, and each figure is the median over the runs:
 *   - ms per agent step: the run's wall time / N (and the process's CPU time / N, steadier when
 *     other work shares the machine, and the main thread's alone, steadier still: the process's
 *     counts V8's background threads, whose concurrent marking of the row's garbage lands in
 *     whichever run is going on, the floor's included);
 *   - ledger calls per agent step: every call through the ledger (a counting decorator) / N;
 *   - state transitions per agent step: states entered / N;
 *   - peak RSS: the row's process's, after its first run (what one N-step run needs, startup
 *     included), and after all its runs.
 * And the latency of one turn of 4 parallel tool calls of 1 s each, on simulated time
 * (bench/parallel-turn.ts): about 1 s when they run side by side, 4 s one after another.
 * Which model answers:
 *   - the ledger rows: a scripted model that does no work (bench/scripted-model.ts): each turn is
 *     the warm-up run's recorded turn, replayed through the same ModelClient interface the
 *     providers implement. The harness around the call runs in full; the model's own CPU does not
 *     count as the harness's overhead.
 *   - the "wire-format simulated model" row: the simulated model of `savepoint run` (sim/), called
 *     in process through the HTTP client and the Anthropic wire format, on the embedded ledger in
 *     memory: what a local run pays per step, simulator included.
 * The floor: the same definition on the local engine (the interpreter with the engine's history,
 * timers and task wrapper; no IAM twin) with stub tasks that return what the real steps returned,
 * in the same order (no ledger, no model, no HTTP): a cut to the engine comes off the floor too, so
 * only what the harness adds to it moves the ratio. Each row's process runs it
 * too, in batches of FLOOR_RUNS_PER_BATCH runs before the row's first run and after each run, and
 * the row's "× floor" is the median over its runs of each run's figure over the floor's around it
 * (the batches just before and after it): measured in the same process in the same seconds (the
 * machine's speed may change between rows, and during a row); the floor's own row, in its own
 * process, gives its peak RSS and its figure alone. Nothing here is a test; nothing is hard-coded.
 */
import { peakRssKb } from './peak-rss-kb.mjs';
import { historyAtStart } from '../lambdas/guards/history.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { countingLedger, type CountingLedger } from '../lambdas/ledger/counting-ledger.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { ToolUseBlock } from '../lambdas/records/messages.js';
import { Steps } from '../lambdas/shared/steps.js';
import { parseOrThrow } from '../lambdas/shared/validation.js';
import { extractStateMachine, type CfnTemplateJson } from '../local/template/asl.js';
import { LocalEngine, summarizeHistory, type TaskBinding } from '../local/engine/local-engine.js';
import type { LedgerKind } from '../local/runtime/local-stack.js';
import { ledgerTableFromTemplate } from '../local/template/synthesize.js';
import { cachedTemplate, validatedDefinitions } from '../local/template/cache.js';
import { AWS_PRICES, awsBill, lambdaDollarsPerSecondWaiting } from './aws-cost.js';
import { dynamoMeter, lambdaMeter, memoryByState, type DynamoUsage, type LambdaUsage } from './meters.js';
import { benchStack, runOnce } from './pipeline.js';
import { benchProcess } from './processes.js';
import { scriptedModel } from './scripted-model.js';
import { cliRun, type CliRun } from './cli-rss.js';
import { median, pairedRatio, threadCpuClock } from './stats.js';
import { dayWithSteps } from './workload.js';
import { parallelTurnLatency } from './parallel-turn.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export const TARGETS = { memory: 'embedded ledger, in memory', disk: 'embedded ledger, on disk', 'disk-sync': 'embedded ledger, on disk, durability sync', dynalite: 'DynamoDB ledger on dynalite' } as const;
export type Target = keyof typeof TARGETS;
/** Which model answers a row's runs (see the header). */
export type ModelKind = 'scripted' | 'wire';

const Options = z.object({
  steps: z.coerce.number().int().min(10).max(400),
  runs: z.coerce.number().int().min(1).max(200),
  ledgers: z
    .string()
    .transform((text) => text.split(','))
    .pipe(z.array(z.enum(Object.keys(TARGETS) as [Target, ...Target[]])).min(1)),
  json: z.boolean(),
});

export interface OverheadFigures {
  target: string;
  model: ModelKind | 'none';
  msPerStep: number;
  /** Median CPU ms (user + system, the whole process) per agent step: steadier than wall time on a shared machine. */
  cpuMsPerStep: number;
  /**
   * The ratios to the floor measured in the row's own process: the median over the row's runs of
   * each run's figure over the floor's around it (floor runs just before and just after it), so a
   * change of the machine's speed during the runs slows each run and its floor alike.
   */
  ratioToFloor?: number;
  cpuRatioToFloor?: number;
  /** The floor's median ms (wall and CPU) per step, around the row's runs (each run's bracketing batches). */
  floorMsPerStep?: number;
  floorCpuMsPerStep?: number;
  /** Each run's CPU ms per step beside its floor's: [floor, row], the pairs `cpuRatioToFloor` is the median ratio of. */
  cpuPairs?: [floor: number, row: number][];
  /** The same on the main thread's CPU alone (bench/stats.ts threadCpuMs), where Node can say. */
  threadCpuMsPerStep?: number;
  floorThreadCpuMsPerStep?: number;
  threadCpuRatioToFloor?: number;
  threadCpuPairs?: [floor: number, row: number][];
  ledgerCallsPerStep?: number;
  /** Median calls per agent step, by ledger method. */
  callsByMethod?: Record<string, number>;
  transitionsPerStep: number;
  /** Transitions per agent step by state (what Step Functions bills, state by state). */
  transitionsByState?: Record<string, number>;
  /** What AWS Lambda would bill per agent step (bench/meters.ts): invocations, handler time rounded up to 1 ms each, GB-seconds. */
  lambda?: { invocationsPerStep: number; billedMsPerStep: number; gbSecondsPerStep: number; memoryMbByState: Record<string, number> };
  /** The DynamoDB ledger's requests and request units per agent step (bench/meters.ts), on the dynalite row. */
  dynamodb?: {
    requestsPerStep: number;
    byOperation: Record<string, number>;
    readUnitsPerStep: number;
    absentReadUnitsPerStep: number;
    writeUnitsPerStep: number;
    indexWriteUnitsPerStep: number;
    largestItemBytes: number;
    unmetered: number;
  };
  /**
   * The twin's IAM decisions over all the row's runs (warm-up and measured): every Lambda invoke,
   * Step Functions call, ledger call (as its DynamoDB request) and Secrets Manager, KMS and
   * EventBridge call, decided against the template's policies (local/aws/iam). Enforcement was on
   * when `allowed` is not 0; nothing was refused when `denied` is 0. Absent on the floor.
   */
  iam?: { allowed: number; denied: number; byService: Record<string, { allowed: number; denied: number }> };
  /** The row's process's peak RSS after its first 100-step run (startup included): what one run needs. */
  peakRssMb: number;
  /** …and after all its runs (warm-up and measured): what the runs kept on top of one. */
  peakRssAllRunsMb: number;
  runs: number;
}

/** What each turn of a finished run did: the floor's stub tasks return the same, in the same order. */
export interface RecordedTurn {
  turn: number;
  stopReason: string;
  tools: string[];
}

/**
 * Agent steps run before the measured runs, in every row alike and again by the floor: the JIT
 * compiles the same code paths after the same number of calls, whichever row it is. One warm-up
 * run left the floor ~5× slower than its warm figure; after five runs of CI's 20 steps it was
 * still getting cheaper — 0.154 to 0.107 ms of main-thread CPU a step over the next twelve runs
 * while the row's moved less (0.92 to 0.68), so the row's ratio rose from ~4.5 to ~6 with the
 * number of runs measured, and a CI report read 8.47 against the bound of 7.5 on a floor caught
 * warming. After 600 steps (30 runs of 20) both are flat: twelve runs of each row within ±15% of
 * their median (2026-12-07).
 */
const WARM_UP_STEPS = 600;

/** Warm-up runs for runs of `steps` steps: WARM_UP_STEPS in all, and at least five (a run's own start and end). */
export const warmUpRuns = (steps: number) => Math.max(5, Math.ceil(WARM_UP_STEPS / steps));

/**
 * Floor runs in each batch: a batch before a row's first run and one after each run, so every run
 * is bracketed by floor runs taken in the seconds around it. A floor run of CI's 20 steps is about
 * 5 ms of CPU: with 3 after each run (9 in all) the floor's figure was the ratio's main noise (CI's
 * form measured 1.84–5.33 in memory over 32 reports at load 2–11); a batch of 8 does about as much
 * work as the row's run it brackets.
 */
const FLOOR_RUNS_PER_BATCH = 8;

/** Decisions by action, summed by service (`dynamodb`, `kms`, `lambda`, `states`, …). */
function byService(byAction: Record<string, { allowed: number; denied: number }>): Record<string, { allowed: number; denied: number }> {
  const services: Record<string, { allowed: number; denied: number }> = {};
  for (const [action, counts] of Object.entries(byAction)) {
    const service = (services[action.split(':')[0]!] ??= { allowed: 0, denied: 0 });
    service.allowed += counts.allowed;
    service.denied += counts.denied;
  }
  return services;
}

/** One transition per state entered: the figure the Step Functions bill counts. */
const transitions = (states: ReturnType<typeof summarizeHistory>) => Object.values(states).reduce((sum, state) => sum + state.entered, 0);
const peakRssMb = () => Math.round(peakRssKb() / 1024);

/**
 * Every run of a row works the same day, on one ledger: without this, the refunds and reviews
 * (effects named by a business key, claimed across runs) would all be the warm-up run's, and each
 * later run would be answered from its records and send nothing. Scoped to the run, each run
 * claims, sends and completes its own effects, as a new day's requests would.
 */
export function runScopedEffects(ledger: Ledger): Ledger {
  // The run goes after the agent's name (`<agent>:<tool>:<business key>`): each agent's roles reach only its own effects (EFFECT#<agent>:*).
  const scoped = (runId: string, effect: { key: string } | undefined) => effect && { ...effect, key: effect.key.replace(/^([^:]*:)/, `$1${runId}/`) };
  // The methods that name an effect, and where: claimCall's holder (the call's run), releaseCall's `effect` (after the run id), the others' `effect` field of their one argument.
  const at: Partial<Record<keyof Ledger, number | 'field'>> = { claimCall: 2, completeCall: 'field', releaseCall: 4, renewCall: 'field' };
  // One wrapper per method, made on its first use: the benchmark's own decorator costs the row as little as it can.
  const wrappers = new Map<PropertyKey, { method: unknown; wrapper: unknown }>();
  return new Proxy(ledger, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      const known = wrappers.get(property);
      if (known?.method === value) return known.wrapper;
      const wrapper = wrap(target, property, value as (...args: unknown[]) => unknown);
      wrappers.set(property, { method: value, wrapper });
      return wrapper;
    },
  });
  function wrap(target: Ledger, property: PropertyKey, value: (...args: unknown[]) => unknown) {
    const index = at[property as keyof Ledger];
    if (index === undefined) return value.bind(target);
    if (index === 'field') {
      return (arg: { runId: string; effect?: { key: string } }) => value.call(target, { ...arg, effect: scoped(arg.runId, arg.effect) });
    }
    return (...args: unknown[]) => {
      const runId = property === 'claimCall' ? (args[0] as { runId: string }).runId : (args[0] as string);
      const scopedArgs = [...args];
      if (args.length > index) scopedArgs[index] = scoped(runId, args[index] as { key: string } | undefined);
      return value.apply(target, scopedArgs);
    };
  }
}

/** One ledger row, in this process: a warm-up run, then `runs` measured runs. */
export async function measureStack(target: Target, model: ModelKind, template: CfnTemplateJson, steps: number, runs: number, progress: (line: string) => void) {
  const { day } = dayWithSteps(steps);
  const stateDir = target === 'memory' ? undefined : mkdtempSync(join(tmpdir(), `savepoint-overhead-${target}-`));
  let counter: CountingLedger | undefined;
  const scripted = scriptedModel();
  let floors: ReturnType<typeof floorEngine> | undefined;
  // Subscribed before the stack starts: the meter sees every item written, so it knows each put's old item.
  const dynamo = target === 'dynalite' ? dynamoMeter(ledgerTableFromTemplate(template as never, 'metered')) : undefined;
  const stack = await benchStack({
    day,
    template,
    failRate: 0,
    seed: 1,
    stateDir,
    // Only the ledger goes to disk: the provider is reset to the same day before every run.
    worldInMemory: true,
    ledger: (target === 'dynalite' ? 'dynalite' : 'embedded') satisfies LedgerKind,
    ...(target === 'disk-sync' && { durability: 'sync' as const }),
    decorateLedger: (ledger) => (counter = countingLedger(runScopedEffects(ledger))).ledger,
    ...(model === 'scripted' && { wrapModel: scripted.wrap }),
  });
  const memory = memoryByState(template);
  const lambda = lambdaMeter(stack.engine, memory);
  try {
    // The warm-up run is the simulated model's, on the wire: the scripted model replays its turns.
    const warm = await runOnce(stack, 'overhead-warm-up', day);
    const oneRunRssMb = peakRssMb();
    if (warm.status !== 'SUCCEEDED' || warm.steps !== steps) throw new Error(`${target}: the warm-up run ${warm.status} after ${warm.steps} of ${steps} steps`);
    const { turns } = await stack.ledger.listConversation('overhead-warm-up');
    scripted.replay(turns);
    const recorded: RecordedTurn[] = turns.map((turn) => ({
      turn: turn.turn,
      stopReason: turn.stopReason,
      tools: turn.content.filter((block): block is ToolUseBlock => block.type === 'tool_use').map((block) => block.name),
    }));
    // The floor, in this process, run after each of the row's runs: the ratio compares two
    // figures taken in the same minutes, whatever else the machine was doing then.
    const floor = floorEngine(template, recorded, steps);
    floors = floor;
    // The rest of the warm-up (the JIT's), on the model that is measured, and the floor's.
    for (let warm = 2; warm <= warmUpRuns(steps); warm++) await runOnce(stack, `overhead-warm-up-${warm}`, day);
    for (let warm = 1; warm <= warmUpRuns(steps); warm++) await floor.once(`floor-warm-up-${warm}`);
    // The floor's figure (per step, median of a batch's runs) before the first run and after each run.
    const floorBatch = async (label: string) => {
      const batch = [];
      for (let again = 1; again <= FLOOR_RUNS_PER_BATCH; again++) batch.push(await floor.once(`floor-${label}-${again}`));
      return batch;
    };
    const floorBatches = [await floorBatch('0')];
    const samples: { ms: number; cpuMs: number; threadCpuMs: number | undefined; calls: number; transitions: number; byState: Record<string, number>; byMethod: Record<string, number>; lambda: LambdaUsage; dynamo?: DynamoUsage }[] = [];
    for (let run = 1; run <= runs; run++) {
      counter!.reset();
      lambda.reset();
      dynamo?.reset();
      const runId = `overhead-${run}`;
      // The ledger's meters as the execution ended: the run's requests, not the benchmark's own read of the run after it.
      let metered: { calls: number; byMethod: Record<string, number>; dynamo?: DynamoUsage } | undefined;
      const attempt = await runOnce(stack, runId, day, () => (metered = { calls: counter!.total(), byMethod: counter!.counts(), ...(dynamo && { dynamo: dynamo.usage() }) }));
      if (attempt.status !== 'SUCCEEDED' || attempt.steps !== steps) throw new Error(`${target}: run ${run} ${attempt.status} after ${attempt.steps} steps`);
      // Each measured run does the side effects the first did (none answered from an earlier run's records).
      if (attempt.sideEffects !== warm.sideEffects) throw new Error(`${target}: run ${run} made ${attempt.sideEffects} side effects, the warm-up run ${warm.sideEffects}`);
      const states = summarizeHistory(stack.engine.getExecutionHistory(attempt.executionArn));
      const invoked = lambda.usage();
      if (invoked.invocations !== attempt.invocations) throw new Error(`${target}: the Lambda meter saw ${invoked.invocations} invocations, the history has ${attempt.invocations}`);
      const ledgerUse = metered!;
      samples.push({
        ms: attempt.wallMs / steps,
        cpuMs: attempt.cpuMs / steps,
        threadCpuMs: attempt.threadCpuMs === undefined ? undefined : attempt.threadCpuMs / steps,
        calls: ledgerUse.calls / steps,
        transitions: transitions(states) / steps,
        byState: Object.fromEntries(Object.entries(states).map(([state, summary]) => [state, summary.entered])),
        byMethod: ledgerUse.byMethod,
        lambda: invoked,
        ...(ledgerUse.dynamo && { dynamo: ledgerUse.dynamo }),
      });
      floorBatches.push(await floorBatch(String(run)));
      const around = bracketingFloor(floorBatches.at(-2)!, floorBatches.at(-1)!);
      progress(`  ${target} (${model} model) run ${run}: ${(attempt.cpuMs / steps).toFixed(2)} ms of CPU/step (floor ${around.cpuMs.toFixed(3)}), ${(ledgerUse.calls / steps).toFixed(2)} ledger calls/step`);
    }
    if (model === 'scripted' && scripted.replayed() === 0) throw new Error(`${target}: the scripted model answered no call`);
    const methods = new Set(samples.flatMap((sample) => Object.keys(sample.byMethod)));
    const callsByMethod = Object.fromEntries(
      [...methods].map((method) => [method, round(median(samples.map((sample) => (sample.byMethod[method] ?? 0) / steps)), 3)]).sort((a, b) => Number(b[1]) - Number(a[1])),
    );
    const msPerStep = median(samples.map((sample) => sample.ms));
    const cpuMsPerStep = median(samples.map((sample) => sample.cpuMs));
    // Each run against the floor around it (the batches before and after it): a change of the
    // machine's load during the row's runs slows the run and its floor alike, pair by pair.
    const floorAround = samples.map((_, index) => bracketingFloor(floorBatches[index]!, floorBatches[index + 1]!));
    const floorMs = median(floorAround.map((around) => around.ms));
    const floorCpuMs = median(floorAround.map((around) => around.cpuMs));
    // The same pairs on the main thread's CPU alone, where Node can say.
    const threadPairs = samples.every((sample, index) => sample.threadCpuMs !== undefined && floorAround[index]!.threadCpuMs !== undefined)
      ? samples.map((sample, index) => [floorAround[index]!.threadCpuMs!, sample.threadCpuMs!] as [floor: number, row: number])
      : undefined;
    const perStep = (of: (sample: (typeof samples)[number]) => number) => median(samples.map((sample) => of(sample) / steps));
    const dynamoSamples = samples.flatMap((sample) => (sample.dynamo ? [sample.dynamo] : []));
    const operations = new Set(dynamoSamples.flatMap((usage) => Object.keys(usage.byOperation)));
    return {
      figures: {
        target: model === 'wire' ? `${TARGETS[target]}, wire-format simulated model` : TARGETS[target],
        model,
        msPerStep,
        cpuMsPerStep,
        floorMsPerStep: floorMs,
        floorCpuMsPerStep: floorCpuMs,
        ratioToFloor: pairedRatio(samples.map((sample, index) => [floorAround[index]!.ms, sample.ms])),
        cpuRatioToFloor: pairedRatio(samples.map((sample, index) => [floorAround[index]!.cpuMs, sample.cpuMs])),
        cpuPairs: samples.map((sample, index) => [round(floorAround[index]!.cpuMs, 4), round(sample.cpuMs, 4)]),
        ...(threadPairs && {
          threadCpuMsPerStep: median(threadPairs.map(([, row]) => row)),
          floorThreadCpuMsPerStep: median(threadPairs.map(([floor]) => floor)),
          threadCpuRatioToFloor: pairedRatio(threadPairs),
          threadCpuPairs: threadPairs.map(([floor, row]) => [round(floor, 4), round(row, 4)]),
        }),
        ledgerCallsPerStep: median(samples.map((sample) => sample.calls)),
        callsByMethod,
        transitionsPerStep: median(samples.map((sample) => sample.transitions)),
        transitionsByState: Object.fromEntries(
          Object.keys(samples[0]?.byState ?? {})
            .map((state) => [state, round(perStep((sample) => sample.byState[state] ?? 0), 3)] as const)
            .sort((a, b) => b[1] - a[1]),
        ),
        lambda: {
          invocationsPerStep: perStep((sample) => sample.lambda.invocations),
          billedMsPerStep: perStep((sample) => sample.lambda.billedMs),
          gbSecondsPerStep: perStep((sample) => sample.lambda.gbSeconds),
          memoryMbByState: memory,
        },
        ...(dynamoSamples.length > 0 && {
          dynamodb: {
            requestsPerStep: perStep((sample) => sample.dynamo!.requests),
            byOperation: Object.fromEntries([...operations].map((operation) => [operation, round(perStep((sample) => sample.dynamo!.byOperation[operation] ?? 0), 3)])),
            readUnitsPerStep: perStep((sample) => sample.dynamo!.readUnits),
            absentReadUnitsPerStep: perStep((sample) => sample.dynamo!.absentReadUnits),
            writeUnitsPerStep: perStep((sample) => sample.dynamo!.writeUnits),
            indexWriteUnitsPerStep: perStep((sample) => sample.dynamo!.indexWriteUnits),
            largestItemBytes: Math.max(...dynamoSamples.map((usage) => usage.largestItemBytes)),
            unmetered: dynamoSamples.reduce((sum, usage) => sum + usage.unmetered, 0),
          },
        }),
        ...(stack.iam && { iam: { ...stack.iam.decisions(), byService: byService(stack.iam.authorizer.decisionsByAction()) } }),
        peakRssMb: oneRunRssMb,
        peakRssAllRunsMb: peakRssMb(),
        runs,
      } satisfies OverheadFigures,
      recorded,
    };
  } finally {
    lambda.close();
    dynamo?.close();
    await floors?.close();
    await stack.close();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  }
}

type Timed = { ms: number; cpuMs: number; threadCpuMs: number | undefined };

/** The floor around a row's run: the median per step of the floor runs in the batches before and after it. */
function bracketingFloor(before: readonly Timed[], after: readonly Timed[]): Timed {
  const runs = [...before, ...after];
  const threads = runs.flatMap((run) => (run.threadCpuMs === undefined ? [] : [run.threadCpuMs]));
  return { ms: median(runs.map((run) => run.ms)), cpuMs: median(runs.map((run) => run.cpuMs)), threadCpuMs: threads.length === runs.length ? median(threads) : undefined };
}

/**
 * The floor: the same definition on the local engine (the interpreter, its history and timers),
 * every Task a stub returning the recorded step's result. `once` runs one execution and returns its figures per agent step.
 */
function floorEngine(template: CfnTemplateJson, turns: RecordedTurn[], steps: number) {
  const extracted = extractStateMachine(template);
  const calls = (turn: number) => (turns[turn - 1]?.tools ?? []).map((name, index) => ({ turn, call: index + 1, name }));
  const stubs: Record<string, (payload: any) => unknown> = {
    [Steps.StartRun]: (payload) => ({ runId: payload.event.runId, action: 'start', status: 'running', history: historyAtStart(0) }),
    // CallModel decides, then makes the turn; after the last turn it finds the run done. The history
    // estimate passes through each decision, as the real step's does (lambdas/guards/history.ts).
    [Steps.CallModel]: (() => {
      let turn = 0;
      return (payload: { history: unknown }) => {
        if (++turn > turns.length) return (turn = 0), { continue: false, status: 'succeeded', reason: 'done', history: payload.history };
        const made = turns[turn - 1]!;
        return { continue: true, nextTurn: turn, pending: null, history: payload.history, turn, stopReason: made.stopReason, toolCalls: made.tools.length, calls: calls(turn) };
      };
    })(),
    [Steps.CallTool]: (payload) => ({ turn: payload.turn, call: payload.call, name: turns[payload.turn - 1]!.tools[payload.call - 1], outcome: 'ok' }),
    [Steps.Finalize]: (payload) => ({ runId: payload.runId, status: 'succeeded' }),
  };
  const tasks: Record<string, TaskBinding> = {};
  for (const [stateName, task] of Object.entries(extracted.tasks)) {
    const stub = stubs[task.step] ?? (() => ({}));
    tasks[stateName] = { waitForTaskToken: task.waitForTaskToken, invoke: async (payload) => stub(payload) };
  }
  // Validated once per definition, as the local stack's engine is (the validator's memory stays out of the row).
  const engine = new LocalEngine({ definition: extracted.definition, stateMachineArn: extracted.stateMachineArn, tasks, validated: validatedDefinitions() });
  return {
    once: async (name: string) => {
      const started = performance.now();
      const cpuBefore = process.cpuUsage();
      const threadCpu = threadCpuClock();
      const { executionArn } = engine.startExecution({ name, input: { runId: name, input: {} } });
      const done = await engine.waitForExecution(executionArn);
      const cpu = process.cpuUsage(cpuBefore);
      const threadCpuMs = threadCpu();
      if (done.status !== 'SUCCEEDED') throw new Error(`the floor's run ${name} ${done.status}: ${done.error} ${done.cause}`);
      return {
        ms: (performance.now() - started) / steps,
        cpuMs: (cpu.user + cpu.system) / 1000 / steps,
        threadCpuMs: threadCpuMs === undefined ? undefined : threadCpuMs / steps,
        transitions: transitions(summarizeHistory(engine.getExecutionHistory(executionArn))) / steps,
      };
    },
    close: () => engine.close(),
  };
}

/** The floor's own row, in its own process (its peak RSS is the local engine's with stub tasks). */
export async function measureFloor(template: CfnTemplateJson, turns: RecordedTurn[], steps: number, runs: number) {
  const floor = floorEngine(template, turns, steps);
  try {
    await floor.once('floor-warm-up-1');
    const oneRunRssMb = peakRssMb();
    for (let warm = 2; warm <= warmUpRuns(steps); warm++) await floor.once(`floor-warm-up-${warm}`);
    const samples = [];
    for (let run = 1; run <= runs; run++) samples.push(await floor.once(`floor-${run}`));
    return {
      target: 'floor: local engine, stub tasks',
      model: 'none',
      msPerStep: median(samples.map((sample) => sample.ms)),
      cpuMsPerStep: median(samples.map((sample) => sample.cpuMs)),
      ...(samples.every((sample) => sample.threadCpuMs !== undefined) && { threadCpuMsPerStep: median(samples.map((sample) => sample.threadCpuMs!)) }),
      transitionsPerStep: median(samples.map((sample) => sample.transitions)),
      peakRssMb: oneRunRssMb,
      peakRssAllRunsMb: peakRssMb(),
      runs,
    } satisfies OverheadFigures;
  } finally {
    await floor.close();
  }
}

function round(value: number, digits = 2): number {
  return Number(value.toFixed(digits));
}

/** What one row's process is asked to measure (bench/overhead-target.ts). */
export type RowJob =
  | { kind: 'stack'; target: Target; model: ModelKind; steps: number; runs: number }
  | { kind: 'floor'; turns: RecordedTurn[]; steps: number; runs: number };

/** Measures one row in this process (the row's own process): its figures, and the recorded turns of a stack row. */
export async function measureRow(job: RowJob, progress: (line: string) => void): Promise<{ figures: OverheadFigures; recorded?: RecordedTurn[] }> {
  // From the template cache, as `savepoint run` reads it: the CDK (and its memory) stays out of the process.
  const template = (await cachedTemplate('refund-reconciler')) as CfnTemplateJson;
  if (job.kind === 'floor') return { figures: await measureFloor(template, job.turns, job.steps, job.runs) };
  return measureStack(job.target, job.model, template, job.steps, job.runs, progress);
}

/** Runs one row in a child process; its last stdout line is the result. */
async function rowInProcess(job: RowJob, progress: (line: string) => void): Promise<{ figures: OverheadFigures; recorded?: RecordedTurn[] }> {
  let seen = 0;
  const ended = await benchProcess('./overhead-target.ts', job, {
    onStderr: (text) => {
      progress(text.slice(seen).replace(/\n$/, ''));
      seen = text.length;
    },
  });
  const last = ended.stdout.trim().split('\n').at(-1);
  if (ended.code !== 0 || !last) throw new Error(`overhead: the ${job.kind === 'floor' ? 'floor' : job.target} process ended with ${ended.signal ?? `code ${ended.code}`}`);
  return JSON.parse(last) as { figures: OverheadFigures; recorded?: RecordedTurn[] };
}

export async function overheadBenchmark(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      overhead: { type: 'boolean', default: true },
      steps: { type: 'string', default: '100' },
      runs: { type: 'string', default: '10' },
      ledgers: { type: 'string', default: 'memory,disk,dynalite' },
      json: { type: 'boolean', default: false },
    },
  });
  const options = parseOrThrow(Options, values, 'options');
  const progress = (line: string) => {
    if (line) process.stderr.write(`${line}\n`);
  };
  const { steps, runs } = options;
  const results: OverheadFigures[] = [];
  let recorded: RecordedTurn[] | undefined;
  // One process per row, one row at a time: each row's peak RSS is its own, and rows do not share the CPU.
  const jobs: RowJob[] = [
    ...options.ledgers.map((target) => ({ kind: 'stack' as const, target, model: 'scripted' as const, steps, runs })),
    { kind: 'stack', target: 'memory', model: 'wire', steps, runs },
  ];
  for (const job of jobs) {
    if (job.kind !== 'stack') continue;
    progress(`overhead: ${TARGETS[job.target]}, ${job.model} model, ${steps} steps × ${runs} runs…`);
    const measured = await rowInProcess(job, progress);
    results.push(measured.figures);
    recorded ??= measured.recorded;
  }
  progress(`overhead: the floor, ${steps} steps × ${runs} runs…`);
  const floor = (await rowInProcess({ kind: 'floor', turns: recorded!, steps, runs }, progress)).figures;
  results.push(floor);
  // The same N steps as a user runs them: `savepoint run` in a process of its own, per ledger.
  const cliRuns: CliRun[] = [];
  for (const target of options.ledgers) {
    progress(`overhead: savepoint run, ${TARGETS[target]}, ${steps} steps…`);
    cliRuns.push(await cliRun(target, steps));
  }

  // A turn of 4 parallel calls, each 1 s of simulated tool latency (bench/parallel-turn.ts).
  progress('overhead: a turn of 4 parallel tool calls, 1 s each, on simulated time…');
  const parallelTurn = await parallelTurnLatency({ calls: 4, toolLatencyMs: 1_000 });

  const aws = awsFigures(results, steps);
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ steps, runs, node: process.version, results, cliRuns, aws, parallelTurn }, null, 2)}\n`);
    return;
  }
  const header = ['', 'ms/step', '× floor', 'CPU ms/step', '× floor', 'main thread', '× floor', 'ledger calls/step', 'transitions/step', 'peak RSS MB', 'after all runs'];
  const rows = results.map((result) => [
    result.target,
    result.msPerStep.toFixed(3),
    result.ratioToFloor === undefined ? '1' : result.ratioToFloor.toFixed(1),
    result.cpuMsPerStep.toFixed(3),
    result.cpuRatioToFloor === undefined ? '1' : result.cpuRatioToFloor.toFixed(1),
    result.threadCpuMsPerStep === undefined ? '–' : result.threadCpuMsPerStep.toFixed(3),
    result.threadCpuRatioToFloor === undefined ? (result.cpuRatioToFloor === undefined ? '1' : '–') : result.threadCpuRatioToFloor.toFixed(1),
    result.ledgerCallsPerStep === undefined ? '–' : result.ledgerCallsPerStep.toFixed(2),
    result.transitionsPerStep.toFixed(2),
    String(result.peakRssMb),
    String(result.peakRssAllRunsMb),
  ]);
  const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column]!.length)));
  const line = (row: string[]) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  console.log(`overhead per agent step: N = ${steps}, p = 0, median of ${runs} runs after ${warmUpRuns(steps)} warm-up runs, each row in its own process (Node ${process.version})`);
  console.log('model: the ledger rows replay the warm-up run\'s recorded turns (a scripted model that does no work);');
  console.log('       the wire-format row calls the simulated model through the HTTP client, as `savepoint run` does; the floor has no model');
  console.log(`× floor: the median over the row's runs of each run against the floor measured in the row's own process around it (${FLOOR_RUNS_PER_BATCH} floor runs before it and ${FLOOR_RUNS_PER_BATCH} after)`);
  console.log("main thread: its CPU alone, without V8's background threads (what CI holds: bench/check.ts)");
  console.log(`peak RSS: the row's process after its first ${steps}-step run (startup included), and after all ${warmUpRuns(steps) + runs} runs`);
  console.log(line(header));
  for (const row of rows) console.log(line(row));
  console.log(`\n\`savepoint run\` (bin/savepoint.js, as \`npm start\` runs it) on the same ${steps}-step day, one fresh process each, the wire-format simulated model:`);
  for (const run of cliRuns) console.log(`  ${TARGETS[run.ledger].padEnd(30)}  peak RSS ${run.peakRssMb} MB  (whole process, start to report: ${(run.wallMs / 1000).toFixed(2)} s)`);
  for (const result of results) {
    if (result.callsByMethod) console.log(`ledger calls per step, ${result.target}: ${Object.entries(result.callsByMethod).map(([method, calls]) => `${method} ${calls}`).join(', ')}`);
  }
  for (const result of results) {
    if (result.iam) console.log(`IAM decisions, ${result.target}: ${result.iam.allowed} allowed, ${result.iam.denied} denied (${Object.entries(result.iam.byService).map(([service, counts]) => `${service} ${counts.allowed}`).join(', ')})`);
  }
  console.log(
    `\na turn of ${parallelTurn.calls} tool calls of ${parallelTurn.toolLatencyMs} ms simulated latency each: ${parallelTurn.turnMs} ms of simulated time from the turn to the next (${parallelTurn.mostInFlight} in flight at once; one after another: ${parallelTurn.calls * parallelTurn.toolLatencyMs} ms)`,
  );
  const bill = aws.per100StepRun;
  const money = (dollars: number) => `$${dollars.toFixed(5)}`;
  const share = (part: number | null) => (part === null ? 'not measured' : `${(part * 100).toFixed(1)}%`);
  console.log(`\nAWS cost of a 100-step run (${aws.prices.region} on-demand prices of ${aws.prices.asOf}, no free tier; usage per step from the ${aws.from} row):`);
  console.log(`  Step Functions  ${bill.stepFunctions.transitions.toFixed(0)} state transitions (${aws.transitionsPerStep.toFixed(2)} per agent step)  ${money(bill.stepFunctions.dollars)}  ${share(bill.shares.stepFunctions)}`);
  console.log(`  Lambda          ${bill.lambdaRequests.invocations.toFixed(0)} invocations, ${bill.lambdaDuration.gbSeconds.toFixed(3)} GB-s of handler time  ${money(bill.lambdaRequests.dollars + bill.lambdaDuration.dollars)}  ${share(bill.shares.lambda)}`);
  console.log(`  DynamoDB        ${bill.dynamodb ? `${bill.dynamodb.readUnits.toFixed(0)} read units, ${bill.dynamodb.writeUnits.toFixed(0)} write units  ${money(bill.dynamodb.dollars)}` : 'not measured (run the dynalite row)'}  ${share(bill.shares.dynamodb)}`);
  // Each request is a round trip of the step on AWS (its latency, not only its units): per agent step, by operation.
  const dynamo = aws.dynamodbPerStep;
  if (dynamo) {
    const operations = Object.entries(dynamo.byOperation).sort((a, b) => b[1] - a[1]).map(([operation, count]) => `${operation} ${count}`).join(', ');
    console.log(`                  per agent step: ${dynamo.requests.toFixed(2)} requests (${operations}), ${dynamo.readUnits.toFixed(2)} read units, ${dynamo.writeUnits.toFixed(2)} write units`);
  }
  console.log(`  total           ${money(bill.dollars)}; each second a step waits on the model or a provider adds ${money(aws.lambdaDollarsPerSecondWaiting)} (not in the total)`);
}

/** The states a run enters once, whatever its length: its start and its end. */
const ONCE_A_RUN: readonly string[] = ['StartRun', 'StartOrResume', 'Finalize', 'RunFinished'];
/** The states a model turn enters once: CallModel, its Choice, and the Map of its tool calls (the final answer's turn has none). */
const EACH_TURN: readonly string[] = ['CallModel', 'ToolCallsOrStop', 'ToolCalls'];

/**
 * The loop's transitions (what Step Functions bills) per model turn and per tool call, the states
 * a run enters once left out: exact counts, the same on any machine, and independent of the
 * workload's shape (CI's 20-step day has 1.5 calls a turn, the 100-step day 2.6). Per agent step,
 * a turn of k calls costs (perTurn + k · perCall) / (1 + k): ≤ 2 once turns average one call at
 * 3 + 1 (CallModel, ToolCallsOrStop, the Map; CallTool), as both days' do. On p = 0 every state is
 * entered once per turn or call (no retry), and every CallModel makes a model turn (the workload
 * neither compacts nor hands off): the run's end is decided with its final answer.
 */
function loopTransitions(row: OverheadFigures, steps: number): { perStep: number; perTurn: number; perToolCall: number } | undefined {
  const byState = row.transitionsByState;
  if (!byState) return undefined;
  const entered = (state: string) => (byState[state] ?? 0) * steps;
  const turns = entered('CallModel');
  const calls = steps - turns;
  const loop = row.transitionsPerStep * steps - ONCE_A_RUN.reduce((sum, state) => sum + (byState[state] ? 1 : 0), 0);
  const perTurnTotal = EACH_TURN.reduce((sum, state) => sum + entered(state), 0);
  return { perStep: round(loop / steps, 3), perTurn: round(perTurnTotal / turns, 3), perToolCall: round((loop - perTurnTotal) / calls, 3) };
}

/**
 * The AWS bill of a 100-step run from the measured usage per agent step: the DynamoDB ledger's
 * row when it ran (the ledger AWS runs, and its handler time includes a DynamoDB round trip per
 * ledger call), else the first row (without DynamoDB's part).
 */
function awsFigures(results: readonly OverheadFigures[], steps: number) {
  const row = results.find((result) => result.dynamodb) ?? results.find((result) => result.lambda);
  if (!row?.lambda) throw new Error('overhead: no row measured Lambda usage');
  const usage = {
    transitions: row.transitionsPerStep,
    lambdaInvocations: row.lambda.invocationsPerStep,
    lambdaGbSeconds: row.lambda.gbSecondsPerStep,
    ...(row.dynamodb && { dynamodb: { readUnits: row.dynamodb.readUnitsPerStep, writeUnits: row.dynamodb.writeUnitsPerStep } }),
  };
  return {
    prices: AWS_PRICES,
    from: row.target,
    measuredSteps: steps,
    transitionsPerStep: row.transitionsPerStep,
    loopTransitions: loopTransitions(row, steps),
    usagePerStep: usage,
    per100StepRun: awsBill(usage, 100),
    /** The DynamoDB ledger's requests (round trips) and units per agent step, beside the bill they make. */
    dynamodbPerStep: row.dynamodb ? { requests: row.dynamodb.requestsPerStep, byOperation: row.dynamodb.byOperation, readUnits: row.dynamodb.readUnitsPerStep, writeUnits: row.dynamodb.writeUnitsPerStep } : null,
    lambdaDollarsPerSecondWaiting: lambdaDollarsPerSecondWaiting(row.lambda.memoryMbByState['CallModel'] ?? 512),
  };
}
