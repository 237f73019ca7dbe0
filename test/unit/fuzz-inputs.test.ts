import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { runInput } from '../../cli/run.js';
import { defineAgent, defineTool } from '../../lambdas/define.js';
import { CircuitBreaker } from '../../lambdas/guards/breaker.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { ErrorNames, RETRYABLE_ERRORS } from '../../lambdas/shared/errors.js';
import { createCallTool, type CallToolResult } from '../../lambdas/steps/call-tool.js';
import { createStartRun as createStep } from '../../lambdas/steps/start-run.js';
import { runRecord } from '../support/records.js';

/**
 * Fuzz tests of three boundaries where outside input enters a run: the run input (`savepoint run
 * --input`, StartExecution's input), the EventBridge scheduled event, and the arguments a model
 * gives a tool. Whatever comes in, the step either accepts it or fails once — with the
 * non-retryable `Agent.InvalidInput`, a message that names the field, and nothing written to the
 * ledger (or sent to a tool). No input makes it throw anything else (a TypeError is a crash).
 */

const now = new Date('2026-11-29T02:00:00Z');
const clock = { now: () => now };
/** What the state machine tells StartRun of its definition: the limits a run's budgets are checked against (10 days; an approval waits a day). */
const definition = { hash: 'a1b2c3d4e5f60718', executionTimeoutSeconds: 864_000, approvalWaitSeconds: 86_400 };
const executions = { isRunning: async () => false, stop: async () => undefined };
const createStartRun = (deps: Parameters<typeof createStep>[0]) => {
  const step = createStep(deps);
  return (input: { event: unknown; executionArn: string }) => step({ ...input, definition });
};

/** Everything the ledger holds, as one comparable value. */
async function snapshot(ledger: Ledger) {
  const runs = await ledger.listRuns(1_000);
  const conversations = await Promise.all(runs.map((run) => ledger.listConversation(run.runId)));
  return JSON.stringify({ runs, conversations, pending: await ledger.listPendingApprovals(), kill: await ledger.getGlobalKill() });
}

/** Runs `step`; a rejection must be Agent.InvalidInput naming one of `fields`, and must leave the ledger as it was. */
async function acceptedOrRefusedCleanly(ledger: Ledger, step: () => Promise<unknown>, fields: RegExp): Promise<'accepted' | 'refused'> {
  const before = await snapshot(ledger);
  try {
    await step();
    return 'accepted';
  } catch (error) {
    expect(error, String(error)).toBeInstanceOf(Error);
    const { name, message } = error as Error;
    expect(name, message).toBe(ErrorNames.InvalidInput);
    expect(RETRYABLE_ERRORS).not.toContain(name);
    expect(message).toMatch(fields);
    expect(await snapshot(ledger)).toBe(before);
    return 'refused';
  }
}

/** A real calendar day, as the refund agent's input names one. */
const day = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10));

/** A JSON value, or something near the refund agent's input (a date, a threshold), or strays. */
const nearInput = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record(
    {
      date: fc.oneof(day, fc.string({ maxLength: 12 }), fc.integer()),
      approvalThresholdCents: fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 5 })),
      extra: fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  ),
);

