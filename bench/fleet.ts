/**
 * `npm run bench -- --fleet <runs> [--steps 100] [--offered 200] [--seed 1] [--model-ms 1500]
 * [--lambda-concurrency 1000] [--budget-dollars N] [--lease-dollars 0.05] [--model | --agree] [--json]`: `<runs>`
 * concurrent runs of the refund reconciler through the local twin on a simulated clock
 * (bench/fleet-sim.ts): the synthesized definition on the in-process engine, the real handlers,
 * the embedded in-memory ledger, Step Functions' API quotas on that clock when the twin has them.
 *
 * What is simulated: time. Starts are offered at `--offered` per simulated second (the driver
 * calls StartExecution through the real SDK); each model call waits a log-normal latency (median
 * 1.5 s, p95 4 s: a short tool-choosing turn of a hosted model); each ledger call a DynamoDB-like
 * one (median 6 ms, p95 15 ms). The model's answers are the warm-up run's recorded turns
 * (bench/scripted-model.ts), so every run makes the same `--steps` steps.
 * What is measured: everything else — every run's steps through the engine and the handlers, each
 * Step Functions API call the steps make (counted on the SDK client they share), the state
 * transitions and Lambda invocations in the histories, the run records' timestamps (on the
 * simulated clock), the runs that did not finish.
 *
 * `--model`: the same fleet as a discrete-event model of each run's AWS calls (bench/fleet-model.ts),
 * the warm-up run's plan replayed instead of the handlers: 10,000 runs in seconds. `--agree`: both,
 * on the same parameters, and whether they agree on the figures the model stands for (Step
 * Functions calls per run by API, control-plane throttles, lost runs).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { parseArgs } from 'node:util';
import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { lambdaRetryOf, planOf, runFleetModel, sustainedStarts, type RunPlan } from './fleet-model.js';
import { PARTITION_WCU_PER_SECOND } from './fleet-budget.js';
import { DEFAULT_LEASE_MICROS } from '../lambdas/records/fleet.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { ModelClient } from '../lambdas/records/messages.js';
import { summarizeHistory } from '../local/engine/local-engine.js';
import { localAwsConfig } from '../local/services/aws-config.js';
import { cachedTemplate } from '../local/template/cache.js';
import { extractStateMachine, type CfnTemplateJson } from '../local/template/asl.js';
import { AWS_PRICES, awsBill } from './aws-cost.js';
import { seededRandom } from '../sim/random.js';
import { logNormal, SimulatedTime } from './fleet-sim.js';
import { lambdaMeter, memoryByState } from './meters.js';
import { allInvocations, BENCH_CONFIG, benchStack } from './pipeline.js';
import { scriptedModel } from './scripted-model.js';
import { dayWithSteps } from './workload.js';

/** A model call's latency, from its median (`--model-ms`): p95 8/3 of it, as the default's 1.5 s and 4 s. */
const modelLatencyOf = (median: number) => ({ median, p95: (median * 8) / 3, max: 60_000 });
const LEDGER_LATENCY = { median: 6, p95: 15, max: 200 };
/** The per-account quotas a start and a step spend, refill per second (Step Functions' published table, us-east-1). */
const REFILL_PER_SECOND: Record<string, number> = { StartExecution: 300, DescribeExecution: 15, DescribeStateMachineForExecution: 1, GetExecutionHistory: 20, SendTaskSuccess: 500, SendTaskFailure: 500, StopExecution: 200 };

/**
 * The Lambda and Task timeouts, lifted: the twin times them in real milliseconds, and a step's
 * real time here is the whole fleet's progress to its simulated wake-up (at 1,000 runs on a loaded
 * machine, 9-13 real seconds a simulated one), so a simulated model call of 6 s or more can outrun
 * CallModel's 75 s in real time and fail a step as no step on AWS would. No simulated wait comes near the
 * deployed timeouts (the longest model wait is MODEL_LATENCY.max, 60 s, under CallModel's 75 s),
 * so on AWS none of them fires: lifting them changes nothing the simulation models.
 */
