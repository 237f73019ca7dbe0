/**
 * `npm run bench -- --growth [--runs 150] [--steps 10] [--json] [--heap-snapshots DIR]`: what a long-lived state directory
 * costs (issue 26, item 9). One engine process runs `--runs` runs of the refund reconciler, one
 * after another, into one state directory on disk (the embedded ledger), and measures
 *   - the engine's heap per finished run: heap used after a forced GC, after the first fifth of
 *     the runs and every `HEAP_EVERY` runs after, and its least-squares slope (what each finished
 *     run leaves retained in the process). The engine keeps the newest finished executions
 *     (RETAINED_EXECUTIONS here; 100 by default) and the embedded ledger the newest finished runs'
 *     records in memory (16): a fixed window, which the first fifth fills, so the figure is what
 *     a run leaves behind past it. V8's optimizing compilers are off in this process: the code
 *     they make grows the heap as more functions get hot (~4 KB a run through the first 150 runs,
 *     ~1.5 KB a run still at 300), which is the compiler warming up, not anything a run leaves;
 *     with them on, that drowns the figure. Each function gets its feedback vector on its first
 *     call, too, not after a budget of calls: a function called once or twice a run got its own
 *     between the first fifth and the middle (56 KB of them in 60 runs, ~0.5 KB a run of the
 *     slope: warm-up again);
 *   - the state directory's bytes per run;
 *   - the commands that read a state directory, each in a fresh process (bin/savepoint.js, as a
 *     user runs it): `status <runId>`, `runs`, `approvals` and `verify --all`; their wall time, CPU
 *     time and peak RSS against a directory with 1 run and against the one with all of them, in
 *     `--reps` pairs (the best of each, and every pair's CPU time: on a shared machine the CPU time
 *     is the steadier figure, and the median of the pairs' ratios the steadier comparison). The
 *     first three read from the ledger's index and should cost the same against both; `verify
 *     --all` checks every line, so its time grows with the log, but not its memory (it streams).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { cachedTemplate } from '../local/template/cache.js';
import type { CfnTemplateJson } from '../local/template/asl.js';
import { benchStack, runOnce } from './pipeline.js';
import { BIN, nodeProcess, savepointCommand as command, type CommandFigures as Figures } from './processes.js';
import { median, pairedRatio } from './stats.js';
import { dayWithPrefix, dayWithSteps } from './workload.js';

/** The finished executions the benchmark's engine keeps (below the first fifth of the runs). */
const RETAINED_EXECUTIONS = 10;
/** What its ledger keeps in memory of the runs and effects it is done with (each below the first fifth of the runs, as RETAINED_EXECUTIONS). */
const LEDGER_MEMORY = { retainFinishedRuns: 4, retainEffects: 4, listedFinishedRuns: 4 } as const;
/** Runs between two heap samples past the first fifth (each a forced GC, ~50 ms). */
const HEAP_EVERY = 5;


const { values } = parseArgs({
  options: { growth: { type: 'boolean' }, runs: { type: 'string', default: '150' }, steps: { type: 'string', default: '10' }, reps: { type: 'string', default: '5' }, json: { type: 'boolean', default: false }, 'heap-snapshots': { type: 'string' } },
  strict: true,
});
const runs = Number(values.runs);
const steps = Number(values.steps);
const reps = Number(values.reps);
if (!(runs >= 40) || !(steps >= 4) || !(reps >= 3)) throw new Error('--runs must be at least 40 (a fifth past the windows), --steps at least 4, --reps at least 3 (a median of pairs)');

setFlagsFromString('--expose-gc');
// Before any run: no function is optimized yet (see the comment at the top).
setFlagsFromString('--no-opt');
setFlagsFromString('--no-sparkplug');
setFlagsFromString('--no-lazy-feedback-allocation'); // (see the comment at the top)
const gc = runInNewContext('gc') as () => void;
const heapMb = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

