/**
 * `npm run bench -- --ledger [--steps 100] [--reps 10] [--json]`: the ledger's share of an
 * agent step, per ledger implementation.
 *
 * One repetition is the ledger calls the steps make today for `steps` agent steps, in pairs of a
 * model turn and one side-effecting tool call (two agent steps, 6 calls):
 *   loadStep, countStep, recordTurn     (CallModel: one batched read for the decision and the call, the call's reservation
 *                                        counting the last turn's call, then the turn with its count, handing its call what it left)
 *   checkHanded, claimCall, completeCall (CallTool, handed its turn's state (lambdas/steps/handed-step.ts): its seal checked,
 *                                        the claim on the versions handed, the record around the side effect)
 * — 3 calls per agent step (3.5 before 0.15.0, when a call read first; 4 while BudgetCheck read the
 * run again before each turn); a real day mixes in reads (one `recordCall` instead of claim and
 * complete). Each repetition is a fresh ledger and a fresh run; the figure is the median over
 * repetitions of the mean ms per agent step (wall and this process's CPU: dynalite serves in this
 * process), after WARM_UP_REPS warm-up repetitions.
 *
 * The floor: the same calls on a map from key to each record's JSON text (floorLedger) — the least
 * any ledger does, serialize what it stores and parse what it reads — run FLOOR_REPS times after
 * each repetition of each row, so that every row's "× floor" compares two figures taken in the
 * same process in the same seconds, whatever else the machine was doing then (bench/check.ts
 * bounds those ratios). Nothing here is a test.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DynamoDbLedger } from '../lambdas/ledger/dynamodb-ledger.js';
import { EmbeddedLedger } from '../lambdas/ledger/embedded-ledger.js';
import type { Ledger, TurnSeen } from '../lambdas/ledger/ledger.js';
import { handedContent } from '../lambdas/ledger/handed-versions.js';
import type { RunRecord, ToolCallRecord, TurnRecord } from '../lambdas/records/ledger-records.js';
import { runRecord } from '../test/support/records.js';
import { ensureTable, startDynamo } from '../local/services/dynamodb.js';
import { ledgerTableFromTemplate, type CfnTemplate } from '../local/template/synthesize.js';
import { cachedTemplate } from '../local/template/cache.js';
import { median } from './stats.js';
import { ephemeralSealer } from '../lambdas/ledger/seal.js';

// Like bin/savepoint.js: the SDK's Node 20 notice is noise here (read when the client is created).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const { values: args } = parseArgs({
  options: {
    ledger: { type: 'boolean', default: true },
    steps: { type: 'string', default: '100' },
    reps: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
  },
});
const STEPS = Number(args.steps);
const REPS = Number(args.reps);
/** Ledger calls per agent step of `turnAndCall` (6 per pair of steps). */
const CALLS_PER_STEP = 3;
/**
 * Floor repetitions after each of a row's, each of FLOOR_STEPS_FACTOR times the row's steps: 20
 * of the floor's steps take about half a millisecond of CPU, which one sample measures mostly as
 * noise (measured 0.02–0.08 ms a step in one minute).
 */
const FLOOR_REPS = 5;
const FLOOR_STEPS_FACTOR = 10;
/** Warm-up repetitions of each row: with one, CI's 20-step form measured code the JIT had not finished with (CPU per step moved 2× between repetitions). */
const WARM_UP_REPS = 3;

/** What `turnAndCall` calls: every ledger has these, the floor too. */
type StepCalls = Pick<Ledger, 'createRun' | 'loadStep' | 'countStep' | 'recordTurn' | 'checkHanded' | 'claimCall' | 'completeCall'>;

interface Target {
  name: string;
  /** A fresh, empty ledger, and how to dispose of it. */
  open(): Promise<{ ledger: StepCalls; close(): Promise<void>; bytes?: () => number }>;
}

