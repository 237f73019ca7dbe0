import { describe, expect, it } from 'vitest';
import { AWS_PRICES, awsBill } from '../../bench/aws-cost.js';
import { checkReport, COLD_START_TARGETS } from '../../bench/check.js';
import { estimate, waste } from '../../bench/stats.js';

/** A waste report in the shape bench/waste.ts prints, its estimates made by the benchmark's own `estimate`. */
function wasteReport(crashExecutions: number[], crashesLost = 0) {
  const scenario = (executions: number[]) => ({ executions: estimate(executions), waste: waste(estimate(executions).mean, 20), duplicatePayments: 0, runsLost: 0 });
  return {
    pipeline: 'test',
    options: { steps: [20], crashRuns: crashExecutions.length + crashesLost },
    results: [
      {
        n: 20,
        p: 0.02,
        theory: { checkpoint: 20.41, restart: 24.9 },
        checkpoint: { ...scenario([20, 21, 20]), invocations: 32, msPerStep: 2.7 },
        restart: { ...scenario([22, 41]), invocations: 35.7, attemptsPerRun: 1.4, sideEffectsThrownAway: 0.1 },
        crashes: { ...scenario(crashExecutions), runsLost: crashesLost, engines: 2, crashesSurvived: { injected: 0, killedFromOutside: 1 } },
      },
    ],
  };
}

const text = (report: unknown) => JSON.stringify(report);

