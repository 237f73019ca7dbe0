/**
 * `npm run bench`: the waste benchmark of the background texts, measured on the real local
 * pipeline — the synthesized definition on the in-process engine, the Lambda handlers, the
 * embedded ledger (the local default), the simulated model and payments provider over HTTP.
 *
 * For N agent steps (model turns + tool calls) with a transient failure probability p per step
 * execution, it measures the Lambda step executions (CallModel + CallTool invocations, failed ones
 * included; CallModel's that only decided, the run's closing decision among them, left out:
 * pipeline.ts decisionOnlyCounter) a completed run takes:
 *   - checkpoint: the definition as deployed (Retry on the failed step, results in the ledger);
 *   - restart: a benchmark variant of the definition without Retry fields, where any failure
 *     throws the run away and a fresh run starts from step 1;
 *   - crashes: the deployed definition with the engine process killed at random step boundaries
 *     (crash injection) and once from outside at a random moment; each time a new process resumes.
 * It prints the figures (or `--json`); nothing here is a test, and nothing is hard-coded.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import type { Day } from '../agents/refund-reconciler/domain.js';
import { parseOrThrow } from '../lambdas/shared/validation.js';
import type { CfnTemplateJson } from '../local/template/asl.js';
import { invocationsInLog } from '../local/engine/history-log.js';
import { synthesizeTemplate } from '../local/template/synthesize.js';
import { seededRandom } from '../sim/random.js';
import { benchStack, runOnce, stepExecutions, type Attempt, type RestartRun } from './pipeline.js';
import { benchProcess } from './processes.js';
import { estimate, median, theory, waste, type Estimate } from './stats.js';
import { dayWithSteps } from './workload.js';

const Options = z.object({
  steps: z.string().transform((text, ctx) => {
    const values = text.split(',').map(Number);
    if (values.some((value) => !Number.isInteger(value) || value < 10 || value > 400)) {
      ctx.addIssue({ code: 'custom', message: `expected step counts from 10 to 400, comma-separated, got "${text}"` });
      return z.NEVER;
    }
    return values;
  }),
  p: z.coerce.number().min(0).max(0.2),
  /** Most checkpoint runs (fewer once the mean is known to ±1%). */
  runs: z.coerce.number().int().min(2).max(1_000),
  restartSeconds: z.coerce.number().positive(),
  crashRuns: z.coerce.number().int().min(0).max(100),
  crashRate: z.coerce.number().min(0).max(0.1),
  /** Processes running the restart baseline side by side. */
  workers: z.coerce.number().int().min(1).max(16),
  seed: z.coerce.number().int().nonnegative(),
  json: z.boolean(),
});
type Options = z.infer<typeof Options>;

const PIPELINE =
  'synthesized definition on the in-process engine, the Lambda handlers, the embedded ledger, simulated model and payments provider over HTTP';

/** Stop a scenario once its mean is known to ±1% (95% confidence), after at least this many runs. */
const TARGET = 0.01;
const MIN_RUNS = 5;
const MAX_ENGINES_PER_RUN = 40;

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '100,200' },
    p: { type: 'string', default: '0.02' },
    runs: { type: 'string', default: '30' },
    'restart-seconds': { type: 'string', default: '120' },
    'crash-runs': { type: 'string', default: '4' },
    'crash-rate': { type: 'string', default: '0.005' },
    workers: { type: 'string', default: String(Math.min(availableParallelism(), 4)) },
    seed: { type: 'string', default: '1' },
    json: { type: 'boolean', default: false },
  },
});
const options = parseOrThrow(
  Options,
  { ...values, restartSeconds: values['restart-seconds'], crashRuns: values['crash-runs'], crashRate: values['crash-rate'] },
  'options',
);
const progress = (line: string) => process.stderr.write(`${line}\n`);


async function benchmark(n: number, opts: Options) {
  const { day, mix } = dayWithSteps(n, opts.seed);
  await checkWorkload(n, day);
  const checkpoint = await checkpointRuns(n, day, opts);
  const restart = await restartRuns(n, day, opts);
  const crashes = opts.crashRuns > 0 ? await crashRuns(n, day, opts) : undefined;
  return {
    n,
    p: opts.p,
    workload: { requests: day.refundRequests.length, ...mix },
    theory: { checkpoint: theory.checkpoint(n, opts.p), restart: theory.restart(n, opts.p) },
    checkpoint,
    restart,
    crashes,
  };
}

