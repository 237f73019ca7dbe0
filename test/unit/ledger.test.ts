import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import { ZERO_COUNTERS, RunConfig, type ApprovalRecord, type RunRecord, type ToolCallRecord } from '../../lambdas/ledger/records.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/dynamo.js';
import { ledgerTableFromTemplate, synthesizeTemplate } from '../../local/template.js';

let dynamo: LocalDynamo;
let ledger: DynamoDbLedger;
let table = 0;
const t0 = new Date('2026-11-29T02:00:00Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);

const run = (runId: string): RunRecord => ({
  kind: 'run',
  runId,
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
  createdAt: t0.toISOString(),
  updatedAt: t0.toISOString(),
  ...ZERO_COUNTERS,
});

const call = (overrides: Partial<ToolCallRecord> = {}): ToolCallRecord => ({
  kind: 'tool',
  runId: 'r1',
  turn: 3,
  call: 1,
  toolCallId: 'toolu_003_1',
  name: 'issue_refund',
  args: { amountCents: 100 },
  effect: 'write',
  idempotencyKey: 'r1:3:toolu_003_1',
  status: 'in_flight',
  leaseUntil: at(30).toISOString(),
  attempts: 0,
  ...overrides,
});

beforeAll(async () => {
  dynamo = await startDynamo();
});
afterAll(async () => dynamo.close());
beforeEach(async () => {
  // A fresh table per test, with the keys and indexes of the synthesized template.
  const name = `ledger-${++table}`;
  await ensureTable(dynamo.client, ledgerTableFromTemplate(await synthesizeTemplate(), name));
  ledger = new DynamoDbLedger(dynamo.client, name);
  await ledger.createRun(run('r1'));
});

describe('the run record', () => {
  it('is created once: the run id is the idempotency key', async () => {
    expect(await ledger.createRun({ ...run('r1'), input: { date: '2000-01-01' } })).toBe(false);
    expect(await ledger.getRun('r1')).toMatchObject({ input: { date: '2026-11-28' }, executions: ['arn:1'] });
  });

  it('counts a step once, however often it is retried', async () => {
    expect(await ledger.countStep('r1', 'turn:1', { steps: 1, inputTokens: 10, costMicros: 7 })).toBe(true);
    expect(await ledger.countStep('r1', 'turn:1', { steps: 1, inputTokens: 10, costMicros: 7 })).toBe(false);
    expect(await ledger.countStep('r1', 'call:1:1', { steps: 1, toolCalls: 1 })).toBe(true);
    expect(await ledger.getRun('r1')).toMatchObject({ steps: 2, inputTokens: 10, costMicros: 7, toolCalls: 1 });
  });

  it('counts concurrent retries of the same step once', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, () => ledger.countStep('r1', 'turn:9', { steps: 1 })));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await ledger.getRun('r1'))!.steps).toBe(1);
  });
});

