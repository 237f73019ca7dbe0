/**
 * `npm run bench -- --replay [--replays 5] [--json]`: `savepoint replay`'s speed. The sample day
 * (about 100 agent steps) is run once on the in-process local stack, approvals decided as they are
 * asked for — the run a user makes, first in its process — then replayed from its ledger with no
 * live call, `--replays` times: the first replay (cold) and the median of the others (warm). Each
 * replay must be identical, and the run's own model server and payments provider must have served
 * nothing during them (the live calls, counted where they would land). Prints the run's wall time,
 * both replay figures and their share of the run, in wall time and in this process's CPU time (the
 * run, its approvals and the simulators all run in this process: the steadier figure on a shared
 * machine, which bench/check.ts bounds).
 *
 * The harness both sides run in this process is the built one (dist/: `node bin/build.js`, which
 * CI runs before the benchmarks), the code an installed package runs, for the run and for the
 * replays alike: the example agent imports it so already (`savepoint` resolves to dist/ outside
 * the tests), and the TypeScript sources through tsx wrap every function they define in a
 * `__name` call (esbuild's keepNames), a cost no user's process pays (3% of a replay's profile),
 * and load a second copy of the harness beside the agent's. A dist/ older than a source file under
 * it is refused (bench/built.ts): it would measure other code than the checkout's.
 *
 * Then the same as a user runs it (`cli`): `savepoint run` of the sample day, then `savepoint
 * replay` of it `--replays` times, each command its own process on one state directory: each
 * replay process's CPU over the run process's (cold every time: a new process). The run's figure is
 * the median of three `savepoint run`s, the first before the replays, one halfway and one after
 * them, each on a state directory of its own (only the first is replayed): one run's CPU moved
 * 442–524 ms between CIs of the same code, and the share with it (22–24%). `--json` for
 * bench/check.ts.
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { refundReconciler } from '../agents/refund-reconciler/agent.dev.js';
import type { ReplayResult } from '../local/replay/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtModule } from './built.js';
import { savepointCommand } from './processes.js';
import { median } from './stats.js';

export interface ReplayBenchmark {
  /** Agent steps of the run (model turns plus tool calls). */
  steps: number;
  /** The run's wall time, from the start of its execution to its end. */
  runMs: number;
  replays: { coldMs: number; warmMedianMs: number | null; samplesMs: number[]; setupMs: number[] };
  /** Each replay's time over the run's. */
  share: { cold: number; warm: number | null };
  /** The same in this process's CPU time (user + system). */
  cpu: { runMs: number; coldMs: number; warmMedianMs: number | null; samplesMs: number[]; share: { cold: number; warm: number | null } };
  /** Every replay was identical and made no live call. */
  identical: boolean;
  liveCalls: number;
  /** `savepoint run` and `savepoint replay` as a user runs them: each process's CPU (ms), the runs' median, and each replay's over it. */
  cli: { runCpuMs: number; runCpuMsSamples: number[]; replayCpuMs: number[]; shares: number[]; share: number };
}