/** A model turn and its one side-effecting tool call: two agent steps, as the steps make them. */
async function turnAndCall(ledger: StepCalls, runId: string, turn: number, now: Date): Promise<void> {
  const want = { turns: [turn, turn + 1], calls: [1, 2, 3].map((call) => ({ turn, call })) };
  // CallModel (its decision and the call from one read)
  await ledger.loadStep(runId, want);
  // The reservation counts the last turn's call, which its turn's write did not (ledger/open-turn.ts).
  await ledger.countStep(runId, `reserve:${turn}`, { reservedTokens: 4_000, reservedMicros: 9_000 }, turn > 1 ? { turn: turn - 1, calls: [1], closed: true } : undefined);
  const usage = { input_tokens: 1800 + turn * 40, output_tokens: 120 };
  let seen: TurnSeen | undefined;
  const recorded: TurnRecord = {
    kind: 'turn',
    runId,
    turn,
    model: 'savepoint-sim-1',
    content: [
      { type: 'text', text: `Turn ${turn}: the refund for order ${1000 + turn} does not match the ledger; issuing the difference.` },
      { type: 'tool_use', id: `toolu_${turn}_1`, name: 'issue_refund', input: { orderId: `ord_${1000 + turn}`, amountCents: 1250, reason: 'mismatch' } },
    ],
    stopReason: 'tool_use',
    usage,
    costMicros: 6_000,
    latencyMs: 0,
    recordedAt: now.toISOString(),
  };
  await ledger.recordTurn(recorded, {
    stepKey: `turn:${turn}`,
    deltas: { steps: 1, modelTurns: 1, inputTokens: usage.input_tokens, outputTokens: usage.output_tokens, costMicros: 6_000, reservedTokens: -4_000, reservedMicros: -9_000 },
    handing: (saw) => (seen = saw),
  });
  if (!seen?.basis) throw new Error(`turn ${turn}: the turn's write handed its call nothing`);
  // CallTool, handed what the turn's write left
  const basis = { ...seen.basis, content: handedContent(seen.run, seen.globalKill, recorded) };
  await ledger.checkHanded(runId, basis);
  const claim = await ledger.claimCall(
    {
      kind: 'tool',
      runId,
      turn,
      call: 1,
      toolCallId: `toolu_${turn}_1`,
      name: 'issue_refund',
      args: { orderId: `ord_${1000 + turn}`, amountCents: 1250, reason: 'mismatch' },
      effect: 'write',
      idempotencyKey: `${runId}:${turn}:toolu_${turn}_1`,
      status: 'in_flight',
      leaseUntil: new Date(now.getTime() + 60_000).toISOString(),
      attempts: 0,
    },
    now,
    undefined,
    basis,
  );
  if (!claim.claimed) throw new Error(`turn ${turn}: claim refused`);
  await ledger.completeCall({ runId, turn, call: 1, outcome: { outcome: 'ok', result: `{"refundId":"re_${turn}","status":"succeeded"}`, latencyMs: 0 }, now });
}

/** Runs one repetition: `steps` agent steps on a fresh ledger; returns mean ms (wall and CPU) per step and log bytes per step. */
async function repetition(target: Target, steps = STEPS): Promise<{ msPerStep: number; cpuMsPerStep: number; bytesPerStep?: number }> {
  const { ledger, close, bytes } = await target.open();
  try {
    const now = new Date('2026-11-29T02:00:00Z');
    const run = runRecord({
      runId: 'bench',
      agent: 'refund-reconciler',
      input: { date: '2026-11-28' },
      prompt: 'Reconcile',
      model: 'savepoint-sim-1',
      executionArn: 'arn:1',
      executions: ['arn:1'],
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      budgetExtensions: {},
    });
    await ledger.createRun(run);
    const before = bytes?.();
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    for (let turn = 1; turn <= steps / 2; turn++) await turnAndCall(ledger, run.runId, turn, now);
    const cpu = process.cpuUsage(cpuBefore);
    const msPerStep = (performance.now() - started) / steps;
    return { msPerStep, cpuMsPerStep: (cpu.user + cpu.system) / 1000 / steps, bytesPerStep: before === undefined ? undefined : (bytes!() - before) / steps };
  } finally {
    await close();
  }
}

/**
 * The floor's ledger: each record kept as its JSON text under its key, read back by parsing it —
 * no condition, seal, counter, copy, index or log. A claim always succeeds; a completion merges
 * the outcome into the claimed record.
 */
function floorLedger(): StepCalls {
  const items = new Map<string, string>();
  const put = <T>(key: string, record: T): T => (items.set(key, JSON.stringify(record)), record);
  const get = <T>(key: string): T | undefined => {
    const text = items.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  };
  const count = (runId: string, stepKey: string, deltas: unknown) => put(`count#${runId}#${stepKey}`, deltas);
  const callKey = (runId: string, turn: number, call: number) => `call#${runId}#${turn}#${call}`;
  return {
    createRun: async (run) => (put(`run#${run.runId}`, run), true),
    loadStep: async (runId, want) => ({
      run: get(`run#${runId}`),
      turns: (want?.turns ?? []).flatMap((turn) => get<TurnRecord>(`turn#${runId}#${turn}`) ?? []),
      calls: (want?.calls ?? []).flatMap(({ turn, call }) => get<ToolCallRecord>(callKey(runId, turn, call)) ?? []),
    }),
    countStep: async (runId, stepKey, deltas) => (count(runId, stepKey, deltas), true),
    recordTurn: async (turn, counted) => {
      if (counted) count(turn.runId, counted.stepKey, counted.deltas);
      // What the turn's write left, handed on (versions and a seal the floor never compares).
      counted?.handing?.({ run: get<RunRecord>(`run#${turn.runId}`)!, basis: { run: 'run', kill: null, mac: 'mac' } });
      return put(`turn#${turn.runId}#${turn.turn}`, turn);
    },
    checkHanded: async () => {},
    claimCall: async (call) => ({ claimed: true, record: put(callKey(call.runId, call.turn, call.call), call) }),
    completeCall: async ({ runId, turn, call, outcome }) => {
      return put(callKey(runId, turn, call), { ...get<ToolCallRecord>(callKey(runId, turn, call))!, ...outcome, status: 'completed' });
    },
  };
}

