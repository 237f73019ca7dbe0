import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { afterEach, describe, expect, it } from 'vitest';
import { loadReport } from '../../lambdas/runs/report.js';
import { duplicatePayments, sampleDay, scheduledEvent, startHarness, type Harness } from '../support/refund-harness.js';
import { postDecision, waitFor } from '../support/agent-harness.js';
import { expiringApprovals } from '../support/manual-clock.js';

const plainRefunds = 16;
const aboveThreshold = 2;

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

describe('the nightly reconciliation on the synthesized state machine', () => {
  it('reconciles the sample day, pausing for the two refunds above the threshold', async () => {
    harness = await startHarness();
    const { stack } = harness;
    // A person approves through the approval API while the run waits on its task token.
    const decisions = (async () => {
      for (let index = 0; index < aboveThreshold; index++) {
        const approval = await waitFor(() => harness!.approvals[index]);
        const decided = await postDecision(stack, approval.approvalId, { decision: 'approve', reason: 'checked' });
        expect(decided).toMatchObject({ status: 200, body: { status: 'approved', delivered: true } });
      }
    })();
    const finished = await harness.run({ runId: 'approve-all', input: { date: sampleDay.date } });
    await decisions;

    expect(finished.status).toBe('SUCCEEDED');
    expect(JSON.parse(finished.output!)).toMatchObject({ runId: 'approve-all', status: 'succeeded', reason: 'done' });
    const report = (await loadReport(stack.ledger, 'approve-all', new Date(), refundReconciler))!;
    expect(report.summary).toMatchObject({ requests: 25, issued: plainRefunds + aboveThreshold, skipped: 4, flagged: 3, escalated: 0 });
    expect(report.approvals).toMatchObject({ total: 2, approved: 2, pending: 0 });
    expect(report.inFlight).toBe(0);
    expect(report.steps).toBe(report.modelTurns + report.toolCalls);
    expect(report.steps).toBeGreaterThanOrEqual(95);
    expect(report.steps).toBeLessThanOrEqual(115);
    expect(report.dollars).toBeGreaterThan(0);

    // The execution history: which states ran and how often, and no retries without faults.
    const states = finished.states;
    expect(states['StartRun']).toMatchObject({ entered: 1, invocations: 1 });
    // CallModel decides before each call, once a turn; the model's final answer and the run's end
    // in the same invocation, which goes straight to Finalize (no empty Map after it).
    expect(states['CallModel']).toMatchObject({ entered: report.modelTurns, invocations: report.modelTurns, failures: 0 });
    expect(states['ToolCalls']).toMatchObject({ entered: report.modelTurns - 1 });
    // A call that needs approval enters CallTool twice: to learn it needs one (Agent.ApprovalNeeded,
    // caught into RequestApproval), and after the decision. Every other call, once.
    expect(states['CallTool']).toMatchObject({ entered: report.toolCalls + 2, invocations: report.toolCalls + 2, errors: { 'Agent.ApprovalNeeded': 2 } });
    expect(states['RequestApproval']).toMatchObject({ entered: 2, invocations: 2, failures: 0 });
    // CallModel makes every decision, the execution's first included: no BudgetCheck state.
    expect(states['BudgetCheck']).toBeUndefined();
    expect(states['Finalize']).toMatchObject({ entered: 1 });
    expect(states['RecordFailure']).toBeUndefined();
    expect(finished.history.at(-1)!.type).toBe('ExecutionSucceeded');

    // The provider paid each refund exactly once.
    expect(stack.world.payments.refunds()).toHaveLength(plainRefunds + aboveThreshold);
    expect(duplicatePayments(stack)).toEqual([]);
    expect(stack.world.payments.reports()).toHaveLength(1);
  });

  it("hands on only StartRun's answer after it: no later state carries the execution's input or its config", async () => {
    harness = await startHarness(expiringApprovals());
    const finished = await harness.run({ runId: 'lean-state', input: { date: sampleDay.date } });
    expect(finished.status).toBe('SUCCEEDED');
    const entered = finished.history.flatMap((event) => (event.stateEnteredEventDetails ? [event.stateEnteredEventDetails] : []));
    expect(entered[0]!.name).toBe('StartRun');
    // StartRun's own input is the execution's: the run request's date among it.
    expect(entered[0]!.input).toContain(sampleDay.date);
    const later = entered.slice(1);
    expect(later.length).toBeGreaterThan(50);
    for (const { name, input } of later) {
      const state = JSON.parse(input!) as Record<string, unknown>;
      expect([name, Object.keys(state).filter((key) => ['input', 'config', 'event'].includes(key))]).toEqual([name, []]);
      if (state['run'] !== undefined) expect([name, state['run']]).toEqual([name, { result: { runId: 'lean-state', action: 'start', status: 'running' } }]);
    }
  });

  it('finishes with injected transient failures, retrying only the failed steps and paying once', async () => {
    // On the real clock: a tool call retried after an injected failure waits out the lease its failed
    // try still holds (Agent.LeaseHeld), which ends on the stack's clock; a clock moved only at the
    // approvals' deadlines would never end it. Its two approvals wait their 1 s each.
    harness = await startHarness({ failRate: 0.1, seed: 7 });
    const finished = await harness.run({ runId: 'flaky', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 1 } });

    expect(finished.status).toBe('SUCCEEDED');
    const report = (await loadReport(harness.stack.ledger, 'flaky', new Date(), refundReconciler))!;
    expect(report.summary).toMatchObject({ requests: 25, issued: plainRefunds, skipped: 4, flagged: 3 + aboveThreshold, escalated: aboveThreshold });
    const { CallModel, CallTool } = finished.states;
    // Retries show in the history as extra invocations of the same state, with transient names only.
    expect(CallModel!.invocations).toBeGreaterThan(CallModel!.entered);
    expect(CallTool!.invocations).toBeGreaterThan(CallTool!.entered);
    expect(Object.keys(CallModel!.errors).every((name) => name === 'Agent.ModelThrottled' || name === 'Agent.Transient')).toBe(true);
    // Injected failures are transient; now and then they come close enough together to open the
    // provider's breaker for a moment, which the run also waits out.
    // (And each of the calls that need approval asked for it once: Agent.ApprovalNeeded, not a fault.)
    expect(Object.keys(CallTool!.errors).every((name) => name === 'Agent.Transient' || name === 'Agent.CircuitOpen' || name === 'Agent.ApprovalNeeded')).toBe(true);
    expect(CallTool!.errors['Agent.ApprovalNeeded']).toBe(aboveThreshold);
    // A retried step is counted once: the agent's steps do not grow with retries (nor with the
    // approval calls' second entry into CallTool).
    expect(report.steps).toBe(CallModel!.entered + CallTool!.entered - aboveThreshold);
    expect(report.inFlight).toBe(0);
    expect(harness.stack.world.payments.refunds()).toHaveLength(plainRefunds);
    expect(duplicatePayments(harness.stack)).toEqual([]);
  });

  it('starts the nightly run from the EventBridge scheduled event, for the day before; rejected refunds are flagged', async () => {
    harness = await startHarness();
    const { stack } = harness;
    const decisions = (async () => {
      for (let index = 0; index < aboveThreshold; index++) {
        const approval = await waitFor(() => harness!.approvals[index]);
        expect(await postDecision(stack, approval.approvalId, { decision: 'reject', reason: 'card reported stolen' })).toMatchObject({ status: 200 });
      }
    })();
    const finished = await harness.run({ ...scheduledEvent, time: '2026-11-29T02:00:00Z' });
    await decisions;

    expect(finished.status).toBe('SUCCEEDED');
    expect(await stack.ledger.getRun('refunds-2026-11-28')).toMatchObject({ input: { date: '2026-11-28' }, status: 'succeeded' });
    const report = (await loadReport(stack.ledger, 'refunds-2026-11-28', new Date(), refundReconciler))!;
    expect(report.summary).toMatchObject({ issued: plainRefunds, flagged: 3 + aboveThreshold, escalated: aboveThreshold });
    expect(report.approvals).toMatchObject({ rejected: 2 });
    // The rejection reaches the run as the failure of the waiting task, caught into CallTool.
    expect(finished.states['RequestApproval']).toMatchObject({ entered: 2, failures: 2, errors: { 'Approval.Rejected': 2 } });
    const reviews = stack.world.payments.reviews().filter((review) => review.reason.includes('card reported stolen'));
    expect(reviews).toHaveLength(aboveThreshold);
  });

  it('does nothing for a run that already finished: the run id is the idempotency key', async () => {
    harness = await startHarness(expiringApprovals());
    const input = { runId: 'twice', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 1 } };
    await harness.run(input);
    const paid = harness.stack.world.payments.refunds().length;
    const second = await harness.run(input);
    expect(second.status).toBe('SUCCEEDED');
    expect(Object.keys(second.states)).toEqual(['StartRun', 'StartOrResume', 'NothingToDo']);
    expect(harness.stack.world.payments.refunds()).toHaveLength(paid);
  });

  it('starts one run for a schedule event delivered twice at once (EventBridge delivers at least once): the other execution leaves it to the first', async () => {
    // The schedule's target is the state machine itself: each delivery a StartExecution of its own,
    // the event as input, a name EventBridge makes up. Both at once, as two copies of one event may come.
    harness = await startHarness(expiringApprovals());
    const event = { ...scheduledEvent, time: '2026-11-29T02:00:00Z' };
    const [first, second] = await Promise.all([harness.run(event, 'schedule-copy-1'), harness.run(event, 'schedule-copy-2')]);
    expect([first.status, second.status]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    // One execution drove the day; the other found it driven by a live execution and ended at once.
    const drove = [first, second].filter((finished) => finished.states['CallModel'] !== undefined);
    const left = [first, second].filter((finished) => finished.states['CallModel'] === undefined);
    expect(drove).toHaveLength(1);
    expect(left).toHaveLength(1);
    expect(Object.keys(left[0]!.states)).toEqual(['StartRun', 'StartOrResume', 'NothingToDo']);
    const run = (await harness.stack.ledger.getRun('refunds-2026-11-28'))!;
    expect(run).toMatchObject({ status: 'succeeded', executionArn: drove[0]!.executionArn });
    expect(run.executions).toEqual([drove[0]!.executionArn]);
    // Every refund of the day paid once.
    expect(duplicatePayments(harness.stack)).toEqual([]);
    expect(harness.stack.world.payments.refunds()).toHaveLength(plainRefunds);
  });
});
