import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { ListStateMachineVersionsCommand } from '@aws-sdk/client-sfn';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { sfnLookup, sfnStarter } from '../../lambdas/adapters/sfn.js';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';
import { reserveInFleet } from '../../lambdas/guards/fleet.js';
import { agentCounterPk } from '../../lambdas/records/fleet.js';
import { createSweep, type SweepResult } from '../../lambdas/steps/sweep.js';
import type { LedgerKind } from '../../local/runtime/local-stack.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { ledgerTableFromTemplate } from '../../local/template/synthesize.js';
import { waitFor } from '../support/agent-harness.js';
import { flakyModel as outage } from '../support/flaky-model.js';
import { expiringApprovals, manualClock } from '../support/manual-clock.js';
import { runRecord } from '../support/records.js';
import { duplicatePayments, sampleDay, startHarness, type Harness } from '../support/refund-harness.js';
import { countingWrites } from '../support/counting-writes.js';

/**
 * The stack's scheduled functions are the targets of EventBridge rate rules (infra/control-plane.ts:
 * the approval expiry every minute, the sweeper every 15, the version pruner every 6 hours), and
 * EventBridge delivers a rule's event at least once, and Lambda may hand an asynchronously invoked
 * function one event twice, one copy after the other or both at once (local/aws/event-delivery.ts).
 * A scheduled event carries nothing the handlers read: a copy is one more run of the handler,
 * maybe overlapping the first. Here each handler with work to do is invoked twice, one after the
 * other and at once, against the real ledgers and the local engine, and held to the end one
 * invocation comes to: an approval expired and delivered once, a stuck run recovered by one
 * execution or given up once with its fleet lease back once, each old version deleted, and no
 * copy failing (a function error, or a run named in the sweeper's RunsNeedingAttention, is an
 * alarm on AWS for what is only a duplicate).
 */

type Copies = 'one after the other' | 'at once';
const COPIES: Copies[] = ['one after the other', 'at once'];