const floor: Target = {
  name: 'floor: JSON text in a map',
  open: async () => ({ ledger: floorLedger(), close: async () => {} }),
};

const embeddedMemory: Target = {
  name: 'embedded, memory',
  open: async () => {
    const ledger = EmbeddedLedger.open();
    return { ledger, close: async () => ledger.close() };
  },
};

const embeddedDisk: Target = {
  name: 'embedded, disk',
  open: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-bench-ledger-'));
    const ledger = EmbeddedLedger.open({ dir });
    return {
      ledger,
      bytes: () => statSync(join(dir, 'ledger.jsonl')).size,
      close: async () => {
        ledger.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

async function dynaliteMemory(): Promise<Target & { stop(): Promise<void> }> {
  const dynamo = await startDynamo();
  // From the template cache, as a run reads it: no CDK synth here.
  const template: CfnTemplate = await cachedTemplate('refund-reconciler');
  let tables = 0;
  return {
    name: 'DynamoDB on dynalite, memory',
    open: async () => {
      const name = `bench-${++tables}`;
      await ensureTable(dynamo.client, ledgerTableFromTemplate(template, name));
      return { ledger: new DynamoDbLedger(dynamo.client, name, ephemeralSealer()), close: async () => {} };
    },
    stop: () => dynamo.close(),
  };
}

const dynalite = await dynaliteMemory();
const rows: {
  ledger: string;
  msPerStep: number;
  cpuMsPerStep: number;
  msPerCall: number;
  min: number;
  max: number;
  logBytesPerStep?: number;
  /** The floor, measured after each of this row's repetitions: its median ms (wall and CPU) per step, and the row's over it. */
  floor: { msPerStep: number; cpuMsPerStep: number };
  ratioToFloor: number;
  cpuRatioToFloor: number;
}[] = [];
try {
  // Warm-up: JIT, SDK and module initialization (the floor's code paths too).
  for (let rep = 0; rep < FLOOR_REPS; rep++) await repetition(floor, FLOOR_STEPS_FACTOR * STEPS);
  for (const target of [embeddedMemory, embeddedDisk, dynalite]) {
    for (let rep = 0; rep < WARM_UP_REPS; rep++) await repetition(target);
    const results = [];
    const floors = [];
    for (let rep = 0; rep < REPS; rep++) {
      results.push(await repetition(target));
      for (let floorRep = 0; floorRep < FLOOR_REPS; floorRep++) floors.push(await repetition(floor, FLOOR_STEPS_FACTOR * STEPS));
    }
    const perStep = results.map((result) => result.msPerStep);
    const msPerStep = median(perStep);
    const cpuMsPerStep = median(results.map((result) => result.cpuMsPerStep));
    const floorFigures = { msPerStep: median(floors.map((result) => result.msPerStep)), cpuMsPerStep: median(floors.map((result) => result.cpuMsPerStep)) };
    rows.push({
      ledger: target.name,
      msPerStep,
      cpuMsPerStep,
      msPerCall: msPerStep / CALLS_PER_STEP,
      min: Math.min(...perStep),
      max: Math.max(...perStep),
      logBytesPerStep: results[0]!.bytesPerStep,
      floor: floorFigures,
      ratioToFloor: msPerStep / floorFigures.msPerStep,
      cpuRatioToFloor: cpuMsPerStep / floorFigures.cpuMsPerStep,
    });
  }
} finally {
  await dynalite.stop();
}

if (args.json) {
  console.log(JSON.stringify({ steps: STEPS, reps: REPS, floorReps: FLOOR_REPS, callsPerStep: CALLS_PER_STEP, rows }, null, 2));
} else {
  console.log(`ledger calls per agent step: ${CALLS_PER_STEP} (a model turn and a side-effecting call: 7 calls per 2 steps); ${STEPS} steps × ${REPS} repetitions (median of the mean per repetition)`);
  console.log(`× floor: CPU against the floor (${floor.name}), ${FLOOR_STEPS_FACTOR * STEPS} steps run ${FLOOR_REPS} times after each of the row's repetitions, in this process\n`);
  console.log(['ledger'.padEnd(30), 'ms/step'.padStart(9), 'CPU ms/step'.padStart(12), '× floor'.padStart(8), 'ms/call'.padStart(9), 'min'.padStart(8), 'max'.padStart(8), 'log B/step'.padStart(11)].join(' '));
  for (const row of rows) {
    console.log(
      [
        row.ledger.padEnd(30),
        row.msPerStep.toFixed(3).padStart(9),
        row.cpuMsPerStep.toFixed(3).padStart(12),
        row.cpuRatioToFloor.toFixed(1).padStart(8),
        row.msPerCall.toFixed(4).padStart(9),
        row.min.toFixed(3).padStart(8),
        row.max.toFixed(3).padStart(8),
        (row.logBytesPerStep === undefined ? '' : row.logBytesPerStep.toFixed(0)).padStart(11),
      ].join(' '),
    );
  }
}