export async function replayBenchmark(options: { replays: number }): Promise<ReplayBenchmark> {
  const [{ replayRun }, { startLocalStack }, { waitForChain }] = await Promise.all([
    builtModule<typeof import('../local/replay/index.js')>('local/replay/index.js'),
    builtModule<typeof import('../local/runtime/local-stack.js')>('local/runtime/local-stack.js'),
    builtModule<typeof import('../local/runtime/chain.js')>('local/runtime/chain.js'),
  ]);
  let approvals = '';
  const stack = await startLocalStack({
    agent: refundReconciler,
    retryDelayMs: 1,
    onApproval: (approval) =>
      void fetch(`${approvals}/${approval.approvalId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }) }),
  });
  approvals = stack.endpoints.approvals;
  try {
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    const { executionArn } = stack.engine.startExecution({ name: 'bench-day', input: { runId: 'bench-day', input: stack.world.defaultInput } });
    await waitForChain(stack.engine, stack.ledger, 'bench-day', executionArn);
    const runMs = performance.now() - started;
    const runCpuMs = cpuMs(process.cpuUsage(cpuStarted));
    const run = (await stack.ledger.getRun('bench-day'))!;
    if (run.status !== 'succeeded') throw new Error(`the sample day did not succeed: ${run.status} ${run.stopReason ?? ''}`);
    const served = { model: stack.model.requestCount(), refunds: stack.world.payments.refunds().length };
    const results: ReplayResult[] = [];
    const cpuSamplesMs: number[] = [];
    for (let index = 0; index < options.replays; index += 1) {
      const cpuBefore = process.cpuUsage();
      results.push(await replayRun({ agent: refundReconciler, source: stack.ledger, runId: 'bench-day' }));
      cpuSamplesMs.push(cpuMs(process.cpuUsage(cpuBefore)));
    }
    // Live calls counted where they would land: the run's own model server and payments provider.
    const reached = stack.model.requestCount() - served.model + (stack.world.payments.refunds().length - served.refunds);
    const samplesMs = results.map((result) => result.wallMs);
    const warmMedianMs = warmMedian(samplesMs);
    const warmCpuMs = warmMedian(cpuSamplesMs);
    return {
      steps: run.steps,
      runMs: Math.round(runMs),
      replays: { coldMs: samplesMs[0]!, warmMedianMs, samplesMs, setupMs: results.map((result) => result.setupMs) },
      share: { cold: samplesMs[0]! / runMs, warm: warmMedianMs === null ? null : warmMedianMs / runMs },
      cpu: {
        runMs: Math.round(runCpuMs),
        coldMs: Math.round(cpuSamplesMs[0]!),
        warmMedianMs: warmCpuMs === null ? null : Math.round(warmCpuMs),
        samplesMs: cpuSamplesMs.map(Math.round),
        share: { cold: cpuSamplesMs[0]! / runCpuMs, warm: warmCpuMs === null ? null : warmCpuMs / runCpuMs },
      },
      identical: results.every((result) => result.identical),
      liveCalls: reached + results.reduce((sum, result) => sum + result.live.model + result.live.tools, 0),
      cli: await cliReplays(options.replays),
    };
  } finally {
    await stack.close();
  }
}

/** `savepoint run` of the sample day, then `savepoint replay` of it `replays` times, each its own process (bench/processes.ts), and two more runs beside them. */
async function cliReplays(replays: number): Promise<ReplayBenchmark['cli']> {
  const stateDirs = [1, 2, 3].map(() => mkdtempSync(join(tmpdir(), 'savepoint-bench-replay-')));
  const run = async (stateDir: string) => (await savepointCommand(stateDir, ['run', '--agent', 'refund-reconciler', '--approve', 'approve', '--run-id', 'cli-day'], (output) => output.status === 'succeeded')).cpuMs;
  try {
    const runCpuMsSamples = [await run(stateDirs[0]!)];
    const replayCpuMs: number[] = [];
    for (let index = 0; index < replays; index += 1) {
      const replay = await savepointCommand(stateDirs[0]!, ['replay', 'cli-day'], (output) => output.identical === true && output.live.model + output.live.tools === 0);
      replayCpuMs.push(replay.cpuMs);
      if (index === Math.floor((replays - 1) / 2)) runCpuMsSamples.push(await run(stateDirs[1]!));
    }
    runCpuMsSamples.push(await run(stateDirs[2]!));
    const runCpuMs = median(runCpuMsSamples);
    const shares = replayCpuMs.map((cpu) => cpu / runCpuMs);
    return { runCpuMs, runCpuMsSamples, replayCpuMs, shares, share: median(shares) };
  } finally {
    for (const stateDir of stateDirs) rmSync(stateDir, { recursive: true, force: true });
  }
}

const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;
/** The median of the samples after the first (the cold one); null with one sample. */
function warmMedian(samples: readonly number[]): number | null {
  const warm = samples.slice(1).sort((a, b) => a - b);
  return warm.length === 0 ? null : warm[Math.floor(warm.length / 2)]!;
}

const percent = (share: number) => `${(share * 100).toFixed(0)}%`;

if (process.argv.includes('--replay') || import.meta.filename === process.argv[1]) {
  const { values } = parseArgs({ options: { replay: { type: 'boolean' }, replays: { type: 'string', default: '5' }, json: { type: 'boolean', default: false } }, strict: true });
  const replays = Number(values.replays);
  if (!Number.isInteger(replays) || replays < 1) throw new Error(`--replays: a whole number ≥ 1, not ${values.replays}`);
  const report = await replayBenchmark({ replays });
  if (values.json) console.log(JSON.stringify(report, null, 2));
  else {
    const warm = report.replays.warmMedianMs === null ? '' : `, warm ${report.replays.warmMedianMs} ms (median of ${replays - 1}; ${percent(report.share.warm!)})`;
    const warmCpu = report.cpu.warmMedianMs === null ? '' : `, warm ${report.cpu.warmMedianMs} ms (${percent(report.cpu.share.warm!)})`;
    console.log(`replay of the sample day (${report.steps} steps): run ${report.runMs} ms; replay cold ${report.replays.coldMs} ms (${percent(report.share.cold)})${warm}; ${report.liveCalls} live calls; ${report.identical ? 'identical' : 'DIVERGED'} (target ≤ 10% of the run warm, ≤ 20% cold)`);
    console.log(`CPU time: run ${report.cpu.runMs} ms; replay cold ${report.cpu.coldMs} ms (${percent(report.cpu.share.cold)})${warmCpu}`);
    console.log(`as a user runs them, each its own process: savepoint run ${report.cli.runCpuMs} ms of CPU (median of ${report.cli.runCpuMsSamples.join(', ')}); savepoint replay ${report.cli.replayCpuMs.join(', ')} ms (median ${percent(report.cli.share)} of the run; target ≤ 20%)`);
  }
}