/** Invokes `handler` twice, as two deliveries of one scheduled event would. */
async function twice<T>(copies: Copies, handler: () => Promise<T>): Promise<T[]> {
  if (copies === 'at once') return Promise.all([handler(), handler()]);
  return [await handler(), await handler()];
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
const tracked = (h: Harness) => (cleanups.push(() => h.stack.close()), h);

// ── the approval expiry (lambdas/steps/expire-approvals.ts), every minute ─────────────────────

describe.each<LedgerKind>(['embedded', 'dynalite'])('the approval expiry, its scheduled event delivered twice, %s ledger', (kind) => {
  it.each(COPIES)('%s: the approval past its deadline expired once, its run woken once, the refund escalated once, unpaid', { timeout: 60_000 }, async (copies) => {
    // The deadline passes on the clock the steps read while its timer has not fired: both copies
    // of the sweep are the test's, and the later approvals expire on their own timers.
    const timers = manualClock(Date.parse('2026-11-29T02:00:00Z'));
    let late = 0;
    const clock = { now: () => new Date(timers.now().getTime() + late), after: timers.after };
    const writes = countingWrites();
    let h: Harness | undefined;
    h = tracked(await startHarness({ ...expiringApprovals({ clock: timers, expires: () => h!.approvals.length > 1 }), clock, ledger: kind, decorateLedger: writes.decorate }));
    const { stack } = h;
    const runId = `dup-expiry-${kind}-${copies === 'at once' ? 'at-once' : 'in-turn'}`;
    const finished = h.run({ runId, input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
    const approval = await waitFor(() => h!.approvals[0]);
    late = Date.parse(approval.decideBy) - timers.now().getTime();

    const answers = await twice(copies, stack.expireApprovals);
    // One copy expired it; the other found it decided (or delivered) and did nothing more.
    expect(answers.flatMap((answer) => answer.expired)).toEqual([approval.approvalId]);
    expect(answers.flatMap((answer) => answer.redelivered).filter((id) => id === approval.approvalId).length).toBeLessThanOrEqual(1);
    expect(writes.of('decideApproval', approval.approvalId)).toBe(1);

    const ended = await finished;
    expect(JSON.parse(ended.output!)).toMatchObject({ status: 'succeeded' });
    // The waiting task heard the expiry once: one Approval.Expired failure for this approval.
    const heard = stack.engine.getExecutionHistory(ended.executionArn).filter((event) => event.type === 'TaskFailed' && JSON.stringify(event).includes(`not decided by ${approval.decideBy}`));
    expect(heard).toHaveLength(1);
    const record = await stack.ledger.getApproval(approval.runId, approval.turn, approval.call);
    expect(record).toMatchObject({ status: 'expired', decidedVia: 'timeout' });
    expect(record!.undelivered).toBeUndefined();
    const request = approval.details!['refundRequest'];
    expect(stack.world.payments.refunds().filter((refund) => refund.refundRequestId === request)).toEqual([]);
    expect(stack.world.payments.reviews().filter((review) => review.refundRequestId === request)).toHaveLength(1);
    expect(duplicatePayments(stack)).toEqual([]);
  });
});

// ── the sweeper (lambdas/steps/sweep.ts), every 15 minutes: a stuck run recovered ──────────────

const unattendedDay = makeSampleDay(7, { plain: 2, already_refunded: 0, mismatch: 1, large: 0 });
const noBreaker = { failures: 1_000, windowMs: 1_000, openMs: 1, probeLeaseMs: 1 };

/** What the sweeper's copies came to for one run: no failure among them, the recoveries they answered. */
function swept(results: SweepResult[], runId: string) {
  return {
    failed: results.flatMap((result) => result.failed),
    gaveUp: results.flatMap((result) => result.gaveUp).filter((entry) => entry.runId === runId).length,
    recoveredBy: [...new Set(results.flatMap((result) => result.recovered).filter((entry) => entry.runId === runId).map((entry) => entry.executionArn))],
  };
}

describe.each<LedgerKind>(['embedded', 'dynalite'])('the sweeper, its scheduled event delivered twice, a run whose execution failed unnoticed, %s ledger', (kind) => {
  it.each(COPIES)('%s: recovered once, by one execution, which finishes the run; neither copy fails', { timeout: 60_000 }, async (copies) => {
    // The 4th to the 10th model request fail: seven in a row exhaust CallModel's six retries, and
    // the execution fails. Its RecordFailure is throttled through its retries (the run stays
    // running), and the status-change recovery is off: what the sweeper is there for.
    let simulated = '';
    const modelUrl = await outage(() => simulated, (request) => request >= 4 && request <= 10, (close) => cleanups.push(close));
    let throttled = true;
    const writes = countingWrites({ failRunEnds: () => throttled });
    const h = tracked(await startHarness({ modelUrl, day: unattendedDay, breaker: noBreaker, recovery: false, ledger: kind, decorateLedger: writes.decorate }));
    simulated = h.stack.endpoints.model;
    const runId = `dup-sweep-${kind}-${copies === 'at once' ? 'at-once' : 'in-turn'}`;
    const first = await h.run({ runId, input: { date: unattendedDay.date } });
    expect(first.status).toBe('FAILED');
    expect(await h.stack.ledger.getRun(runId)).toMatchObject({ status: 'running', executionArn: first.executionArn });
    throttled = false;

    // The stack's sweeper as its Lambda builds it (control-plane-handlers.ts), on the twin's Step
    // Functions API; its clock an hour after the failure, past the grace left to the event-driven recovery.
    const at = new Date(Date.now() + 60 * 60_000);
    const sweep = createSweep({ ledger: h.stack.ledger, executions: sfnLookup(h.stack.sfn), starter: sfnStarter(h.stack.sfn, h.stack.stateMachineArn), clock: { now: () => at } });
    const results = await twice(copies, sweep);

    const recovery = await waitFor(() => h.stack.engine.listExecutions().executions.find((execution) => execution.name === `${runId}-recovery-1`));
    expect(swept(results, runId)).toEqual({ failed: [], gaveUp: 0, recoveredBy: [recovery.executionArn] });
    expect(await h.stack.engine.waitForExecution(recovery.executionArn)).toMatchObject({ status: 'SUCCEEDED' });
    // One recovery: recorded once, one execution started for it; the run as one recovery leaves it.
    expect(writes.of('recordRecovery', runId)).toBe(1);
    expect(h.stack.engine.listExecutions().executions.map((execution) => execution.name).sort()).toEqual([`${runId}-recovery-1`, first.name].sort());
    expect(await h.stack.ledger.getRun(runId)).toMatchObject({ status: 'succeeded', executions: [first.executionArn, recovery.executionArn], recovery: { attempts: 1, withoutProgress: 1 } });
    expect(duplicatePayments(h.stack)).toEqual([]);
  });
});

// ── the sweeper: a stuck run given up, its fleet lease given back ──────────────────────────────

let dynamo: LocalDynamo;
let table: (name: string) => CreateTableCommandInput;
let tables = 0;
beforeAll(async () => {
  dynamo = await startDynamo();
  const template = await cachedTemplate('agent');
  table = (name) => ledgerTableFromTemplate(template, name);
});
afterAll(async () => dynamo.close());

/** A fresh ledger of `kind`: the embedded one, or the DynamoDB one on a table of its own on dynalite. */
async function freshLedger(kind: LedgerKind): Promise<Ledger> {
  if (kind === 'embedded') return EmbeddedLedger.open();
  const name = `scheduled-${++tables}`;
  await ensureTable(dynamo.client, table(name));
  return new DynamoDbLedger(dynamo.client, name, ephemeralSealer());
}

describe.each<LedgerKind>(['embedded', 'dynalite'])('the sweeper, its scheduled event delivered twice, a lost run past its bound of recoveries, %s ledger', (kind) => {
  it.each(COPIES)('%s: given up once, its fleet lease given back once, nothing started', async (copies) => {
    const now = new Date('2026-12-07T10:00:00.000Z');
    const ledger = await freshLedger(kind);
    // Its execution is gone (its history expired), after three recoveries that made no progress.
    const executionArn = 'arn:aws:states:us-east-1:000000000000:execution:Savepoint-refunds:stuck-recovery-3';
    const recovery = { attempts: 3, withoutProgress: 3, atSteps: 2, key: 'arn:earlier@2026-12-07T08:00:00.000Z', reason: 'execution stuck-recovery-2 FAILED', executionName: 'stuck-recovery-3', at: '2026-12-07T08:00:01.000Z' };
    await ledger.createRun(runRecord({ runId: 'stuck', agent: 'refunds', executionArn, steps: 2, recovery, updatedAt: '2026-12-07T08:00:01.000Z' }));
    await reserveInFleet(ledger, { run: (await ledger.getRun('stuck'))!, turn: 3, reservation: { tokens: 1_000, micros: 600_000 }, now, budget: { agent: { dollarsPerDay: 5 } } });
    const writes = countingWrites();
    const started: string[] = [];
    const sweep = createSweep({
      ledger: writes.decorate(ledger),
      executions: { describe: async () => undefined },
      starter: { start: async (name) => (started.push(name), { executionArn: `arn:${name}` }) },
      clock: { now: () => now },
    });

    const results = await twice(copies, sweep);
    expect(swept(results, 'stuck')).toEqual({ failed: [], gaveUp: 1, recoveredBy: [] });
    const run = (await ledger.getRun('stuck'))!;
    expect({ status: run.status, error: run.error?.error, returned: run.fleetLease?.returned }).toEqual({ status: 'failed', error: 'Agent.Unrecoverable', returned: true });
    expect({ finishRun: writes.of('finishRun', 'stuck'), started }).toEqual({ finishRun: 1, started: [] });
    // Its lease given back once (it held nothing unused: the counter tells): the day's counter holds
    // no run (given back twice, -1), and what the run spent or holds, no more.
    expect(await ledger.getFleetDay(agentCounterPk('refunds', run.fleetLease!.day))).toMatchObject({ runs: 0, leased: run.costMicros + (run.reservedMicros ?? 0) });
  });
});

// ── the version pruner (lambdas/steps/prune-versions.ts, prune-function-versions.ts), every 6 hours ─

describe('the version pruner, its scheduled event delivered twice', () => {
  it.each(COPIES)('%s: the old versions deleted, the newest kept, the Lambda versions they pinned deleted; neither copy fails', { timeout: 60_000 }, async (copies) => {
    const h = tracked(await startHarness({ recovery: false, codeVersion: 'v1' }));
    for (let n = 2; n <= 4; n++) h.stack.deploy(refundReconciler, { codeVersion: `v${n}` });
    const versionArn = (n: number) => `${h.stack.stateMachineArn}:${n}`;

    const passes = await twice(copies, () => h.stack.pruneVersions({ keep: 1, graceMs: 0 }));
    // Every version but the newest is deleted once between the copies: one after the other, the
    // second finds nothing to delete; at once, both may delete one (a version already gone is no error).
    const deleted = passes.flatMap((pass) => pass.deleted);
    expect([...new Set(deleted)].sort()).toEqual([versionArn(1), versionArn(2), versionArn(3)]);
    if (copies === 'one after the other') expect(passes[1]!.deleted).toEqual([]);
    const listed = (await h.stack.sfn.send(new ListStateMachineVersionsCommand({ stateMachineArn: h.stack.stateMachineArn }))).stateMachineVersions!.map((v) => v.stateMachineVersionArn);
    expect(listed).toEqual([versionArn(4)]);
    // The Lambda versions only the deleted ones pinned are deleted, the newest deploy's kept.
    const functions = [...new Set(passes.flatMap((pass) => pass.functionVersions!.kept.map((kept) => kept.arn.replace(/:\d+$/, ''))))];
    expect(functions.length).toBeGreaterThanOrEqual(7);
    for (const fn of functions) expect(h.stack.iam!.lambda.list(fn)).toEqual(['$LATEST', '4']);
    expect(passes[1]!.functionVersions!.deleted.length + passes[0]!.functionVersions!.deleted.length).toBeGreaterThanOrEqual(functions.length * 3);
    expect(h.stack.engine.iamDecisions()).toMatchObject({ denied: 0 });
  });
});