/**
 * Runs `count` runs into `stateDir`; calls `at(i)` after each (the heap probe). Each run reconciles
 * a day of its own refund requests (ids under the run's prefix), as each night's run does: the
 * refund and review tools key their effects by refund request, across runs, so runs of one same
 * day would pay and record nothing after the first, and what effects leave per run go unmeasured.
 * Every other run has a refund above the approval threshold, approved as it is asked for (through
 * the approval API, as a person's click is): approvals, their indexes and task tokens grow too.
 * Returns the first run's id (not every id: the probe would count that list as the engine's).
 */
async function fill(stateDir: string, count: number, at: (done: number) => void = () => undefined): Promise<string> {
  const days = [dayWithSteps(steps, 1, 1), dayWithSteps(steps, 1, 0)];
  const template = (await cachedTemplate('refund-reconciler')) as CfnTemplateJson;
  let approvals = '';
  const approve = (approvalId: string) =>
    fetch(`${approvals}/${approvalId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }) }).then(async (response) => {
      if (!response.ok) throw new Error(`approving ${approvalId}: ${response.status} ${await response.text()}`);
    });
  const refused: unknown[] = [];
  const stack = await benchStack({
    day: days[0]!.day,
    template,
    failRate: 0,
    seed: 1,
    worldInMemory: true,
    stateDir,
    log: () => undefined,
    retainFinishedExecutions: RETAINED_EXECUTIONS,
    ledgerMemory: LEDGER_MEMORY,
    onApproval: (approval) => void approve(approval.approvalId).catch((error: unknown) => refused.push(error)),
  });
  approvals = stack.endpoints.approvals;
  let first: string | undefined;
  try {
    for (let i = 0; i < count; i++) {
      const runId = `growth-${String(i + 1).padStart(4, '0')}`;
      const { day: plain, mix } = days[i % days.length]!;
      const prefix = `g${String(i + 1).padStart(4, '0')}_`;
      const attempt = await runOnce(stack, runId, dayWithPrefix(plain, prefix));
      if (refused.length > 0) throw new Error(`run ${runId}: ${String(refused[0])}`);
      if (attempt.status !== 'SUCCEEDED' || attempt.duplicatePayments > 0) throw new Error(`run ${runId}: ${attempt.status}, ${attempt.duplicatePayments} duplicate payments`);
      // What the run should have done, in its own world: a refund for each plain and approved request, a review for each mismatch.
      const paid = stack.world.payments.refunds();
      const reviews = stack.world.payments.reviews();
      if (paid.length !== mix.plain + mix.large || reviews.length !== mix.mismatch || ![...paid, ...reviews].every((made) => made.refundRequestId.startsWith(prefix))) {
        throw new Error(`run ${runId}: paid ${paid.length} and flagged ${reviews.length} of its requests, expected ${mix.plain + mix.large} and ${mix.mismatch}`);
      }
      first ??= runId;
      at(i + 1);
    }
  } finally {
    await stack.close();
  }
  return first!;
}

const best = (samples: readonly Figures[]): Figures => ({
  wallMs: Math.min(...samples.map((sample) => sample.wallMs)),
  cpuMs: Math.min(...samples.map((sample) => sample.cpuMs)),
  startCpuMs: Math.min(...samples.map((sample) => sample.startCpuMs)),
  peakRssMb: Math.min(...samples.map((sample) => sample.peakRssMb)),
});

/**
 * Each reading command against the directory with 1 run and the one with `count`, `reps` times in
 * pairs, one right after the other, the order swapped every pair (one-many, many-one, …): a
 * process's CPU time moves by a fifth with what else the shared machine runs, and two processes
 * side by side feel about the same load, where two blocks of reps a few seconds apart may not
 * (CI once measured `status` at 1.40× of one run that way, with nothing grown). The report keeps
 * every pair's CPU time: bench/check.ts judges the median of the pairs' ratios.
 */
async function commands(one: { dir: string; runId: string }, many: { dir: string; runId: string; count: number }) {
  const rows = {
    status: { args: (runId: string) => ['status', runId], check: (_count: number) => (output: any) => output.status === 'succeeded' },
    runs: { args: () => ['runs'], check: (count: number) => (output: any) => output.runs.length === Math.min(count, 50) && output.damaged === undefined },
    approvals: { args: () => ['approvals'], check: () => (output: any) => Array.isArray(output.approvals) },
    verifyAll: { args: () => ['verify', '--all'], check: (count: number) => (output: any) => output.ok === true && output.runs.length === count },
  };
  // The first start after a change builds the CLI's bundle (bin/savepoint.js): not a figure of either side.
  await command(one.dir, rows.status.args(one.runId), rows.status.check(1));
  const figures = {} as Record<keyof typeof rows, { oneRun: Figures; manyRuns: Figures; cpuMsPairs: [oneRun: number, manyRuns: number][]; cpuRatioToStart: number }>;
  for (const [name, row] of Object.entries(rows) as [keyof typeof rows, (typeof rows)[keyof typeof rows]][]) {
    const pairs: [Figures, Figures][] = [];
    for (let i = 0; i < reps; i++) {
      const measureOne = () => command(one.dir, row.args(one.runId), row.check(1));
      const measureMany = () => command(many.dir, row.args(many.runId), row.check(many.count));
      if (i % 2 === 0) {
        const oneRun = await measureOne();
        pairs.push([oneRun, await measureMany()]);
      } else {
        const manyRuns = await measureMany();
        pairs.push([await measureOne(), manyRuns]);
      }
    }
    figures[name] = {
      oneRun: best(pairs.map(([oneRun]) => oneRun)),
      manyRuns: best(pairs.map(([, manyRuns]) => manyRuns)),
      cpuMsPairs: pairs.map(([oneRun, manyRuns]) => [oneRun.cpuMs, manyRuns.cpuMs]),
      // The command's whole CPU on a small state directory over its own process's start (Node's, before the CLI's first import), the median of the reps: what bench/check.ts holds.
      cpuRatioToStart: Number(median(pairs.map(([oneRun]) => oneRun.cpuMs / oneRun.startCpuMs)).toFixed(2)),
    };
  }
  return figures;
}

/**
 * A state directory of one run made by `savepoint run` (its world's journals in it: a `serve`
 * started on the directory checks them against the ledger, which fill's in-memory world leaves out).
 */
async function cliRun(dir: string, template: string): Promise<{ dir: string; runId: string }> {
  const end = await nodeProcess([BIN, '--state-dir', dir, 'run', '--agent', 'refund-reconciler', '--template', template, '--json']);
  if (end.code !== 0) throw new Error(`savepoint run ended with code ${end.code}: ${end.stderr.slice(-2000)}`);
  return { dir, runId: (JSON.parse(end.stdout) as { runId: string }).runId };
}

/**
 * The three reading commands while `savepoint serve` runs on the directory of one run: they ask
 * its runs API through the client and open no ledger (cli/target.ts withRuns). Each `reps` times;
 * the median of each process's CPU over its own Node start is what bench/check.ts holds
 * (SPEED_LIMITS.cliServed).
 */
async function servedCommands(one: { dir: string; runId: string }, template: string) {
  const serve = spawn(process.execPath, [BIN, '--state-dir', one.dir, 'serve', '--agent', 'refund-reconciler', '--template', template], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    await new Promise<void>((resolve, reject) => {
      let output = '';
      serve.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (/^savepoint: ready$/m.test(output)) resolve();
      });
      serve.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      serve.on('close', (code) => reject(new Error(`serve ended (${code}) before it was ready: ${output.slice(-2000)}`)));
    });
    const rows = {
      status: { args: ['status', one.runId], check: (output: any) => output.status === 'succeeded' },
      runs: { args: ['runs'], check: (output: any) => output.runs.length === 1 },
      approvals: { args: ['approvals'], check: (output: any) => Array.isArray(output.approvals) },
    };
    const figures = {} as Record<keyof typeof rows, Figures & { cpuRatioToStart: number }>;
    for (const [name, row] of Object.entries(rows) as [keyof typeof rows, (typeof rows)[keyof typeof rows]][]) {
      const samples: Figures[] = [];
      for (let i = 0; i < reps; i++) samples.push(await command(one.dir, row.args, row.check));
      figures[name] = { ...best(samples), cpuRatioToStart: Number(median(samples.map((sample) => sample.cpuMs / sample.startCpuMs)).toFixed(2)) };
    }
    return figures;
  } finally {
    serve.kill('SIGTERM');
    await new Promise((resolve) => (serve.exitCode === null ? serve.once('close', resolve) : resolve(undefined)));
  }
}

const dirBytes = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => sum + (entry.isDirectory() ? dirBytes(join(dir, entry.name)) : statSync(join(dir, entry.name)).size), 0);

const template = await cachedTemplate('refund-reconciler');
const root = mkdtempSync(join(tmpdir(), 'savepoint-growth-'));
try {
  const one = join(root, 'one');
  const onlyRun = await fill(one, 1);
  const many = join(root, 'many');
  const warm = Math.floor(runs / 5);
  const heap: [done: number, mb: number][] = [];
  const firstRun = await fill(many, runs, (done) => {
    if (done === runs || (done >= warm && (done - warm) % HEAP_EVERY === 0)) heap.push([done, heapMb()]);
    // `--heap-snapshots DIR`: what bench/heap-diff.ts reads, to find what the runs leave behind.
    if (values['heap-snapshots'] && [warm, Math.round((warm + runs) / 2), runs].includes(done)) writeHeapSnapshot(join(values['heap-snapshots'], `growth-${done}.heapsnapshot`));
  });
  const heapAfterWarm = heap[0]![1];
  const heapAtEnd = heap.at(-1)![1];
  const report = {
    options: { runs, steps, reps, retainedExecutions: RETAINED_EXECUTIONS },
    engine: { heapAfterWarmMb: round(heapAfterWarm), heapAtEndMb: round(heapAtEnd), heapPerRunKb: round(slope(heap) * 1024) },
    stateDir: { bytesPerRun: Math.round(dirBytes(many) / runs) },
    ...(await commands({ dir: one, runId: onlyRun! }, { dir: many, runId: firstRun, count: runs })),
    served: await servedCommands(await cliRun(join(root, 'served'), templateFile(root)), templateFile(root)),
  };
  if (values.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else {
    const { engine, stateDir } = report;
    const row = (name: string, { oneRun, manyRuns, cpuMsPairs, cpuRatioToStart }: { oneRun: Figures; manyRuns: Figures; cpuMsPairs: [number, number][]; cpuRatioToStart: number }) =>
      `  savepoint ${name}: ${oneRun.wallMs} ms (${oneRun.cpuMs} ms CPU, ${cpuRatioToStart}× its Node start's ${oneRun.startCpuMs} ms) / ${oneRun.peakRssMb} MB with 1 run, ${manyRuns.wallMs} ms (${manyRuns.cpuMs} ms CPU) / ${manyRuns.peakRssMb} MB with ${runs}; CPU ${pairedRatio(cpuMsPairs).toFixed(2)}× (median of ${cpuMsPairs.length} pairs)`;
    process.stdout.write(
      [
        `growth: ${runs} runs of ${steps} steps in one engine process and one state directory`,
        `  engine heap: ${engine.heapAfterWarmMb} MB after ${warm} runs, ${engine.heapAtEndMb} MB after ${runs}: ${engine.heapPerRunKb} KB per run`,
        `  state directory: ${stateDir.bytesPerRun} bytes per run`,
        row('status', report.status),
        row('runs', report.runs),
        row('approvals', report.approvals),
        row('verify --all', report.verifyAll),
        ...(['status', 'runs', 'approvals'] as const).map((name) => `  savepoint ${name}, serve answering: ${report.served[name].cpuMs} ms CPU, ${report.served[name].cpuRatioToStart}× its Node start's ${report.served[name].startCpuMs} ms`),
      ].join('\n') + '\n',
    );
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

/** The refund reconciler's synthesized template in a file, for the serve this benchmark starts. */
function templateFile(dir: string): string {
  const file = join(dir, 'template.json');
  writeFileSync(file, JSON.stringify(template));
  return file;
}

/** The least-squares slope of `points` (y per x). */
function slope(points: readonly (readonly [number, number])[]): number {
  const n = points.length;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  return sxy / sxx;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