/** As long as a Node timer can wait (2^31 - 1 ms, ~35 min: a longer one fires at once). */
const LIFTED_TIMEOUT_S = 2_000;
/** Each Task state's lifted timeout, for its Task (`taskTimeoutMs`) and its function (`functionTimeoutMs`: a template may not say more than 900 s). */
const lifted = (template: CfnTemplateJson) => Object.fromEntries(Object.keys(extractStateMachine(template).tasks).map((state) => [state, LIFTED_TIMEOUT_S * 1000]));

/** Counts the Step Functions calls the driver's client sends (one attempt each), and the throttled ones. */
function meterSfn(client: SFNClient) {
  const calls: Record<string, number> = {};
  let throttled = 0;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = String(context.commandName).replace(/Command$/, '');
      calls[name] = (calls[name] ?? 0) + 1;
      try {
        return await next(args);
      } catch (error) {
        if (error instanceof Error && error.name === 'ThrottlingException') throttled += 1;
        throw error;
      }
    },
    { step: 'initialize', name: 'fleetCountCalls' },
  );
  return { calls: () => ({ ...calls }), throttled: () => throttled };
}

/** Every ledger call waits a DynamoDB-like latency first (the role methods, bound to the ledger), and is counted. */
function slowLedger(ledger: Ledger, sim: SimulatedTime, latency: () => number, counted: { calls: number }): Ledger {
  return new Proxy(ledger, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function' || property === 'close') return value;
      return async (...args: unknown[]) => {
        counted.calls += 1;
        await sim.sleep(latency());
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

export async function fleetBenchmark(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      fleet: { type: 'string' },
      steps: { type: 'string', default: '100' },
      offered: { type: 'string', default: '200' },
      seed: { type: 'string', default: '1' },
      'model-ms': { type: 'string', default: '1500' },
      'lambda-concurrency': { type: 'string', default: '1000' },
      // The model's fleet budget (bench/fleet-model.ts): dollars a day (default: twice what the fleet spends) and a lease's chunk.
      'budget-dollars': { type: 'string' },
      'lease-dollars': { type: 'string', default: String(DEFAULT_LEASE_MICROS / 1e6) },
      model: { type: 'boolean', default: false },
      agree: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const modelMs = Number(values['model-ms']);
  const lambdaConcurrency = Number(values['lambda-concurrency']);
  if (!(modelMs > 0)) throw new RangeError(`--model-ms must be a median model latency in ms > 0, got ${values['model-ms']}`);
  if (!Number.isInteger(lambdaConcurrency) || lambdaConcurrency < 1) throw new RangeError(`--lambda-concurrency must be a whole number ≥ 1, got ${values['lambda-concurrency']}`);
  const MODEL_LATENCY = modelLatencyOf(modelMs);
  const runs = Number(values.fleet ?? 1000);
  const steps = Number(values.steps);
  const offered = Number(values.offered);
  if (!Number.isInteger(runs) || runs < 1) throw new RangeError(`--fleet must be a whole number of runs, got ${values.fleet}`);
  if (!(offered > 0)) throw new RangeError(`--offered must be starts per simulated second > 0, got ${values.offered}`);
  const progress = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);
  const random = seededRandom(Number(values.seed));
  const modelLatency = logNormal(random, MODEL_LATENCY);
  const ledgerLatency = logNormal(random, LEDGER_LATENCY);
  const ledgerCalls = { calls: 0 };

  // Each run's work (its execution, started in process from the driver's call) carries its run id.
  const participant = new AsyncLocalStorage<string>();
  const sim = new SimulatedTime(Date.parse('2026-12-01T02:00:00Z'), 10, () => participant.getStore());
  const { day } = dayWithSteps(steps);
  const template = (await cachedTemplate('refund-reconciler')) as CfnTemplateJson;
  const scripted = scriptedModel();
  let simulated = false;
  const withLatency = (client: ModelClient): ModelClient => ({
    createMessage: async (request, signal) => {
      if (simulated) await sim.sleep(modelLatency());
      return client.createMessage(request, signal);
    },
  });
  const stack = await benchStack({
    day,
    template,
    failRate: 0,
    seed: 1,
    worldInMemory: true,
    clock: sim,
    retryDelayMs: 1,
    // The twin's per-account API throttling, on the simulated clock (local/aws/sfn-api-throttling.ts).
    quotas: true,
    // Every run's history is read at the end: the engine keeps them all.
    retainFinishedExecutions: Number.MAX_SAFE_INTEGER,
    taskTimeoutMs: lifted(template),
    functionTimeoutMs: lifted(template),
    decorateLedger: (ledger) => slowLedger(ledger, sim, () => (simulated ? ledgerLatency() : 0), ledgerCalls),
    lambdaConcurrency,
    wrapModel: (client) => withLatency(scripted.wrap(client)),
  });
  const lambda = lambdaMeter(stack.engine, memoryByState(template), () => sim.nowMs());
  // The driver's own client: what an operator's scheduler (EventBridge, a Distributed Map) calls.
  // One attempt a call: the driver backs off a throttled start on the simulated clock (the SDK's
  // own retries would wait real milliseconds, in which the simulated bucket does not refill).
  // In process (the stack's own request handler): the execution starts inside the driver's call, so it inherits the run's identity.
  const driver = new SFNClient({ ...localAwsConfig, endpoint: stack.endpoints.sfn, requestHandler: stack.sfn.config.requestHandler, maxAttempts: 1 });
  const starts = meterSfn(driver);
  let backedOff = 0;
  const start = async (runId: string) => {
    const command = new StartExecutionCommand({ stateMachineArn: stack.stateMachineArn, name: runId, input: JSON.stringify({ runId, input: { date: day.date }, config: BENCH_CONFIG }) });
    for (let attempt = 0; ; attempt++) {
      try {
        return await driver.send(command);
      } catch (error) {
        if (!(error instanceof Error && error.name === 'ThrottlingException') || attempt >= 12) throw error;
        backedOff += 1;
        // Exponential backoff with full jitter, as the SDK's standard retry (100 ms base, 20 s cap).
        await participant.run('driver', () => sim.sleep(random() * Math.min(20_000, 100 * 2 ** attempt)));
      }
    }
  };
  try {
    // The warm-up run is the simulated model's: every fleet run replays its turns.
    const { executionArn: warmArn } = stack.engine.startExecution({ name: 'fleet-warm-up', input: { runId: 'fleet-warm-up', input: { date: day.date }, config: BENCH_CONFIG } });
    const warm = await stack.engine.waitForExecution(warmArn);
    const warmRun = await stack.ledger.getRun('fleet-warm-up');
    if (warm.status !== 'SUCCEEDED' || warmRun?.steps !== steps) throw new Error(`the warm-up run ${warm.status} after ${warmRun?.steps} of ${steps} steps`);
    scripted.replay((await stack.ledger.listConversation('fleet-warm-up')).turns);
    lambda.reset();
    const warmCalls = stack.quotas!.admitted();
    // What the model replays: the warm-up run's invocations, its ledger calls, its steps' Step Functions calls.
    const warmHistories = warmRun.executions.map((arn) => stack.engine.getExecutionHistory(arn));
    const warmInvocations = warmHistories.reduce((sum, events) => sum + allInvocations(summarizeHistory(events)), 0);
    const plan = planOf(warmHistories, ledgerCalls.calls / warmInvocations, warmCalls);
    const budget = modelBudget(values, runs, plan);
    const model = () =>
      modelReport(
        runFleetModel({ runs, offered, plan, lambdaRetry: lambdaRetryOf(extractStateMachine(template).definition as never), random: seededRandom(Number(values.seed)), modelLatency: MODEL_LATENCY, ledgerLatency: LEDGER_LATENCY, lambdaConcurrency, budget }),
        { steps, plan, modelMs, lambdaConcurrency },
      );
    if (values.model) {
      const report = model();
      if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      else printModel(report);
      return;
    }
    simulated = true;

    const wallStarted = performance.now();
    const cpuBefore = process.cpuUsage();
    const simStarted = sim.nowMs();
    const ids = Array.from({ length: runs }, (_, index) => `fleet-${String(index + 1).padStart(5, '0')}`);
    const finished: Promise<{ runId: string; status: string; executionArn: string }>[] = [];
    let ended = 0;
    sim.join(); // the driver
    for (const [index, runId] of ids.entries()) {
      await participant.run('driver', () => sim.sleep(simStarted + (index * 1000) / offered - sim.nowMs()));
      const started = await participant.run(runId, () => start(runId)).catch((error: unknown) => error as Error);
      // A participant from its start (its first waits are its own: the clock cannot move before
      // this line runs, which is before the next turn of the event loop).
      if (!(started instanceof Error)) sim.join();
      if (started instanceof Error) {
        finished.push(Promise.resolve({ runId, status: `NOT STARTED (${started.name})`, executionArn: '' }));
        continue;
      }
      const executionArn = started.executionArn!;
      finished.push(
        stack.engine.waitForExecution(executionArn).then((done) => {
          sim.leave();
          ended += 1;
          if (ended % Math.max(1, Math.floor(runs / 10)) === 0) progress(`  ${ended}/${runs} runs ended at ${((sim.nowMs() - simStarted) / 1000).toFixed(1)} simulated s (${((performance.now() - wallStarted) / 1000).toFixed(0)} s real)`);
          return { runId, status: done.status, executionArn };
        }),
      );
    }
    sim.leave();
    const outcomes = await Promise.all(finished);
    const wallMs = performance.now() - wallStarted;
    const cpu = process.cpuUsage(cpuBefore);

    const records = await Promise.all(ids.map((runId) => stack.ledger.getRun(runId)));
    const completed = records.filter((run) => run?.status === 'succeeded').length;
    const totalSteps = records.reduce((sum, run) => sum + (run?.steps ?? 0), 0);
    const created = records.flatMap((run) => (run ? [Date.parse(run.createdAt)] : [])).sort((a, b) => a - b);
    const ends = records.flatMap((run) => (run?.finishedAt ? [Date.parse(run.finishedAt)] : []));
    const makespanS = (Math.max(...ends, sim.nowMs()) - simStarted) / 1000;
    const startWindowS = created.length > 1 ? (created.at(-1)! - created[0]!) / 1000 : 0;
    let transitions = 0;
    let invocations = 0;
    for (const outcome of outcomes) {
      if (!outcome.executionArn) continue;
      const states = summarizeHistory(stack.engine.getExecutionHistory(outcome.executionArn));
      transitions += Object.values(states).reduce((sum, state) => sum + state.entered, 0);
      invocations += allInvocations(states);
    }
    // Every call any function makes passes the twin's quota check; the driver's own are taken out.
    const startCalls = starts.calls();
    const admitted = stack.quotas!.admitted();
    const stepCalls = Object.fromEntries(Object.entries(admitted).map(([api, n]) => [api, n - (startCalls[api] ?? 0) - (warmCalls[api] ?? 0)]).filter(([, n]) => Number(n) > 0)) as Record<string, number>;
    const sfnStepCalls = Object.values(stepCalls).reduce((sum, n) => sum + n, 0);
    // The sustained bound: per API a start or a step spends, its refill over the calls it needs.
    const perRun = Object.entries({ ...stepCalls, StartExecution: (startCalls['StartExecution'] ?? 0) + (stepCalls['StartExecution'] ?? 0) }).filter(([, n]) => n > 0);
    const bounds = Object.fromEntries(perRun.map(([api, n]) => [api, Math.round((REFILL_PER_SECOND[api] ?? Infinity) / (n / runs))]));
    const sustainedBound = Math.min(...Object.values(bounds));
    const usage = lambda.usage();
    const quotas = stack.quotas!;
    const throttledAtEndpoint = quotas.throttled();
    const throttledAttempts = Object.values(throttledAtEndpoint).reduce((sum, n) => sum + n, 0);
    // The driver's throttled starts that its backoff did not absorb.
    const failedThrottled = outcomes.filter((outcome) => outcome.status === 'NOT STARTED (ThrottlingException)').length;
    const usagePerStep = { transitions: transitions / totalSteps, lambdaInvocations: invocations / totalSteps, lambdaGbSeconds: usage.gbSeconds / totalSteps };
    const bill = awsBill(usagePerStep, steps);
    const per100 = awsBill(usagePerStep, 100);

    const allCalls: Record<string, number> = { ...stepCalls };
    for (const [api, n] of Object.entries(startCalls)) allCalls[api] = (allCalls[api] ?? 0) + n;
    const concurrency = stack.lambdaConcurrency;
    const report = {
      engine: 'handlers' as const,
      runs,
      completed,
      lost: runs - completed,
      // The figures the model stands for (bench/fleet-model.ts), in its terms: calls per run by API (the starts included), throttles, lost.
      sfnCallsPerRun: perRunOf(allCalls, runs),
      controlPlaneThrottles: throttledAttempts,
      lambda: { throttles: concurrency.throttles, peakConcurrent: concurrency.peak, limit: concurrency.accountLimit, modelMs },
      sustainedStarts: sustainedStarts(created),
      steps: totalSteps,
      startsPerSecond: startWindowS > 0 ? round((created.length - 1) / startWindowS) : null,
      offeredStartsPerSecond: offered,
      sustainedStartsBound: { perSecond: sustainedBound, byApi: bounds },
      stepsPerSecond: round(totalSteps / makespanS),
      simulatedSeconds: round(makespanS),
      throttled: { byApi: throttledAtEndpoint, attempts: throttledAttempts, absorbedByStartBackoff: backedOff, stepCallsThrottled: throttledAttempts - starts.throttled(), failedCalls: failedThrottled, quotasOn: true },
      sfnApiCallsPerStep: round(sfnStepCalls / totalSteps, 4),
      sfnApiCallsByStep: stepCalls,
      aws: {
        perRun: { steps, dollars: round(bill.dollars, 5), stepFunctions: round(bill.stepFunctions.dollars, 5), lambda: round(bill.lambdaRequests.dollars + bill.lambdaDuration.dollars, 5) },
        per100StepRun: { dollars: round(per100.dollars, 5), stepFunctions: round(per100.stepFunctions.dollars, 5), lambda: round(per100.lambdaRequests.dollars + per100.lambdaDuration.dollars, 5) },
        usagePerStep: { ...usagePerStep, lambdaGbSeconds: round(usagePerStep.lambdaGbSeconds, 5) }, prices: AWS_PRICES.asOf, dynamodbNotMetered: true },
      measured: { wallSeconds: round(wallMs / 1000, 1), cpuSeconds: round((cpu.user + cpu.system) / 1e6, 1), msPerStep: round(wallMs / totalSteps, 3), clockAdvances: sim.advances },
      // Runs an execution of which failed and that recovery resumed (RecoverRun: its StartExecution is a call counted above), with why.
      recovered: outcomes.flatMap((outcome) => {
        if (!outcome.executionArn || outcome.status === 'SUCCEEDED') return [];
        const first = stack.engine.describeExecution(outcome.executionArn);
        return [{ runId: outcome.runId, status: outcome.status, error: first.error ?? null, cause: (first.cause ?? '').slice(0, 200) }];
      }),
      notStarted: outcomes.filter((outcome) => outcome.status.startsWith('NOT STARTED')).map((outcome) => outcome.runId),
    };
    if (values.agree) {
      // The model on the same parameters, after the handlers' fleet: do they agree on what the model stands for?
      const modelled = model();
      const agreement = {
        sfnCallsPerRun: sameCalls(report.sfnCallsPerRun, modelled.sfnCallsPerRun),
        controlPlaneThrottles: report.controlPlaneThrottles === modelled.controlPlaneThrottles,
        lost: report.lost === modelled.lost,
      };
      const both = { handlers: report, model: modelled, agreement, agree: Object.values(agreement).every(Boolean) };
      if (values.json) process.stdout.write(`${JSON.stringify(both, null, 2)}\n`);
      else {
        console.log(`fleet agreement: ${runs} runs of ${steps} steps, the real handlers and the model: ${both.agree ? 'agree' : 'DISAGREE'} (${JSON.stringify(agreement)})`);
        console.log(`  Step Functions calls per run: handlers ${JSON.stringify(report.sfnCallsPerRun)}, model ${JSON.stringify(modelled.sfnCallsPerRun)}`);
        console.log(`  control-plane throttles: handlers ${report.controlPlaneThrottles}, model ${modelled.controlPlaneThrottles}; lost: handlers ${report.lost}, model ${modelled.lost}`);
        console.log(`  Lambda: handlers ${report.lambda.throttles} throttles (peak ${report.lambda.peakConcurrent} of ${report.lambda.limit}), model ${modelled.lambda.throttles} (peak ${modelled.lambda.peakConcurrent})`);
        console.log(`  starts: handlers ${report.startsPerSecond}/s, model ${modelled.startsPerSecond}/s; simulated s: handlers ${report.simulatedSeconds}, model ${modelled.simulatedSeconds}`);
      }
      return;
    }
    if (values.json) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      return;
    }
    console.log(`fleet: ${runs} runs of ${steps} steps on a simulated clock (${report.simulatedSeconds} simulated s; ${report.measured.wallSeconds} s real, ${report.measured.msPerStep} ms a step on this machine)`);
    console.log(`  completed ${completed}, lost ${report.lost}${report.notStarted.length ? ` (${report.notStarted.length} never started)` : ''}; ${report.recovered.length} first execution(s) failed and were recovered${report.recovered.length ? `: ${report.recovered.map((r) => `${r.runId} ${r.error}`).join(', ')}` : ''}`);
    console.log(`  starts: ${report.startsPerSecond}/s achieved at ${offered}/s offered; sustained bound ${sustainedBound}/s (${Object.entries(bounds).map(([api, n]) => `${api} ${n}/s`).join(', ')})`);
    console.log(`  steps: ${report.stepsPerSecond}/s; Step Functions API calls per step ${report.sfnApiCallsPerStep} (${JSON.stringify(stepCalls)})`);
    console.log(`  throttled: ${throttledAttempts} calls (${JSON.stringify(throttledAtEndpoint)}): ${backedOff} starts absorbed by the driver's backoff, ${report.throttled.stepCallsThrottled} step calls throttled, ${failedThrottled} failed`);
    console.log(`  AWS per ${steps}-step run: $${report.aws.perRun.dollars} (Step Functions $${report.aws.perRun.stepFunctions}, Lambda $${report.aws.perRun.lambda}, its model waits included; DynamoDB not metered here: see --overhead)`);
  } finally {
    driver.destroy();
    lambda.close();
    await stack.close();
  }
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Calls per run by API, to 4 decimals. */
function perRunOf(calls: Record<string, number>, runs: number): Record<string, number> {
  const apis = Object.keys(calls).filter((api) => calls[api]! > 0).sort();
  return Object.fromEntries(apis.map((api) => [api, round(calls[api]! / runs, 4)]));
}

function sameCalls(a: Record<string, number>, b: Record<string, number>): boolean {
  const apis = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...apis].every((api) => (a[api] ?? 0) === (b[api] ?? 0));
}

/** The model's report, in the handlers' terms where they share a figure. */
/**
 * The fleet budget the model's runs reserve from: each model call reserves $0.02 and costs $0.005
 * (a short tool-choosing turn), leased in chunks of `--lease-dollars` (the deployed default,
 * DEFAULT_LEASE_MICROS); the day's limit `--budget-dollars`, by default twice what the fleet
 * spends, so that the budget is live (leased from, returned to) and no run is stopped by it.
 */
function modelBudget(values: { 'budget-dollars'?: string; 'lease-dollars'?: string }, runs: number, plan: RunPlan) {
  const reservationMicros = 20_000;
  const costMicros = 5_000;
  const modelCallsPerRun = plan.phases.reduce((sum, phase) => sum + phase.filter((task) => task.model).length, 0);
  const dollarsPerDay = values['budget-dollars'] === undefined ? Math.ceil((2 * runs * modelCallsPerRun * costMicros) / 1e6) : Number(values['budget-dollars']);
  const leaseMicros = Math.round(Number(values['lease-dollars']) * 1e6);
  if (!(dollarsPerDay > 0)) throw new RangeError(`--budget-dollars must be dollars a day > 0, got ${values['budget-dollars']}`);
  if (!(Number.isInteger(leaseMicros) && leaseMicros > 0)) throw new RangeError(`--lease-dollars must be a positive amount in dollars, got ${values['lease-dollars']}`);
  return { dollarsPerDay, leaseMicros, reservationMicros, costMicros };
}

function modelReport(result: ReturnType<typeof runFleetModel>, setup: { steps: number; plan: RunPlan; modelMs: number; lambdaConcurrency: number }) {
  const starts = [...result.startedAt].sort((a, b) => a - b);
  const window = starts.length > 1 ? (starts.at(-1)! - starts[0]!) / 1000 : 0;
  const throttles = Object.values(result.sfnThrottled).reduce((sum, n) => sum + n, 0);
  const invocationsPerRun = setup.plan.phases.reduce((sum, phase) => sum + phase.length, 0);
  return {
    engine: 'model' as const,
    runs: result.runs,
    completed: result.completed,
    lost: result.lost,
    steps: setup.steps * result.completed,
    startsPerSecond: window > 0 ? round((starts.length - 1) / window) : null,
    sustainedStarts: sustainedStarts(starts),
    simulatedSeconds: round(result.simulatedMs / 1000),
    sfnCallsPerRun: perRunOf(result.sfnCalls, result.runs),
    sfnThrottled: result.sfnThrottled,
    controlPlaneThrottles: throttles,
    lambda: { ...result.lambda, modelMs: setup.modelMs, invocationsPerRun, ledgerCallsPerInvocation: round(setup.plan.ledgerCallsPerInvocation) },
    // The day's counter item: its writes against a partition's ~1,000 WCU/s, and what it leased against its limit.
    fleetBudget: result.budget && {
      ...result.budget,
      partitionWcuPerSecond: PARTITION_WCU_PER_SECOND,
      overshootMicros: Math.max(0, result.budget.leasedPeakMicros - result.budget.limitMicros, result.budget.spentMicros - result.budget.limitMicros),
      runsStopped: result.budgetStopped,
    },
  };
}

function printModel(report: ReturnType<typeof modelReport>): void {
  console.log(`fleet model: ${report.runs} runs of ${report.steps / Math.max(1, report.completed)} steps (their AWS calls modelled, not the handlers executed: bench/fleet-model.ts), ${report.simulatedSeconds} simulated s`);
  console.log(`  completed ${report.completed}, lost ${report.lost}; starts ${report.startsPerSecond}/s, sustained ≥ ${report.sustainedStarts.perSecond}/s for ${report.sustainedStarts.seconds} s`);
  console.log(`  Step Functions calls per run ${JSON.stringify(report.sfnCallsPerRun)}; control-plane throttles ${report.controlPlaneThrottles}`);
  const budget = report.fleetBudget;
  if (budget) {
    console.log(
      `  fleet budget $${budget.limitMicros / 1e6}/day: ${budget.counterWrites} writes to its counter item (peak ${budget.peakWritesPerSecond}/s of the partition's ${budget.partitionWcuPerSecond} WCU/s), ${budget.throttled} throttled, ${budget.failedConditions} failed conditions; leased at most $${(budget.leasedPeakMicros / 1e6).toFixed(2)}, spent $${(budget.spentMicros / 1e6).toFixed(2)}, overshoot $${(budget.overshootMicros / 1e6).toFixed(2)}`,
    );
  }
  console.log(`  Lambda: ${report.lambda.invocations} invocations (${report.lambda.invocationsPerRun} a run), ${report.lambda.throttles} throttled and retried, ${report.lambda.retriesExhausted} out of retries; peak ${report.lambda.peakConcurrent} of ${report.lambda.limit} concurrent (model calls median ${report.lambda.modelMs} ms)`);
}