describe('fuzz: the run input', () => {
  it('through `--input` and StartRun: accepted, or one Agent.InvalidInput naming the field, with nothing written', async () => {
    const ledger = EmbeddedLedger.open();
    const startRun = createStartRun({ agent: refundReconciler, ledger, executions, clock, codeVersion: 'fuzz' });
    let counts = { accepted: 0, refused: 0 };
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          // Near a valid request (most are accepted), and anything in its shape (most are refused).
          fc.record({ runId: fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/), input: fc.record({ date: day }, { requiredKeys: [] }) }),
          fc.record(
          {
            runId: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/), fc.string({ maxLength: 90 })),
            input: nearInput,
            config: fc.oneof(fc.jsonValue({ maxDepth: 1 }), fc.record({ maxSteps: fc.oneof(fc.integer(), fc.string()), maxDollars: fc.double() }, { requiredKeys: [] })),
            model: fc.oneof(fc.constant('sim:savepoint-sim-1'), fc.string({ maxLength: 20 })),
            force: fc.oneof(fc.boolean(), fc.string({ maxLength: 3 })),
            extra: fc.jsonValue({ maxDepth: 1 }),
          },
          { requiredKeys: ['input'] },
          ),
        ),
        async (request: { runId?: unknown }) => {
          // As `savepoint run --input '<json>'` reads it: JSON text first.
          const text = JSON.stringify({ ...request, ...(typeof request.runId === 'string' && { runId: `${request.runId}-${++n}` }) });
          const outcome = await acceptedOrRefusedCleanly(
            ledger,
            () => startRun({ event: runInput(text, undefined, refundReconciler.name), executionArn: `arn:exec:${n}` }),
            /^(invalid )?(run input|input of agent refund-reconciler|runId|model|config|run config|run id of agent)\b/,
          );
          counts = { ...counts, [outcome]: counts[outcome] + 1 };
        },
      ),
      { numRuns: 300 },
    );
    // Both sides were exercised: valid inputs start runs, invalid ones are refused.
    expect(counts.accepted).toBeGreaterThan(0);
    expect(counts.refused).toBeGreaterThan(0);
  });

  it('`--input` JSON of any kind is the input (an object, a list, a string, a number, a boolean, null); other text names a file', () => {
    for (const value of [{ inbox: 'team' }, ['a'], 'hello', 'with "quotes"', 42, -1.5, true, false, null]) expect(runInput(JSON.stringify(value), undefined, 'agent')).toEqual(value);
    expect(() => runInput('no-such-input.json', undefined, 'agent')).toThrow(/^input: cannot read no-such-input\.json: ENOENT/);
  });

  it('`--input` text that is not JSON is one Agent.InvalidInput naming the input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }).map((tail) => `{${tail}`), (text) => {
        let parsed: unknown;
        try {
          parsed = runInput(text, undefined, 'agent');
        } catch (error) {
          expect((error as Error).name).toBe(ErrorNames.InvalidInput);
          expect((error as Error).message).toMatch(/^input: not valid JSON/);
          return;
        }
        expect(JSON.parse(text)).toEqual(parsed);
      }),
      { numRuns: 300 },
    );
  });
});

describe('fuzz: the scheduled event', () => {
  /** A time string from parts that may not make a real instant (month 13, day 30 of February, hour 25). */
  const time = fc.oneof(
    fc
      .record({ year: fc.integer({ min: 1999, max: 2101 }), month: fc.integer({ min: 0, max: 13 }), day: fc.integer({ min: 0, max: 32 }), hour: fc.integer({ min: 0, max: 25 }) })
      .map(({ year, month, day, hour }) => `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00Z`),
    fc.string({ maxLength: 25 }),
  );
  const isRealInstant = (text: string) => {
    const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):00:00Z$/.exec(text);
    if (!match) return false;
    const [year, month, day, hour] = match.slice(1).map(Number) as [number, number, number, number];
    const date = new Date(Date.UTC(year, month - 1, day, hour));
    return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day && date.getUTCHours() === hour;
  };

  it('starts the run of a real instant, and refuses anything else once, naming the event, with nothing written', async () => {
    const ledger = EmbeddedLedger.open();
    const startRun = createStartRun({ agent: refundReconciler, ledger, executions, clock, codeVersion: 'fuzz' });
    let n = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          {
            'detail-type': fc.oneof(fc.constant('Scheduled Event'), fc.string({ maxLength: 16 }), fc.integer()),
            source: fc.oneof(fc.constant('aws.events'), fc.string({ maxLength: 12 })),
            time,
            detail: fc.jsonValue({ maxDepth: 1 }),
          },
          { requiredKeys: ['detail-type'] },
        ),
        async (event) => {
          const outcome = await acceptedOrRefusedCleanly(ledger, () => startRun({ event, executionArn: `arn:exec:${++n}` }), /^(invalid )?(scheduled event|input of agent refund-reconciler for the scheduled event)\b/);
          const wellFormed = event['detail-type'] === 'Scheduled Event' && event.source === 'aws.events' && typeof event.time === 'string';
          if (wellFormed && isRealInstant(event.time!)) expect(outcome).toBe('accepted');
          if (outcome === 'accepted') expect(wellFormed && isRealInstant(event.time!), JSON.stringify(event)).toBe(true);
          accepted += outcome === 'accepted' ? 1 : 0;
        },
      ),
      { numRuns: 300 },
    );
    expect(accepted).toBeGreaterThan(0);
  });
});

