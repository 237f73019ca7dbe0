/**
 * `node --import tsx bench/ledger.ts [--steps 100] [--reps 10] [--json]`: the ledger's share of an
 * agent step, per ledger implementation.
 *
 * One simulated agent step is the ledger calls CallModel and CallTool make for one model turn and
 * one side-effecting tool call (10 calls):
 *   getRun, getGlobalKill, getTurn, listConversation, recordTurn, countStep,   (CallModel)
 *   getCall, claimCall, completeCall, countStep                                 (CallTool)
 * A repetition runs `steps` such steps on a fresh ledger and a fresh run (so listConversation
 * reads a growing partition, as in a real run); the figure is the median over repetitions of the
 * mean ms per step, after one warm-up repetition. Nothing here is a test.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DynamoDbLedger } from '../lambdas/ledger/dynamodb-ledger.js';
import { EmbeddedLedger } from '../lambdas/ledger/embedded-ledger.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import { RunConfig, ZERO_COUNTERS, type RunRecord } from '../lambdas/ledger/records.js';
import { ensureTable, startDynamo } from '../local/dynamo.js';
import { ledgerTableFromTemplate, synthesizeTemplate } from '../local/template.js';
import { median } from './stats.js';
import { ephemeralSealer } from '../lambdas/ledger/seal.js';

// Like bin/savepoint.js: the SDK's Node 20 notice is noise here (read when the client is created).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const { values: args } = parseArgs({
  options: {
    steps: { type: 'string', default: '100' },
    reps: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
  },
});
const STEPS = Number(args.steps);
const REPS = Number(args.reps);
const CALLS_PER_STEP = 10;

interface Target {
  name: string;
  /** A fresh, empty ledger, and how to dispose of it. */
  open(): Promise<{ ledger: Ledger; close(): Promise<void>; bytes?: () => number }>;
}

async function agentStep(ledger: Ledger, runId: string, turn: number, now: Date): Promise<void> {
  // CallModel
  await ledger.getRun(runId);
  await ledger.getGlobalKill();
  await ledger.getTurn(runId, turn);
  await ledger.listConversation(runId);
  const recorded = await ledger.recordTurn({
    kind: 'turn',
    runId,
    turn,
    model: 'savepoint-sim-1',
    content: [
      { type: 'text', text: `Turn ${turn}: the refund for order ${1000 + turn} does not match the ledger; issuing the difference.` },
      { type: 'tool_use', id: `toolu_${turn}_1`, name: 'issue_refund', input: { orderId: `ord_${1000 + turn}`, amountCents: 1250, reason: 'mismatch' } },
    ],
    stopReason: 'tool_use',
    usage: { input_tokens: 1800 + turn * 40, output_tokens: 120 },
    costMicros: 6_000,
    latencyMs: 0,
    recordedAt: now.toISOString(),
  });
  await ledger.countStep(runId, `turn:${turn}`, {
    steps: 1,
    modelTurns: 1,
    inputTokens: recorded.usage.input_tokens,
    outputTokens: recorded.usage.output_tokens,
    costMicros: recorded.costMicros,
  });
  // CallTool
  await ledger.getCall(runId, turn, 1);
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
  );
  if (!claim.claimed) throw new Error(`step ${turn}: claim refused`);
  await ledger.completeCall(runId, turn, 1, { outcome: 'ok', result: `{"refundId":"re_${turn}","status":"succeeded"}`, latencyMs: 0 }, now);
  await ledger.countStep(runId, `call:${turn}:1`, { steps: 1, toolCalls: 1 });
}

/** Runs one repetition: STEPS agent steps on a fresh ledger; returns mean ms per step and log bytes per step. */
async function repetition(target: Target): Promise<{ msPerStep: number; bytesPerStep?: number }> {
  const { ledger, close, bytes } = await target.open();
  try {
    const now = new Date('2026-11-29T02:00:00Z');
    const run: RunRecord = {
      kind: 'run',
      runId: 'bench',
      agent: 'refund-reconciler',
      input: { date: '2026-11-28' },
      prompt: 'Reconcile',
      model: 'savepoint-sim-1',
      config: RunConfig.parse({}),
      fingerprint: 'f',
      priceTableVersion: 'v',
      status: 'running',
      executionArn: 'arn:1',
      executions: ['arn:1'],
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      budgetExtensions: {},
      ...ZERO_COUNTERS,
    };
    await ledger.createRun(run);
    const before = bytes?.();
    const started = performance.now();
    for (let turn = 1; turn <= STEPS; turn++) await agentStep(ledger, run.runId, turn, now);
    const msPerStep = (performance.now() - started) / STEPS;
    return { msPerStep, bytesPerStep: before === undefined ? undefined : (bytes!() - before) / STEPS };
  } finally {
    await close();
  }
}

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
  const template = await synthesizeTemplate();
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
const rows: { ledger: string; msPerStep: number; msPerCall: number; min: number; max: number; logBytesPerStep?: number }[] = [];
try {
  for (const target of [embeddedMemory, embeddedDisk, dynalite]) {
    await repetition(target); // warm-up: JIT, SDK and module initialization
    const results = [];
    for (let rep = 0; rep < REPS; rep++) results.push(await repetition(target));
    const perStep = results.map((result) => result.msPerStep);
    const msPerStep = median(perStep);
    rows.push({
      ledger: target.name,
      msPerStep,
      msPerCall: msPerStep / CALLS_PER_STEP,
      min: Math.min(...perStep),
      max: Math.max(...perStep),
      logBytesPerStep: results[0]!.bytesPerStep,
    });
  }
} finally {
  await dynalite.stop();
}

if (args.json) {
  console.log(JSON.stringify({ steps: STEPS, reps: REPS, callsPerStep: CALLS_PER_STEP, rows }, null, 2));
} else {
  console.log(`ledger calls per agent step: ${CALLS_PER_STEP}; ${STEPS} steps × ${REPS} repetitions (median of the mean per repetition)\n`);
  console.log(['ledger'.padEnd(30), 'ms/step'.padStart(9), 'ms/call'.padStart(9), 'min'.padStart(8), 'max'.padStart(8), 'log B/step'.padStart(11)].join(' '));
  for (const row of rows) {
    console.log(
      [
        row.ledger.padEnd(30),
        row.msPerStep.toFixed(3).padStart(9),
        row.msPerCall.toFixed(4).padStart(9),
        row.min.toFixed(3).padStart(8),
        row.max.toFixed(3).padStart(8),
        (row.logBytesPerStep === undefined ? '' : row.logBytesPerStep.toFixed(0)).padStart(11),
      ].join(' '),
    );
  }
}