/** One run without failures: the workload must be exactly N steps. */
async function checkWorkload(n: number, day: Day) {
  const stack = await benchStack({ day, template, failRate: 0, seed: 0 });
  try {
    const run = await runOnce(stack, 'fault-free', day);
    if (run.status !== 'SUCCEEDED' || run.steps !== n || run.executions !== n) {
      throw new Error(`the workload for N=${n} took ${run.steps} steps (${run.executions} executions, ${run.status}) without failures`);
    }
    progress(`N=${n}: workload checked, ${n} steps without failures`);
  } finally {
    await stack.close();
  }
}

async function checkpointRuns(n: number, day: Day, opts: Options) {
  const stack = await benchStack({ day, template, failRate: opts.p, seed: opts.seed });
  const runs: Attempt[] = [];
  try {
    while (runs.length < opts.runs) {
      runs.push(await runOnce(stack, `checkpoint-${runs.length + 1}`, day));
      const soFar = estimate(runs.map((run) => run.executions));
      if (runs.length >= MIN_RUNS && soFar.relative <= TARGET) break;
    }
  } finally {
    await stack.close();
  }
  const completed = runs.filter((run) => run.status === 'SUCCEEDED' && run.steps === n);
  const executions = estimate(completed.map((run) => run.executions));
  progress(`N=${n}: checkpoint ${describe(executions)}`);
  return {
    executions,
    waste: waste(executions.mean, n),
    invocations: mean(completed.map((run) => run.invocations)),
    msPerStep: median(completed.map((run) => run.wallMs / n)),
    duplicatePayments: sum(runs.map((run) => run.duplicatePayments)),
    runsLost: runs.length - completed.length,
  };
}

/** Runs the baseline in one worker process per core until the time budget is spent. */
async function restartRuns(n: number, day: Day, opts: Options) {
  const files = jobFiles(day);
  const deadline = Date.now() + opts.restartSeconds * 1000;
  const runs: RestartRun[] = [];
  try {
    await Promise.all(
      Array.from({ length: opts.workers }, async (_, worker) => {
        const job = { ...files, p: opts.p, seed: opts.seed + 1 + worker * 7_919, deadline, worker };
        const exit = await benchProcess('./restart-worker.ts', job, {
          onLine: (line) => {
            const run = JSON.parse(line) as RestartRun;
            runs.push(run);
            progress(`N=${n}: restart run ${runs.length}: ${run.executions} executions in ${run.attempts} attempts (${describe(estimate(runs.map((r) => r.executions)))})`);
          },
        });
        if (exit.code !== 0) throw new Error(`restart worker ${worker} failed (${exit.code ?? exit.signal}): ${exit.stderr.slice(-500)}`);
      }),
    );
  } finally {
    rmSync(files.root, { recursive: true, force: true });
  }
  const executions = estimate(runs.map((run) => run.executions));
  return {
    executions,
    waste: waste(executions.mean, n),
    invocations: mean(runs.map((run) => run.invocations)),
    attemptsPerRun: mean(runs.map((run) => run.attempts)),
    /** Refunds, reviews and reports made by attempts that were thrown away: repeated in a world that keeps them. */
    sideEffectsThrownAway: mean(runs.map((run) => run.thrownAway)),
    duplicatePayments: sum(runs.map((run) => run.duplicatePayments)),
    runsLost: 0,
    seconds: opts.restartSeconds,
    workers: opts.workers,
  };
}

/** The day and the synthesized template, in files a benchmark process reads. */
function jobFiles(day: Day): { root: string; dayFile: string; templateFile: string } {
  const root = mkdtempSync(join(tmpdir(), 'savepoint-bench-'));
  const dayFile = join(root, 'day.json');
  const templateFile = join(root, 'template.json');
  writeFileSync(dayFile, JSON.stringify(day));
  writeFileSync(templateFile, JSON.stringify(template));
  return { root, dayFile, templateFile };
}