describe("fuzz: the model's tool arguments", () => {
  const sent: unknown[] = [];
  const pay = defineTool({
    name: 'pay',
    description: 'Pays.',
    input: z.object({ id: z.string().regex(/^[a-z0-9_]{1,20}$/), cents: z.number().int().positive().max(1_000_000), note: z.string().max(40).optional() }).strict(),
    effect: 'write',
    execute: async (args) => {
      sent.push(args);
      return { ok: true };
    },
  });
  const agent = defineAgent({ name: 'fuzz', model: 'sim:savepoint-sim-1', system: 'x', input: z.object({}), prompt: () => 'x', tools: [pay] });
  const run = (runId: string): RunRecord =>
    runRecord({ runId, agent: 'fuzz', prompt: 'x', model: 'sim:savepoint-sim-1', priceTableVersion: 'fuzz', createdAt: now.toISOString(), updatedAt: now.toISOString(), budgetExtensions: {} });

  it('runs valid arguments, and answers anything else to the model before a claim or a send: an error result naming the tool or the field', async () => {
    const valid = pay.input;
    let n = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.constant('pay'), fc.string({ maxLength: 8 })),
        fc.oneof(
          fc.record({ id: fc.stringMatching(/^[a-z0-9_]{1,20}$/), cents: fc.integer({ min: 1, max: 1_000_000 }), note: fc.string({ maxLength: 40 }) }, { requiredKeys: ['id', 'cents'] }),
          fc.anything({ maxDepth: 2 }),
          fc.record(
            { id: fc.oneof(fc.stringMatching(/^[a-z0-9_]{1,20}$/), fc.string({ maxLength: 25 }), fc.integer()), cents: fc.oneof(fc.integer(), fc.double(), fc.string({ maxLength: 4 })), note: fc.string({ maxLength: 50 }), constructor: fc.string({ maxLength: 3 }) },
            { requiredKeys: [] },
          ),
        ),
        async (name, input) => {
          const runId = `run-${++n}`;
          // A ledger per case: the snapshot compared stays one run.
          const ledger = EmbeddedLedger.open();
          const callTool = createCallTool({ agent, agentDeps: () => undefined, ledger, clock, breaker: new CircuitBreaker(ledger, clock), leaseMs: 60_000, fingerprint: () => 'f' });
          await ledger.createRun(run(runId));
          const content = [{ type: 'tool_use' as const, id: 'tu1', name, input: input as Record<string, unknown> }];
          await ledger.recordTurn({ kind: 'turn', runId, turn: 1, model: 'sim:savepoint-sim-1', content, stopReason: 'tool_use', usage: { input_tokens: 1, output_tokens: 1 }, costMicros: 0, latencyMs: 0, recordedAt: now.toISOString() });
          const sentBefore = sent.length;
          const result = await callTool({ runId, turn: 1, call: 1 });
          const ok = name === 'pay' && valid.safeParse(input).success;
          expect((result as CallToolResult).outcome, JSON.stringify({ name, input })).toBe(ok ? 'ok' : 'error');
          expect(sent.length - sentBefore).toBe(ok ? 1 : 0);
          const record = (await ledger.getCall(runId, 1, 1))!;
          // Never claimed: recorded once, completed, with the answer the model gets.
          expect(record).toMatchObject({ status: 'completed', attempts: 1 });
          if (!ok) {
            const answer = JSON.parse(record.result!) as { error: string; message: string };
            expect(answer.error).toBe(name === 'pay' ? 'invalid_arguments' : 'unknown_tool');
            expect(answer.message).toMatch(name === 'pay' ? /^invalid arguments of pay: \S+: / : /^there is no tool .*; the tools are: pay$/);
          }
          accepted += ok ? 1 : 0;
        },
      ),
      { numRuns: 300 },
    );
    expect(accepted).toBeGreaterThan(0);
  });
});