describe('claiming a tool call', () => {
  it('lets exactly one of 50 concurrent attempts claim it', async () => {
    const claims = await Promise.all(Array.from({ length: 50 }, () => ledger.claimCall(call(), at(0))));
    expect(claims.filter((claim) => claim.claimed)).toHaveLength(1);
    expect((await ledger.getCall('r1', 3, 1))!.attempts).toBe(1);
  });

  it('refuses a second claim while the lease is live, and allows a takeover once it expired', async () => {
    await ledger.claimCall(call(), at(0));
    const blocked = await ledger.claimCall(call({ leaseUntil: at(60).toISOString() }), at(10));
    expect(blocked).toMatchObject({ claimed: false, existing: { status: 'in_flight', attempts: 1 } });
    const takeover = await ledger.claimCall(call({ leaseUntil: at(90).toISOString() }), at(31));
    expect(takeover).toMatchObject({ claimed: true, record: { attempts: 2, idempotencyKey: 'r1:3:toolu_003_1' } });
  });

  it('never reclaims a completed call: a retry gets the recorded outcome', async () => {
    await ledger.claimCall(call(), at(0));
    await ledger.completeCall('r1', 3, 1, { outcome: 'ok', result: '{"id":"re_1"}', latencyMs: 5 }, at(1));
    const again = await ledger.claimCall(call(), at(3600));
    expect(again).toMatchObject({ claimed: false, existing: { status: 'completed', result: '{"id":"re_1"}' } });
  });

  it('completes only an in-flight call, once', async () => {
    await ledger.claimCall(call(), at(0));
    await ledger.completeCall('r1', 3, 1, { outcome: 'ok', result: '1', latencyMs: 1 }, at(1));
    await expect(ledger.completeCall('r1', 3, 1, { outcome: 'ok', result: '2', latencyMs: 1 }, at(2))).rejects.toThrow(/conditional/i);
    expect((await ledger.getCall('r1', 3, 1))!.result).toBe('1');
  });

  it('releases the lease of a cleanly failed call so the retry claims at once', async () => {
    await ledger.claimCall(call(), at(0));
    await ledger.releaseCall('r1', 3, 1, at(1));
    expect(await ledger.claimCall(call(), at(2))).toMatchObject({ claimed: true, record: { attempts: 2 } });
  });
});

describe('approvals', () => {
  const approval = (overrides: Partial<ApprovalRecord> = {}): ApprovalRecord => ({
    kind: 'approval',
    approvalId: 'apv_0123456789abcdef',
    runId: 'r1',
    turn: 3,
    call: 1,
    toolName: 'issue_refund',
    summary: 'issue_refund $725.00',
    amount: { minor: 72_500, currency: 'usd' },
    taskToken: 'token-1',
    status: 'pending',
    decideBy: at(60).toISOString(),
    createdAt: t0.toISOString(),
    ...overrides,
  });

  it('keeps the opaque id and refreshes the token when the approval is requested again', async () => {
    await ledger.upsertApproval(approval());
    const again = await ledger.upsertApproval(approval({ approvalId: 'apv_other000000000000', taskToken: 'token-2' }));
    expect(again).toMatchObject({ approvalId: 'apv_0123456789abcdef', taskToken: 'token-2', status: 'pending' });
    expect(await ledger.findApproval('apv_0123456789abcdef')).toMatchObject({ taskToken: 'token-2' });
    expect(await ledger.findApproval('apv_other000000000000')).toBeUndefined();
  });

  it('records a decision once; the first decision stands', async () => {
    await ledger.upsertApproval(approval());
    const key = { runId: 'r1', turn: 3, call: 1 };
    const decisions = await Promise.all([
      ledger.decideApproval(key, { status: 'approved', decidedBy: 'alice' }, at(1)),
      ledger.decideApproval(key, { status: 'rejected', decidedBy: 'bob' }, at(1)),
      ledger.decideApproval(key, { status: 'expired', decidedBy: 'timeout' }, at(1)),
    ]);
    const winners = decisions.filter((decision) => decision.decided);
    expect(winners).toHaveLength(1);
    for (const decision of decisions) expect(decision.record.status).toBe(winners[0]!.record.status);
  });

  it('lists only pending approvals, and a decided one leaves the list', async () => {
    await ledger.upsertApproval(approval());
    await ledger.upsertApproval(approval({ approvalId: 'apv_second00000000000', call: 2 }));
    expect((await ledger.listPendingApprovals()).map((pending) => pending.approvalId).sort()).toEqual(['apv_0123456789abcdef', 'apv_second00000000000']);
    await ledger.decideApproval({ runId: 'r1', turn: 3, call: 2 }, { status: 'approved', decidedBy: 'alice' }, at(1));
    expect((await ledger.listPendingApprovals()).map((pending) => pending.approvalId)).toEqual(['apv_0123456789abcdef']);
    // A decided approval is not re-armed by a late request: its decision is returned.
    expect(await ledger.upsertApproval(approval({ call: 2, taskToken: 'token-9' }))).toMatchObject({ status: 'approved', taskToken: 'token-1' });
  });
});