describe('bench/check.ts', () => {
  it('accepts a waste report that measured every scenario, a single crash run without an interval included', () => {
    expect(checkReport('waste', text(wasteReport([21])))).toEqual([]);
    expect(checkReport('waste', text(wasteReport([21, 22])))).toEqual([]);
  });

  it('rejects a lost run', () => {
    expect(checkReport('waste', text(wasteReport([21], 1)))).toEqual(['results.0.crashes.runsLost: 1 run(s) lost']);
  });

  it('rejects the shape of the ENOENT regression: every crash run lost, no completed run, waste -Infinity (null in JSON)', () => {
    const problems = checkReport('waste', text(wasteReport([], 2)));
    expect(problems).toContain('results.0.crashes.runsLost: 2 run(s) lost');
    expect(problems).toContain('results.0.crashes.executions.runs: no completed run');
    expect(problems.some((problem) => problem.startsWith('results.0.crashes.waste:'))).toBe(true);
  });

  it('rejects a missing figure, naming it', () => {
    const report = wasteReport([21]);
    delete (report.results[0]!.checkpoint as Partial<typeof report.results[0]['checkpoint']>).msPerStep;
    expect(checkReport('waste', text(report))).toEqual(['results.0.checkpoint.msPerStep: Invalid input: expected number, received undefined']);
  });

  it('rejects a NaN figure (JSON writes it as null)', () => {
    const report = wasteReport([21]);
    report.results[0]!.restart.attemptsPerRun = Number.NaN;
    expect(checkReport('waste', text(report))).toEqual(['results.0.restart.attemptsPerRun: Invalid input: expected number, received null']);
  });

  it('rejects crash runs asked for and not reported, a duplicate payment, and output that is not JSON', () => {
    const report = wasteReport([21]);
    delete (report.results[0] as Partial<typeof report.results[0]>).crashes;
    expect(checkReport('waste', text(report))).toEqual(['results.0.crashes: crash runs were asked for and not reported']);
    const paidTwice = wasteReport([21]);
    paidTwice.results[0]!.checkpoint.duplicatePayments = 1;
    expect(checkReport('waste', text(paidTwice))).toEqual(['results.0.checkpoint.duplicatePayments: 1 duplicate payment(s)']);
    expect(checkReport('waste', '')[0]).toMatch(/^the output is not JSON/);
  });

  it('rejects an overhead report without its AWS bill, and a long run that did not succeed', () => {
    expect(checkReport('overhead', text({ results: [], cliRuns: [] }))).toContain('aws: Invalid input: expected object, received undefined');
    expect(checkReport('overhead', text({ results: [], cliRuns: [] }))).toContain('parallelTurn: Invalid input: expected object, received undefined');
    // A turn whose four 1 s calls ran one after another is no parallel turn.
    const sequential = { calls: 4, toolLatencyMs: 1_000, turnMs: 4_000, mostInFlight: 1 };
    expect(checkReport('overhead', text({ results: [], cliRuns: [], parallelTurn: sequential }))).toContain('parallelTurn: the parallel turn took as long as its calls one after another');
    expect(checkReport('overhead', text({ results: [], cliRuns: [], parallelTurn: { ...sequential, turnMs: 1_000, mostInFlight: 4 } })).join('\n')).not.toContain('parallelTurn');
    const run = { status: 'failed', steps: 61, inputTokens: { lastTurn: 1, maxTurn: 2, total: 3 }, compactions: 0, eventsPerExecution: [212] };
    expect(checkReport('longruns', text({ results: [run, { ...run, status: 'succeeded' }] }))).toEqual(['results.0.status: the run ended failed, not succeeded']);
  });

  it('accepts a fleet that completed every run, and rejects a lost run or Step Functions calls on the hot path', () => {
    const fleet = {
      runs: 20,
      completed: 20,
      lost: 0,
      steps: 2_000,
      startsPerSecond: 200,
      sustainedStartsBound: { perSecond: 300, byApi: { StartExecution: 300 } },
      stepsPerSecond: 29.7,
      throttled: { attempts: 0, absorbedByStartBackoff: 0, stepCallsThrottled: 0, failedCalls: 0, quotasOn: true },
      sfnApiCallsPerStep: 0,
      aws: { perRun: { dollars: 0.007 } },
    };
    expect(checkReport('fleet', text(fleet))).toEqual([]);
    expect(checkReport('fleet', text({ ...fleet, completed: 19, lost: 1 }))).toEqual(['lost: 1 run(s) lost', '(report): not every run completed']);
    expect(checkReport('fleet', text({ ...fleet, sfnApiCallsPerStep: 1.01 }))[0]).toMatch(/^sfnApiCallsPerStep: 1.01 Step Functions calls per agent step/);
  });

  it('accepts a cold-start report under the targets, and rejects one over them, with a dev file, or without a target step', () => {
    const fn = (step: string, bundleBytes = 720_000, importCpuMs = 120) => ({ step, bundleBytes, mapBytes: 3_300_000, files: ['index.mjs', 'chunks/chunk-A.mjs'], devSources: [], importCpuMs, lazyChunks: [{ file: 'chunks/anthropic-B.mjs', holds: '@anthropic-ai/sdk', bytes: 147_000, importCpuMs: 19 }] });
    const report = { agent: 'agent.ts', node: 'v20', runs: 3, targets: COLD_START_TARGETS, functions: [fn('call-model'), fn('call-tool'), fn('finalize')] };
    expect(checkReport('cold-start', text(report))).toEqual([]);
    expect(checkReport('cold-start', text({ ...report, functions: [fn('call-model', 1_200_000), fn('call-tool', 700_000, 301), fn('finalize', 700_000, 400)] }))).toEqual([
      'functions.0.bundleBytes: a 1200000-byte bundle, over the 1000000-byte target',
      'functions.1.importCpuMs: call-tool imports in 301 ms of CPU, over 2× the 150 ms target',
    ]);
    expect(checkReport('cold-start', text({ ...report, functions: [{ ...fn('call-model'), devSources: ['../../sim/world.ts'] }, fn('call-tool')] }))).toEqual(['functions.0.devSources: dev-only sources in the bundle: ../../sim/world.ts']);
    expect(checkReport('cold-start', text({ ...report, functions: [fn('call-model')] }))).toEqual(['functions: no figures for call-tool']);
    const { importCpuMs: _missing, ...noCpu } = fn('call-tool');
    expect(checkReport('cold-start', text({ ...report, functions: [fn('call-model'), noCpu] }))).toEqual(['functions.1.importCpuMs: Invalid input: expected number, received undefined']);
  });

  it('accepts a growth report that stays flat, and rejects the figures measured before the fixes (status, runs and approvals loading the whole ledger; 120 KB of heap a run, then 5.1)', () => {
    const process = (cpuMs: number, peakRssMb: number) => ({ wallMs: cpuMs * 2, cpuMs, peakRssMb });
    /** A command's figures, its CPU time in `pairs` of (one run, many runs) measured side by side. */
    const command = (peakRssMb: [number, number], pairs: [number, number][]) => ({
      oneRun: process(Math.min(...pairs.map(([one]) => one)), peakRssMb[0]),
      manyRuns: process(Math.min(...pairs.map(([, many]) => many)), peakRssMb[1]),
      cpuMsPairs: pairs,
    });
    const flat = command([91, 92], [[443, 470], [460, 450], [452, 466]]);
    const growth = (heapPerRunKb: number, changed: Record<string, unknown> = {}) =>
      JSON.stringify({ options: { runs: 150, steps: 10 }, engine: { heapAfterWarmMb: 27, heapAtEndMb: 29, heapPerRunKb }, stateDir: { bytesPerRun: 35_884 }, status: flat, runs: flat, approvals: flat, verifyAll: command([90, 117], [[450, 900], [455, 910], [470, 905]]), ...changed });
    expect(checkReport('growth', growth(0.9))).toEqual([]);
    expect(checkReport('growth', growth(5.1))).toEqual(['engine.heapPerRunKb: 5.1 KB of engine heap per finished run (bounded: at most 1.8)']);
    expect(checkReport('growth', growth(120, { status: command([91, 132], [[443, 720], [450, 730], [445, 715]]), runs: command([90, 100], [[440, 710], [450, 700], [441, 720]]), verifyAll: command([90, 262], [[450, 2900], [450, 2950], [460, 2910]]) }))).toEqual([
      'engine.heapPerRunKb: 120 KB of engine heap per finished run (bounded: at most 1.8)',
      'status.cpuMsPairs: status against 150 runs takes 1.62 times the CPU it takes against one (the median of 3 pairs [[443,720],[450,730],[445,715]]): more than 1.4 times',
      'status.manyRuns.peakRssMb: status against 150 runs takes 132 MB against 91 MB with one: more than 1.15 times',
      'runs.cpuMsPairs: runs against 150 runs takes 1.61 times the CPU it takes against one (the median of 3 pairs [[440,710],[450,700],[441,720]]): more than 1.4 times',
      'verifyAll.manyRuns.peakRssMb: verifyAll against 150 runs takes 262 MB against 90 MB with one: more than 1.4 times',
    ]);
    const { approvals: _missing, ...noApprovals } = JSON.parse(growth(0.9)) as Record<string, unknown>;
    expect(checkReport('growth', JSON.stringify(noApprovals))).toEqual(['approvals: Invalid input: expected object, received undefined']);
  });

  it("judges a growth report's CPU by the median of its pairs: one pair caught by a burst of load passes, a median over the tolerance fails, fewer than three pairs is no median", () => {
    const process = (cpuMs: number) => ({ wallMs: cpuMs * 2, cpuMs, peakRssMb: 90 });
    const command = (pairs: [number, number][]) => ({ oneRun: process(Math.min(...pairs.map(([one]) => one))), manyRuns: process(Math.min(...pairs.map(([, many]) => many))), cpuMsPairs: pairs });
    const flat = command([[500, 510], [505, 495], [498, 502]]);
    const growth = (status: unknown) => JSON.stringify({ options: { runs: 150, steps: 10 }, engine: { heapAfterWarmMb: 27, heapAtEndMb: 27, heapPerRunKb: 0.8 }, stateDir: { bytesPerRun: 35_884 }, status, runs: flat, approvals: flat, verifyAll: flat });
    // CI's 1.40: the many-runs side measured in a burst. Paired, the burst costs one pair.
    expect(checkReport('growth', growth(command([[480, 672], [500, 505], [490, 500], [470, 480], [505, 495]])))).toEqual([]);
    expect(checkReport('growth', growth(command([[480, 780], [500, 800], [490, 790], [470, 480], [505, 495]])))).toEqual([
      'status.cpuMsPairs: status against 150 runs takes 1.60 times the CPU it takes against one (the median of 5 pairs [[480,780],[500,800],[490,790],[470,480],[505,495]]): more than 1.4 times',
    ]);
    expect(checkReport('growth', growth(command([[480, 490], [500, 505]])))).toEqual(['status.cpuMsPairs: Too small: expected array to have >=3 items']);
  });

  it('accepts a tracing report with its four rows, and rejects one whose collector received too little', () => {
    const row = (tracing: string, ms: number) => ({ tracing, msPerStep: ms, cpuMsPerStep: ms / 2 });
    const tracing = {
      steps: 20,
      runs: 1,
      exportRequests: 206,
      rows: [row('off', 6), row('OTLP/HTTP protobuf, spans only', 6.5), row('OTLP/HTTP protobuf', 7), row('OTLP/HTTP JSON', 8)],
      addedPerStep: [row('OTLP/HTTP protobuf, spans only', 0.5), row('OTLP/HTTP protobuf', 1), row('OTLP/HTTP JSON', 2)],
    };
    expect(checkReport('tracing', text(tracing))).toEqual([]);
    expect(checkReport('tracing', text({ ...tracing, exportRequests: 3 }))).toEqual(['(report): the collector received fewer export requests than the traced steps made']);
    expect(checkReport('tracing', text({ ...tracing, rows: tracing.rows.slice(1) }))[0]).toMatch(/^rows: /);
  });
});

describe('bench/aws-cost.ts', () => {
  it('prices each service from the one table and splits the total between them', () => {
    const bill = awsBill({ transitions: 2.62, lambdaInvocations: 1.34, lambdaGbSeconds: 0.002, dynamodb: { readUnits: 10, writeUnits: 3 } }, 100);
    expect(bill.stepFunctions.dollars).toBeCloseTo(262 * AWS_PRICES.stepFunctionsPerTransition, 12);
    expect(bill.lambdaRequests.dollars).toBeCloseTo(134 * AWS_PRICES.lambdaPerRequest, 12);
    expect(bill.lambdaDuration.dollars).toBeCloseTo(0.2 * AWS_PRICES.lambdaPerArmGbSecond, 12);
    expect(bill.dynamodb!.dollars).toBeCloseTo(1000 * AWS_PRICES.dynamodbPerReadUnit + 300 * AWS_PRICES.dynamodbPerWriteUnit, 12);
    expect(bill.shares.stepFunctions + bill.shares.lambda + bill.shares.dynamodb!).toBeCloseTo(1, 12);
    expect(awsBill({ transitions: 2.62, lambdaInvocations: 1.34, lambdaGbSeconds: 0.002 }, 100).shares.dynamodb).toBeNull();
  });
});