/** Each run in its own state directory on disk, driven by engine processes that get killed. */
async function crashRuns(n: number, day: Day, opts: Options) {
  const { root, dayFile, templateFile } = jobFiles(day);
  const random = seededRandom(opts.seed);
  const runs = [];
  try {
    for (let index = 0; index < opts.crashRuns; index++) {
      const stateDir = join(root, `run-${index}`);
      const runId = `crash-${index}`;
      let engines = 0;
      let killed = 0;
      let finished = false;
      while (!finished && engines < MAX_ENGINES_PER_RUN) {
        // The first engine of each run is also killed from outside, at a random moment of its run.
        const killAfterMs = engines === 0 ? Math.floor(random() * n * 15) : undefined;
        const job = { stateDir, dayFile, templateFile, runId, failRate: opts.p, seed: opts.seed * 1_000 + index * 50 + engines, crashRate: opts.crashRate };
        const exit = await engineProcess(job, killAfterMs);
        engines += 1;
        if (exit.killedFromOutside) killed += 1;
        finished = exit.result?.run === 'succeeded';
      }
      const invocations = invocationsInLog(join(stateDir, 'history.jsonl'));
      const injected = lines(join(stateDir, 'crashes.jsonl')).length;
      const paid = lines(join(stateDir, 'payments.jsonl'))
        .map((line) => JSON.parse(line) as { kind: string; record: { refundRequestId?: string } })
        .filter((entry) => entry.kind === 'refund')
        .map((entry) => entry.record.refundRequestId);
      const decisions = sum(lines(join(stateDir, 'decisions.jsonl')).map((line) => (JSON.parse(line) as { invocations: number }).invocations));
      const run = { finished, engines, injected, killed, executions: stepExecutions(countsToStates(invocations), decisions), duplicatePayments: paid.length - new Set(paid).size };
      progress(`N=${n}: crash run ${index + 1}: ${run.executions} executions, ${injected} injected crashes + ${killed} killed, ${engines} engines${finished ? '' : ' — LOST'}`);
      runs.push(run);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const completed = runs.filter((run) => run.finished);
  const executions = estimate(completed.map((run) => run.executions));
  return {
    crashRate: opts.crashRate,
    executions,
    waste: waste(executions.mean, n),
    crashesSurvived: { injected: sum(completed.map((run) => run.injected)), killedFromOutside: sum(completed.map((run) => run.killed)) },
    engines: sum(runs.map((run) => run.engines)),
    duplicatePayments: sum(runs.map((run) => run.duplicatePayments)),
    runsLost: runs.length - completed.length,
  };
}

/** One engine process; the first of a run is also killed from outside, `killAfterMs` into its run. */
async function engineProcess(job: object, killAfterMs: number | undefined): Promise<{ result?: { run?: string }; killedFromOutside: boolean }> {
  let killing = false;
  const exit = await benchProcess('./engine-process.ts', job, {
    onStderr: (text, kill) => {
      if (killAfterMs === undefined || killing || !text.includes('running')) return;
      killing = true;
      setTimeout(kill, killAfterMs);
    },
  });
  const injected = exit.stderr.includes('crash injected');
  if (exit.signal !== 'SIGKILL' && exit.code !== 0) progress(`engine process failed (${exit.code}): ${exit.stderr.slice(-500)}`);
  const last = exit.stdout.trim().split('\n').at(-1);
  return { result: last ? (JSON.parse(last) as { run?: string }) : undefined, killedFromOutside: exit.signal === 'SIGKILL' && !injected && killing };
}

// ---- output ---------------------------------------------------------------------------------------

type Result = Awaited<ReturnType<typeof benchmark>>;

function render(all: Result[], opts: Options): string {
  const out = [
    'savepoint waste benchmark — the real local pipeline',
    `  (${PIPELINE})`,
    `  N = agent steps per run (model turns + tool calls); p = ${opts.p} transient failure per step execution;`,
    "  executions = Lambda invocations of CallModel and CallTool per completed run, retries and failed attempts included (CallModel's that decided and called no model left out: orchestration, as BudgetCheck's);",
    '  ± = 95% confidence interval of the mean over the runs shown.',
  ];
  for (const r of all) {
    out.push(
      '',
      `N = ${r.n}: ${r.workload.requests} refund requests (${r.workload.plain} refunds, ${r.workload.already_refunded} already refunded, ${r.workload.mismatch} amount mismatch${r.workload.mismatch === 1 ? '' : 'es'})`,
      row(['scenario', 'runs', 'executions / run', 'theory', 'waste', 'all Lambda / run', 'dup. payments', 'runs lost', 'crashes survived']),
      scenarioRow('checkpoint (the deployed definition)', r.checkpoint, r.theory.checkpoint.toFixed(2)),
      scenarioRow('restart from scratch (variant, no Retry)', r.restart, r.theory.restart.toFixed(1)),
    );
    if (r.crashes) {
      const { injected, killedFromOutside } = r.crashes.crashesSurvived;
      const survived = `${injected + killedFromOutside} (${injected} injected, ${killedFromOutside} SIGKILL)`;
      out.push(scenarioRow(`checkpoint + crashes (${r.crashes.crashRate} per boundary)`, r.crashes, '–', survived));
    }
    out.push(
      `  theory: checkpoint N/(1-p) = ${r.theory.checkpoint.toFixed(2)} (waste ${percent(waste(r.theory.checkpoint, r.n))}); restart (1/p)((1-p)^-N - 1) = ${r.theory.restart.toFixed(1)} (waste ${percent(waste(r.theory.restart, r.n))})`,
      `  restart: ${r.restart.attemptsPerRun.toFixed(1)} attempts per completed run, ${r.restart.workers} processes for ${r.restart.seconds} s; each attempt met the day as it was (the simulated provider is reset),`,
      `    so the ${r.restart.sideEffectsThrownAway.toFixed(1)} refunds, reviews and reports per run made by attempts thrown away would be repeated in a world that keeps them.`,
      `  orchestration overhead: median ${r.checkpoint.msPerStep.toFixed(1)} ms wall per agent step (checkpoint runs: engine, handlers, ledger and simulated services, retry waits included).`,
    );
    if (r.restart.executions.relative > TARGET) {
      out.push(`  the restart mean is known to ±${percent(r.restart.executions.relative)} after ${r.restart.executions.runs} runs, not ±1%: its runs vary as much as they last (more runs: --restart-seconds).`);
    }
  }
  return out.join('\n');
}

interface Scenario {
  executions: Estimate;
  waste: number;
  invocations?: number;
  duplicatePayments: number;
  runsLost: number;
}

function scenarioRow(label: string, scenario: Scenario, theoretical: string, survived = '–'): string {
  const { executions, invocations } = scenario;
  return row([
    label,
    String(executions.runs),
    describe(executions),
    theoretical,
    percent(scenario.waste),
    invocations === undefined ? '–' : invocations.toFixed(1),
    String(scenario.duplicatePayments),
    String(scenario.runsLost),
    survived,
  ]);
}

function describe(e: Estimate): string {
  if (e.runs < 2) return `${e.mean.toFixed(1)} (1 run)`;
  return `${e.mean.toFixed(1)} ± ${e.halfWidth.toFixed(1)} (±${percent(e.relative)})`;
}

const WIDTHS = [42, 5, 26, 8, 7, 17, 14, 10, 24];
function row(cells: string[]): string {
  return `  ${cells.map((cell, index) => cell.padEnd(WIDTHS[index] ?? 10)).join(' ')}`.trimEnd();
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

function mean(values: number[]): number {
  return sum(values) / Math.max(values.length, 1);
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function lines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter((line) => line.length > 0);
  } catch {
    return [];
  }
}

function countsToStates(counts: Record<string, number>): Record<string, { invocations: number }> {
  return Object.fromEntries(Object.entries(counts).map(([state, invocations]) => [state, { invocations }]));
}

// ---- main (last: everything above is initialized) ---------------------------------------------

// The refund reconciler's own stack: each agent's roles reach only its own effects and aggregates (EFFECT#<agent>:*).
const template = (await synthesizeTemplate('refund-reconciler')) as CfnTemplateJson;
const results = [];
for (const n of options.steps) results.push(await benchmark(n, options));
if (options.json) process.stdout.write(`${JSON.stringify({ pipeline: PIPELINE, options, results }, null, 2)}\n`);
else process.stdout.write(`${render(results, options)}\n`);
