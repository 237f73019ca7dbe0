/**
 * `npm run bench -- --overhead [--steps 100] [--runs 10] [--ledgers memory,disk,dynalite] [--json]`:
 * what the harness costs per agent step, in one warm process.
 *
 * The workload: the refund reconciler on a day of N agent steps (model turns + tool calls), p = 0,
 * the simulated model and payments provider with no added latency. For each ledger (embedded in
 * memory, embedded on disk, the DynamoDB ledger on dynalite) it runs the whole local stack — the
 * synthesized definition on the in-process engine, the step handlers, the ledger — once to warm up
 * and then `runs` times, and takes the median of each figure:
 *   - ms per agent step: the run's wall time / N;
 *   - ledger calls per agent step: every call through the ledger (a counting decorator) / N;
 *   - state transitions per agent step: states entered / N;
 * and, in the same process, the floor: the same definition on the bare interpreter with stub
 * tasks that return what the real steps returned, in the same order (no ledger, no HTTP).
 * Peak RSS is the process's, after each ledger. Nothing here is a test; nothing is hard-coded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { countingLedger, type CountingLedger } from '../lambdas/ledger/counting-ledger.js';
import type { ToolUseBlock } from '../lambdas/agent/messages.js';
import { Steps } from '../lambdas/shared/steps.js';
import { parseOrThrow } from '../lambdas/shared/validation.js';
import { extractStateMachine, type CfnTemplateJson } from '../local/asl.js';
import { LocalEngine, summarizeHistory, type TaskBinding } from '../local/engine.js';
import type { LedgerKind } from '../local/runtime.js';
import { cachedTemplate } from '../local/template-cache.js';
import { benchStack, runOnce } from './pipeline.js';
import { median } from './stats.js';
import { dayWithSteps } from './workload.js';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const TARGETS = { memory: 'embedded ledger, in memory', disk: 'embedded ledger, on disk', dynalite: 'DynamoDB ledger on dynalite' } as const;
type Target = keyof typeof TARGETS;

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
  msPerStep: number;
  ratioToFloor?: number;
  ledgerCallsPerStep?: number;
  /** Median calls per agent step, by ledger method. */
  callsByMethod?: Record<string, number>;
  transitionsPerStep: number;
  peakRssMb: number;
  runs: number;
}

/** One transition per state entered: the figure the Step Functions bill counts. */
const transitions = (states: ReturnType<typeof summarizeHistory>) => Object.values(states).reduce((sum, state) => sum + state.entered, 0);
const peakRssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);

async function measureStack(target: Target, template: CfnTemplateJson, steps: number, runs: number, progress: (line: string) => void) {
  const { day } = dayWithSteps(steps);
  const stateDir = target === 'memory' ? undefined : mkdtempSync(join(tmpdir(), `savepoint-overhead-${target}-`));
  let counter: CountingLedger | undefined;
  const stack = await benchStack({
    day,
    template,
    failRate: 0,
    seed: 1,
    stateDir,
    // Only the ledger goes to disk: the provider is reset to the same day before every run.
    worldInMemory: true,
    ledger: (target === 'dynalite' ? 'dynalite' : 'embedded') satisfies LedgerKind,
    decorateLedger: (ledger) => (counter = countingLedger(ledger)).ledger,
  });
  try {
    const warm = await runOnce(stack, 'overhead-warm-up', day);
    if (warm.status !== 'SUCCEEDED' || warm.steps !== steps) throw new Error(`${target}: the warm-up run ${warm.status} after ${warm.steps} of ${steps} steps`);
    const recorded = await recordedOutputs(stack, 'overhead-warm-up');
    const samples: { ms: number; calls: number; transitions: number; byMethod: Record<string, number> }[] = [];
    for (let run = 1; run <= runs; run++) {
      counter!.reset();
      const runId = `overhead-${run}`;
      const attempt = await runOnce(stack, runId, day);
      if (attempt.status !== 'SUCCEEDED' || attempt.steps !== steps) throw new Error(`${target}: run ${run} ${attempt.status} after ${attempt.steps} steps`);
      const states = summarizeHistory(stack.engine.getExecutionHistory(attempt.executionArn));
      samples.push({ ms: attempt.wallMs / steps, calls: counter!.total() / steps, transitions: transitions(states) / steps, byMethod: counter!.counts() });
      progress(`  ${target} run ${run}: ${(attempt.wallMs / steps).toFixed(2)} ms/step, ${(counter!.total() / steps).toFixed(2)} ledger calls/step`);
    }
    const methods = new Set(samples.flatMap((sample) => Object.keys(sample.byMethod)));
    const callsByMethod = Object.fromEntries(
      [...methods].map((method) => [method, round(median(samples.map((sample) => (sample.byMethod[method] ?? 0) / steps)), 3)]).sort((a, b) => Number(b[1]) - Number(a[1])),
    );
    return {
      figures: {
        target: TARGETS[target],
        msPerStep: median(samples.map((sample) => sample.ms)),
        ledgerCallsPerStep: median(samples.map((sample) => sample.calls)),
        callsByMethod,
        transitionsPerStep: median(samples.map((sample) => sample.transitions)),
        peakRssMb: peakRssMb(),
        runs,
      } satisfies OverheadFigures,
      recorded,
    };
  } finally {
    await stack.close();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  }
}

/**
 * What each Task state of a finished run returned, in order, rebuilt from the ledger: the stub
 * tasks of the floor return the same, so the bare interpreter walks the same path.
 */
