import { afterEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { loadReport } from '../../lambdas/runs/report.js';
import type { LedgerKind } from '../../local/runtime/local-stack.js';
import { startHarness, type Harness } from '../support/refund-harness.js';
import { waitFor } from '../support/agent-harness.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { createRecoverRun } from '../../lambdas/steps/recover-run.js';
import { at, call, run, turn } from '../contract/fixtures.js';

/**
 * A turn's tool calls count no step of their own (lambdas/ledger/open-turn.ts): nothing but the
 * model turns writes the run item while a turn's calls run. The next model turn's reservation
 * counts them, or the run's end; each call is budgeted by its position in its turn. End to end,
 * on both ledgers, through the real steps and state machine.
 */
// Several calls a turn and no approval (nothing a person decides writes to the run meanwhile).
const day = makeSampleDay(5, { plain: 5, already_refunded: 1, mismatch: 1, large: 0 });

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

const counters = (run: RunRecord | undefined) => run && { steps: run.steps, modelTurns: run.modelTurns, toolCalls: run.toolCalls, callsCounted: run.callsCounted };

describe.each<LedgerKind>(['embedded', 'dynalite'])("an open turn's calls, %s ledger", (ledger) => {
  it('leave the run item as it was while they run; the next model turn counts them, and the run ends with every step counted', async () => {
    let inner: Ledger | undefined;
    const seenByCalls: { call: string; turn: number; before: ReturnType<typeof counters>; after: ReturnType<typeof counters> }[] = [];
    // Around each write of a call: the run item read (behind the steps' back) before and after it.
    const watched = (ledger: Ledger): Ledger => {
      inner = ledger;
      const around =
        <K extends 'recordCall' | 'claimCall' | 'completeCall'>(method: K, runOf: (...args: Parameters<Ledger[K]>) => { runId: string; turn: number; call: number }) =>
        async (...args: Parameters<Ledger[K]>) => {
          const { runId, turn, call } = runOf(...args);
          const before = counters(await ledger.getRun(runId));
          const result = await (ledger[method] as (...a: Parameters<Ledger[K]>) => Promise<unknown>)(...args);
          seenByCalls.push({ call: `${method} ${turn}/${call}`, turn, before, after: counters(await ledger.getRun(runId)) });
          return result;
        };
      const overrides: Partial<Ledger> = {
        recordCall: around('recordCall', (call) => call) as Ledger['recordCall'],
        claimCall: around('claimCall', (call) => call) as Ledger['claimCall'],
        completeCall: around('completeCall', (completion) => completion) as Ledger['completeCall'],
      };
      return new Proxy(ledger, { get: (target, property, receiver) => (Object.hasOwn(overrides, property) ? overrides[property as keyof Ledger] : Reflect.get(target, property, receiver)) });
    };
    harness = await startHarness({ day, ledger, decorateLedger: watched });
    const finished = await harness.run({ runId: 'open-turn', input: { date: day.date } });
    expect(finished.status).toBe('SUCCEEDED');

    // Every write of a call, parallel siblings included, left the run item's counters as they were.
    expect(seenByCalls.length).toBeGreaterThanOrEqual(7);
    for (const seen of seenByCalls) expect(seen.after, seen.call).toEqual(seen.before);
    // The run ended with every step counted: its turns and its completed calls, once each.
    const { turns, calls } = await inner!.listConversation('open-turn');
    const completed = calls.filter((call) => call.status === 'completed').length;
    // While a turn's calls ran, the run counted the turn and the calls of the turns before it, not its own: they lagged by them.
    for (const seen of seenByCalls) expect(seen.before, seen.call).toMatchObject({ modelTurns: seen.turn, toolCalls: calls.filter((call) => call.turn < seen.turn).length });
    const run = (await inner!.getRun('open-turn'))!;
    expect(run).toMatchObject({ status: 'succeeded', modelTurns: turns.length, toolCalls: completed, steps: turns.length + completed, reservedTokens: 0, reservedMicros: 0, callsCounted: { turn: turns.length + 1, calls: [] } });
    const report = (await loadReport(inner!, 'open-turn', new Date(), refundReconciler))!;
    expect(report).toMatchObject({ steps: turns.length + completed, toolCalls: completed });
  });

  it("ends a run given up mid-turn with the calls it made counted: RecoverRun reads the open turn's calls, as its role may", async () => {
    // The ledger refuses every record of a turn's second call (DynamoDB throttling it, retried by the
    // state machine): the execution fails with the turn's first call made, a turn left open. RecoverRun
    // (as its own role, through the twin's IAM) reads that turn's calls, and gives the run up once a
    // recovery makes no progress; the run's end counts the call that was made.
    let inner: Ledger | undefined;
    const throttled = (ledger: Ledger): Ledger => {
      inner = ledger;
      const recordCall: Ledger['recordCall'] = (record, ...rest) => {
        if (record.call === 2) return Promise.reject(Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ThrottlingException', $fault: 'server' }));
        return ledger.recordCall(record, ...rest);
      };
      return new Proxy(ledger, { get: (target, property, receiver) => (property === 'recordCall' ? recordCall : Reflect.get(target, property, receiver)) });
    };
    harness = await startHarness({ day, ledger, decorateLedger: throttled, recovery: { maxWithoutProgress: 1 } });
    const first = await harness.run({ runId: 'given-up', input: { date: day.date } });
    expect(first.status).toBe('FAILED');
    const given = await waitFor(async () => {
      const record = await inner!.getRun('given-up');
      return record?.error?.error === 'Agent.Unrecoverable' ? record : undefined;
    });
    const { turns, calls } = await inner!.listConversation('given-up');
    const completed = calls.filter((call) => call.status === 'completed');
    // A turn was left open with a call made in it, and the run's end counted it.
    expect(completed.filter((call) => call.turn === turns.length).length).toBeGreaterThan(0);
    expect(given).toMatchObject({ status: 'failed', steps: turns.length + completed.length, toolCalls: completed.length, modelTurns: turns.length });
    expect(given.stopReason).toMatch(/^not recovered: 1 recovery in a row made no progress \(stuck at step \d+\); last: execution given-up-recovery-1 FAILED: Agent.Transient/);
  });

  it('stops on the steps budget by each call’s position in its turn, and ends with the calls it made counted', async () => {
    harness = await startHarness({ day, ledger });
    // Stopped inside a turn of several calls: the calls before the limit run, the rest are skipped.
    const finished = await harness.run({ runId: 'by-position', input: { date: day.date }, config: { maxSteps: 8 } });
    expect(finished.status).toBe('SUCCEEDED');
    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'stopped', reason: 'budget exceeded: steps 8 / 8' });
    const { turns, calls } = await harness.stack.ledger.listConversation('by-position');
    const completed = calls.filter((call) => call.status === 'completed');
    // The run's figures are its records': the open turn's calls (it stopped with some made) counted by the run's end.
    expect(turns.length + completed.length).toBe(8);
    expect(completed.filter((call) => call.turn === turns.length).length).toBeGreaterThan(0);
    expect(calls.length).toBeLessThan(turns.flatMap((turn) => turn.content.filter((block) => block.type === 'tool_use')).length);
    expect(await harness.stack.ledger.getRun('by-position')).toMatchObject({ status: 'stopped', steps: 8, modelTurns: turns.length, toolCalls: completed.length });
  });
});

