import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { lifecycleOf } from '../../client/index.js';
import { approvalApiDecider, createClient, type SavepointClient } from '../../client/ledger-client.js';
import { killEveryRun } from '../../client/kill-all.js';
import { localUser } from '../../local/services/approval-api.js';
import { duplicatePayments, sampleDay, startHarness, type Harness } from '../support/refund-harness.js';

/** The application client against the local stack: the same Step Functions API, ledger and approval API as on AWS. */
let harness: Harness;
let client: SavepointClient;
// Looks again as soon as the event loop has turned: no timed sleep.
const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

// A stack (and a world) per test: a run's refunds would otherwise be paid already when another test's run starts.
beforeEach(async () => {
  harness = await startHarness();
  client = createClient({
    ledger: harness.stack.ledger,
    sfn: harness.stack.sfn,
    stateMachineArn: harness.stack.stateMachineArn,
    decide: approvalApiDecider(harness.stack.endpoints.approvals),
    agent: refundReconciler,
    pause: nextTick,
  });
});
afterEach(() => harness.stack.close());

describe('the lifecycle', () => {
  it.each([
    ['running', 0, 'working'],
    ['running', 1, 'input_required'],
    ['succeeded', 0, 'completed'],
    ['stopped', 0, 'failed'],
    ['failed', 0, 'failed'],
    ['killed', 0, 'cancelled'],
  ] as const)('%s with %i pending approvals is %s', (status, pending, lifecycle) => {
    expect(lifecycleOf(status, pending)).toBe(lifecycle);
  });

  // A lifecycle a run never leaves (MCP Tasks' terminal `failed`) is not said of a run recovery resumes.
  it.each([
    ['Agent.Transient', 'working'],
    ['Agent.CircuitOpen', 'working'],
    ['States.Timeout', 'working'],
    ['Agent.Unrecoverable', 'failed'],
    ['Agent.Terminal', 'failed'],
    ['Agent.InvalidInput', 'failed'],
  ] as const)('failed with %s is %s', (error, lifecycle) => {
    expect(lifecycleOf('failed', 0, { error })).toBe(lifecycle);
  });
});

describe('a run that failed by accident', () => {
  it('is working, not failed, through the client and the runs API: recovery resumes it', async () => {
    // Its recovery switched off, so that its record stays failed by accident to be read.
    const down = await startHarness({ recovery: false, modelUrl: 'http://127.0.0.1:9' });
    try {
      const reading = createClient({ ledger: down.stack.ledger, sfn: down.stack.sfn, stateMachineArn: down.stack.stateMachineArn, decide: approvalApiDecider(down.stack.endpoints.approvals), agent: refundReconciler, pause: nextTick });
      const ended = await down.run({ runId: 'down', input: { date: sampleDay.date } });
      expect(ended.status).toBe('FAILED');
      const view = await reading.status('down');
      expect(view).toMatchObject({ lifecycle: 'working', report: { status: 'failed', error: { error: 'Agent.Transient' } } });
      // The runs API reads it so too (no poll of its stops at it), and lists it among the working runs.
      const read = (await (await fetch(`${down.stack.endpoints.runs}/down`)).json()) as Record<string, unknown>;
      expect(read).toMatchObject({ lifecycle: 'working', pollAfterSeconds: expect.any(Number) });
      const listed = (await (await fetch(`${down.stack.endpoints.runs}?status=working`)).json()) as { runs: { runId: string; lifecycle: string }[] };
      expect(listed.runs).toEqual([expect.objectContaining({ runId: 'down', lifecycle: 'working' })]);
    } finally {
      await down.stack.close();
    }
  });
});