async function recordedOutputs(stack: Awaited<ReturnType<typeof benchStack>>, runId: string) {
  const { turns } = await stack.ledger.listConversation(runId);
  return turns.map((turn) => ({
    turn: turn.turn,
    stopReason: turn.stopReason,
    tools: turn.content.filter((block): block is ToolUseBlock => block.type === 'tool_use').map((block) => block.name),
  }));
}

/** The floor: the same definition on the bare interpreter, every Task a stub returning the recorded step's result. */
async function measureFloor(template: CfnTemplateJson, turns: { turn: number; stopReason: string; tools: string[] }[], steps: number, runs: number) {
  const extracted = extractStateMachine(template);
  const next = (turn: number, afterCall: number) => {
    const name = turns[turn - 1]?.tools[afterCall];
    return name === undefined ? null : { turn, call: afterCall + 1, name, needsApproval: false };
  };
  const stubs: Record<string, (payload: any) => unknown> = {
    [Steps.StartRun]: (payload) => ({ runId: payload.event.runId, action: 'start', status: 'running' }),
    [Steps.BudgetCheck]: (() => {
      let turn = 0;
      return () => (++turn <= turns.length ? { continue: true, nextTurn: turn, pending: null } : ((turn = 0), { continue: false, status: 'succeeded', reason: 'done' }));
    })(),
    [Steps.CallModel]: (payload) => ({ turn: payload.turn, stopReason: turns[payload.turn - 1]!.stopReason, toolCalls: turns[payload.turn - 1]!.tools.length, next: next(payload.turn, 0) }),
    [Steps.CallTool]: (payload) => ({ turn: payload.turn, call: payload.call, name: turns[payload.turn - 1]!.tools[payload.call - 1], outcome: 'ok', next: next(payload.turn, payload.call) }),
    [Steps.Finalize]: (payload) => ({ runId: payload.runId, status: 'succeeded' }),
  };
  const tasks: Record<string, TaskBinding> = {};
  for (const [stateName, task] of Object.entries(extracted.tasks)) {
    const stub = stubs[task.step] ?? (() => ({}));
    tasks[stateName] = { waitForTaskToken: task.waitForTaskToken, invoke: async (payload) => stub(payload) };
  }
  const engine = new LocalEngine({ definition: extracted.definition, stateMachineArn: extracted.stateMachineArn, tasks });
  try {
    const once = async (name: string) => {
      const started = performance.now();
      const { executionArn } = engine.startExecution({ name, input: { runId: name, input: {} } });
      const done = await engine.waitForExecution(executionArn);
      if (done.status !== 'SUCCEEDED') throw new Error(`the floor's run ${name} ${done.status}: ${done.error} ${done.cause}`);
      return { ms: (performance.now() - started) / steps, transitions: transitions(summarizeHistory(engine.getExecutionHistory(executionArn))) / steps };
    };
    await once('floor-warm-up');
    const samples = [];
    for (let run = 1; run <= runs; run++) samples.push(await once(`floor-${run}`));
    return {
      target: 'floor: bare interpreter, stub tasks',
      msPerStep: median(samples.map((sample) => sample.ms)),
      transitionsPerStep: median(samples.map((sample) => sample.transitions)),
      peakRssMb: peakRssMb(),
      runs,
    } satisfies OverheadFigures;
  } finally {
    await engine.close();
  }
}

function round(value: number, digits = 2): number {
  return Number(value.toFixed(digits));
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
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  // From the template cache, as `savepoint run` reads it: the CDK (and its memory) stays out of the process.
  const template = (await cachedTemplate('refund-reconciler')) as CfnTemplateJson;
  const results: OverheadFigures[] = [];
  let recorded: Awaited<ReturnType<typeof measureStack>>['recorded'] | undefined;
  for (const target of options.ledgers) {
    progress(`overhead: ${TARGETS[target]}, ${options.steps} steps × ${options.runs} runs…`);
    const measured = await measureStack(target, template, options.steps, options.runs, progress);
    results.push(measured.figures);
    recorded ??= measured.recorded;
  }
  const floor = await measureFloor(template, recorded!, options.steps, options.runs);
  for (const result of results) result.ratioToFloor = result.msPerStep / floor.msPerStep;
  results.push(floor);

  if (options.json) {
    process.stdout.write(`${JSON.stringify({ steps: options.steps, runs: options.runs, node: process.version, results }, null, 2)}\n`);
    return;
  }
  const header = ['', 'ms/step', '× floor', 'ledger calls/step', 'transitions/step', 'peak RSS MB'];
  const rows = results.map((result) => [
    result.target,
    result.msPerStep.toFixed(3),
    result.ratioToFloor === undefined ? '1' : result.ratioToFloor.toFixed(1),
    result.ledgerCallsPerStep === undefined ? '–' : result.ledgerCallsPerStep.toFixed(2),
    result.transitionsPerStep.toFixed(2),
    String(result.peakRssMb),
  ]);
  const widths = header.map((_, column) => Math.max(...[header, ...rows].map((row) => row[column]!.length)));
  const line = (row: string[]) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  console.log(`overhead per agent step: N = ${options.steps}, p = 0, median of ${options.runs} runs, one warm process (Node ${process.version})`);
  console.log(line(header));
  for (const row of rows) console.log(line(row));
  for (const result of results) {
    if (result.callsByMethod) console.log(`ledger calls per step, ${result.target}: ${Object.entries(result.callsByMethod).map(([method, calls]) => `${method} ${calls}`).join(', ')}`);
  }
}