describe("a lost execution's recovery", () => {
  it("counts the calls the open turn made as progress, though the run item does not count them yet", async () => {
    const ledger = EmbeddedLedger.open();
    const executionArn = 'arn:aws:states:us-east-1:123456789012:execution:agent:r1-recovery-1';
    // Recovered once at step 3; then the turn's two calls completed, and the engine went away before the next model turn.
    const recovery = { attempts: 1, withoutProgress: 1, atSteps: 3, key: 'arn:e0@2026-11-29T02:00:00.000Z', reason: 'execution e0 LOST', executionName: 'r1-recovery-1', at: '2026-11-29T02:00:00.000Z' };
    await ledger.createRun(run('r1', { executionArn, modelTurns: 2, steps: 3, toolCalls: 1, callsCounted: { turn: 1, calls: [1] }, recovery }));
    await ledger.recordTurn({ ...turn(2), content: [1, 2].map((n) => ({ type: 'tool_use' as const, id: `toolu_2_${n}`, name: 'list', input: {} })) });
    for (const n of [1, 2]) await ledger.recordCall({ ...call({ turn: 2, call: n, toolCallId: `toolu_2_${n}`, effect: 'read' }), status: 'completed', outcome: 'ok', result: '[]' }, at(0));
    const started: string[] = [];
    const recover = createRecoverRun({ ledger, starter: { start: async (name) => (started.push(name), { executionArn: `${executionArn}-${name}` }) }, clock: { now: () => at(60_000) }, policy: { maxWithoutProgress: 1 } });
    const result = await recover({ runId: 'r1', executionArn, status: 'LOST', endedAt: '2026-11-29T02:30:00.000Z', resumeOn: 'arn:aws:states:us-east-1:123456789012:stateMachine:agent:live' });
    // Steps 3 and the turn's 2 calls: progress, so the run is recovered, not given up.
    expect(result).toMatchObject({ action: 'recovered', attempt: 2 });
    expect((await ledger.getRun('r1'))!.recovery).toMatchObject({ atSteps: 5, withoutProgress: 1 });
    expect(started).toEqual(['r1-recovery-2']);
  });
});