describe('the client', () => {
  it('starts a run, waits for input, decides, waits for the result; starting it again changes nothing', async () => {
    const input = { date: sampleDay.date };
    const { runId } = await client.start({ input, config: { approvalTimeoutSeconds: 3600 } });
    expect(runId).toBe('refunds-2026-11-28');

    const decided: string[] = [];
    for (;;) {
      const view = await client.wait(runId, { untilInput: true });
      if (view.lifecycle !== 'input_required') break;
      const [approval] = view.approvals;
      expect(approval).toMatchObject({ runId, toolName: 'issue_refund', amount: { currency: 'usd' } });
      const result = await client.decide(approval!.approvalId, decided.length === 0 ? 'approve' : 'reject', { reason: 'by the client test' });
      expect(result).toMatchObject({ ok: true, delivered: true });
      decided.push(approval!.approvalId);
      // Wait until the decided approval is no longer pending before looking for the next one.
      while ((await client.status(runId))!.approvals.some((pending) => pending.approvalId === approval!.approvalId)) await nextTick();
    }
    const done = await client.wait(runId);
    expect(done).toMatchObject({ lifecycle: 'completed', report: { status: 'succeeded', summary: { issued: 17, escalated: 1 } }, approvals: [] });
    expect(decided).toHaveLength(2);
    expect(await client.decide(decided[0]!, 'reject')).toMatchObject({ ok: false, status: 409 });

    const paid = harness.stack.world.payments.refunds().length;
    await client.start({ input });
    expect((await client.wait(runId)).lifecycle).toBe('completed');
    expect(harness.stack.world.payments.refunds()).toHaveLength(paid);
    expect(duplicatePayments(harness.stack)).toEqual([]);
  });

  it('cancels a run waiting for a person: its approval is rejected and it stops before its next step', async () => {
    const { runId } = await client.start({ runId: 'to-cancel', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
    expect((await client.wait(runId, { untilInput: true })).lifecycle).toBe('input_required');
    await client.cancel(runId, { by: 'client-test', reason: 'wrong day' });
    const view = await client.wait(runId);
    expect(view).toMatchObject({ lifecycle: 'cancelled', report: { status: 'killed', killed: { by: 'client-test', reason: 'wrong day' } } });
    await expect(client.cancel(runId, { by: 'client-test' })).rejects.toThrow(/run to-cancel is killed, not running/);
  });

  it('cancels a run waiting for a person with the longest kill reason: the approval is rejected, its reason cut to what a decision records', async () => {
    const { runId } = await client.start({ runId: 'long-reason', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
    const [approval] = (await client.wait(runId, { untilInput: true })).approvals;
    const reason = 'r'.repeat(500);
    await client.cancel(runId, { by: 'client-test', reason });
    expect(await client.wait(runId)).toMatchObject({ lifecycle: 'cancelled', report: { status: 'killed', killed: { reason } } });
    const rejected = await harness.stack.ledger.findApproval(approval!.approvalId);
    expect(rejected).toMatchObject({ status: 'rejected', reason: expect.stringMatching(/^run killed by client-test: r+…$/) });
    expect(rejected!.reason).toHaveLength(500);
  });

  it('says so when a kill cannot reject the approval the run waits for: the kill is recorded, the run still waits for a person', async () => {
    const { runId } = await client.start({ runId: 'not-an-approver', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
    const [approval] = (await client.wait(runId, { untilInput: true })).approvals;
    // Deciding in the ledger as someone the deployment's approvers do not include.
    const outsider = createClient({
      ledger: harness.stack.ledger,
      ledgerDecisions: { identity: { id: 'local:mallory', via: 'cli', principal: 'local:mallory' }, policy: { separationOfDuties: false, approverPrincipals: { alice: ['local:alice'] } } },
    });
    await expect(outsider.cancel(runId, { by: 'local:mallory' })).rejects.toThrow(
      new RegExp(`^run not-an-approver is killed, but it waits for 1 approval local:mallory may not reject: ${approval!.approvalId} \\(local:mallory is not one of this deployment's approver principals`),
    );
    expect(await harness.stack.ledger.getRun(runId)).toMatchObject({ status: 'running', killed: { by: 'local:mallory' } });
    expect(await harness.stack.ledger.findApproval(approval!.approvalId)).toMatchObject({ status: 'pending' });
  });

  it('cancels a run whose approval is past its deadline, its expiry not run yet: the kill stands, the expiry wakes the run', async () => {
    const { runId } = await client.start({ runId: 'past-deadline', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
    const [approval] = (await client.wait(runId, { untilInput: true })).approvals;
    // Two hours on, as the approval's own user, before the sweep has expired it: the rejection is refused (410), as any decision then.
    const later = createClient({
      ledger: harness.stack.ledger,
      clock: { now: () => new Date(Date.parse(approval!.decideBy) + 3600_000) },
      ledgerDecisions: { identity: { id: localUser(), via: 'cli', principal: localUser() }, policy: { separationOfDuties: false, approverPrincipals: { [localUser()]: [localUser()] } } },
    });
    expect(await later.cancel(runId, { by: localUser(), reason: 'too late' })).toMatchObject({ approvals: [], report: { killed: { reason: 'too late' } } });
    expect(await harness.stack.ledger.getRun(runId)).toMatchObject({ status: 'running', killed: { by: localUser() } });
    expect(await harness.stack.ledger.findApproval(approval!.approvalId)).toMatchObject({ status: 'pending' });
  });

  it('kill-all tries every run waiting for a person, and names each whose approval it could not reject', async () => {
    for (const runId of ['waits-1', 'waits-2']) {
      await client.start({ runId, input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
      expect((await client.wait(runId, { untilInput: true })).lifecycle).toBe('input_required');
    }
    const outsider = createClient({
      ledger: harness.stack.ledger,
      ledgerDecisions: { identity: { id: 'local:mallory', via: 'cli', principal: 'local:mallory' }, policy: { separationOfDuties: false, approverPrincipals: { alice: ['local:alice'] } } },
    });
    const flag = { by: 'local:mallory', at: new Date().toISOString(), reason: '' };
    const refused = await killEveryRun(harness.stack.ledger, outsider, flag).catch((error: Error) => error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/^the global kill switch is on; run waits-\d is killed, but .*; run waits-\d is killed, but /);
    for (const runId of ['waits-1', 'waits-2']) expect(await harness.stack.ledger.getRun(runId)).toMatchObject({ killed: { by: 'local:mallory' } });
  });

  it('refuses what it cannot start, naming the field', async () => {
    await expect(client.start({ input: { date: '2026-02-30' } })).rejects.toThrow(/input of agent refund-reconciler: date: 2026-02-30 is not a calendar date/);
    const anonymous = createClient({ ledger: harness.stack.ledger, sfn: harness.stack.sfn, stateMachineArn: harness.stack.stateMachineArn });
    await expect(anonymous.start({ input: {} })).rejects.toThrow(/runId: required when the client does not know the agent/);
    expect(await client.status('no-such-run')).toBeUndefined();
  });
});
