import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadReport } from '../../lambdas/runs/report.js';
import { RECOVERY } from '../../lambdas/steps/recover-run.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { definitionIdentity } from '../../infra/agent-state-machine.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { duplicatePayments, startHarness, type Harness } from '../support/refund-harness.js';
import { postDecision, waitFor } from '../support/agent-harness.js';
import { flakyModel as outage } from '../support/flaky-model.js';
import { replayRun } from '../../local/replay/index.js';
import * as z from 'zod';
import { defineAgent, defineTool, TransientError, withDev, type ModelPolicy } from '../../lambdas/index.js';
import { startAgentHarness } from '../support/agent-harness.js';

/** Three requests: a refund, a mismatch to flag, and a refund above the approval threshold. */
const day = makeSampleDay(7, { plain: 1, already_refunded: 0, mismatch: 1, large: 1 });
/** The same day's shape with no refund large enough to wait for a person: for the tests about failures alone. */
const unattendedDay = makeSampleDay(7, { plain: 2, already_refunded: 0, mismatch: 1, large: 0 });
/** Local breakers compress a 60 s window into 1.2 s; an outage test must not trip them (their own tests do). */
const noBreaker = { failures: 1_000, windowMs: 1_000, openMs: 1, probeLeaseMs: 1 };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A model endpoint that answers 503 while `down()` says so, closed after each test. */
const flakyModel = (target: () => string, down: (request: number) => boolean) => outage(target, down, (close) => cleanups.push(close));

async function harness(options: Parameters<typeof startHarness>[0]): Promise<Harness> {
  const started = await startHarness({ day, breaker: noBreaker, ...options });
  cleanups.push(() => started.stack.close());
  return started;
}

const executionNamed = (h: Harness, name: string) => h.stack.engine.listExecutions().executions.find((execution) => execution.name === name);

describe('recovery of a failed execution (the status-change rule)', () => {
  it('resumes a run whose execution failed after its retries, with a new execution of the same run id', async () => {
    let simulated = '';
    // The 4th to the 10th model request fail: seven in a row exhaust CallModel's six retries.
    const modelUrl = await flakyModel(() => simulated, (request) => request >= 4 && request <= 10);
    const h = await harness({ modelUrl, day: unattendedDay });
    simulated = h.stack.endpoints.model;

    const first = await h.run({ runId: 'outage', input: { date: unattendedDay.date } });
    expect(first.status).toBe('FAILED');
    expect(first.states['CallModel']!.errors).toEqual({ 'Agent.Transient': 7 });
    const recovery = await waitFor(() => executionNamed(h, 'outage-recovery-1'));
    expect(await h.stack.engine.waitForExecution(recovery.executionArn)).toMatchObject({ status: 'SUCCEEDED' });

    const run = (await h.stack.ledger.getRun('outage'))!;
    expect(run).toMatchObject({ status: 'succeeded', executions: [first.executionArn, recovery.executionArn] });
    expect(run.recovery).toMatchObject({ attempts: 1, withoutProgress: 1, reason: expect.stringMatching(/^execution test-\d+ FAILED: Agent.Transient \(model provider answered 503/) });
    const report = (await loadReport(h.stack.ledger, 'outage', new Date(), refundReconciler))!;
    expect(report).toMatchObject({ inFlight: 0, summary: { issued: 2, flagged: 1 } });
    // Every step counted once, across the failed execution's end (which counted its open turn's
    // calls: ledger/open-turn.ts) and the recovered one's.
    const { turns, calls } = await h.stack.ledger.listConversation('outage');
    expect(run).toMatchObject({ steps: turns.length + calls.filter((call) => call.status === 'completed').length, modelTurns: turns.length });
    expect(duplicatePayments(h.stack)).toEqual([]);
    // Its replay runs straight through: the failed execution left nothing the replay must make again.
    const served = h.stack.model.requestCount();
    expect(await replayRun({ agent: refundReconciler, source: h.stack.ledger, runId: 'outage' })).toMatchObject({ identical: true, live: { model: 0, tools: 0 } });
    expect(h.stack.model.requestCount()).toBe(served);
  });

  it('gives a run up, with the reason, when recoveries make no progress', async () => {
    let simulated = '';
    const modelUrl = await flakyModel(() => simulated, (request) => request >= 2);
    const h = await harness({ modelUrl, recovery: { maxWithoutProgress: 2 } });
    simulated = h.stack.endpoints.model;

    await h.run({ runId: 'stuck', input: { date: day.date } });
    const given = await waitFor(async () => {
      const record = await h.stack.ledger.getRun('stuck');
      return record?.error?.error === 'Agent.Unrecoverable' ? record : undefined;
    });
    expect(given).toMatchObject({ status: 'failed', recovery: { attempts: 2, withoutProgress: 2 } });
    expect(given.stopReason).toMatch(/^not recovered: 2 recoveries in a row made no progress \(stuck at step 2\); last: execution stuck-recovery-2 FAILED: Agent.Transient/);
    expect(h.stack.engine.listExecutions().executions.map((execution) => execution.name).sort()).toEqual(['stuck-recovery-1', 'stuck-recovery-2', 'test-1']);
    // Its replay fails where its executions failed (the model call after its first turn) and is
    // given up for the same reason: identical, not "calls the model where the recorded run had stopped".
    const replayed = await replayRun({ agent: refundReconciler, source: h.stack.ledger, runId: 'stuck' });
    expect(replayed, JSON.stringify(replayed.divergence)).toMatchObject({ identical: true, answered: { turns: 1 }, live: { model: 0, tools: 0 } });
    // This code asking the model something else before it failed still diverges.
    const changed = { ...refundReconciler, system: `${refundReconciler.system}\nNever refund more than $100.` };
    expect(await replayRun({ agent: changed, source: h.stack.ledger, runId: 'stuck' })).toMatchObject({ identical: false, divergence: { turn: 1, why: 'the system prompt changed' } });
  });

  it('gives a run up whose tool is down at every recovery; its replay fails at that call and is given up the same', async () => {
    const looks = (): ModelPolicy => (request) =>
      request.messages.some((message) => message.role === 'assistant')
        ? { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' }
        : { content: [{ type: 'tool_use', id: 'c1', name: 'look', input: { invoice: 'inv_1' } }], stop_reason: 'tool_use' };
    let sent = 0;
    const down = defineTool({ name: 'look', description: 'Looks an invoice up.', input: z.object({ invoice: z.string() }).strict(), effect: 'read', execute: async () => { sent += 1; throw new TransientError('invoices service: 503'); } });
    const agent = withDev(defineAgent({ name: 'looks-up', model: 'sim:savepoint-sim-1', system: 'Look the invoice up.', input: z.object({ invoice: z.string() }).strict(), prompt: (input) => `Look ${input.invoice} up.`, tools: [down] }), { policy: looks() });
    const h = await startAgentHarness({ agent, breaker: noBreaker, recovery: { maxWithoutProgress: 1 } });
    cleanups.push(() => h.stack.close());
    await h.run({ runId: 'down', input: { invoice: 'inv_1' } });
    const given = await waitFor(async () => {
      const record = await h.stack.ledger.getRun('down');
      return record?.error?.error === 'Agent.Unrecoverable' ? record : undefined;
    });
    expect(given.stopReason).toMatch(/^not recovered: 1 recovery in a row made no progress .*FAILED: Agent.Transient/);
    expect((await h.stack.ledger.listConversation('down')).calls).toEqual([]);
    const before = sent;
    const replayed = await replayRun({ agent, source: h.stack.ledger, runId: 'down' });
    expect(replayed, JSON.stringify(replayed.divergence)).toMatchObject({ identical: true, answered: { turns: 1, toolCalls: 0 }, live: { model: 0, tools: 0 } });
    expect(sent).toBe(before);
    // This code asking the model something else before the call still diverges.
    expect(await replayRun({ agent: { ...agent, prompt: (input: { invoice: string }) => `Look ${input.invoice} up twice.` }, source: h.stack.ledger, runId: 'down' })).toMatchObject({ identical: false, divergence: { turn: 1 } });
  });
});

describe('the watchdog', () => {
  it('resumes a run an engine left running when it went away; the pending approval stays pending, then its decision resumes the run', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-watchdog-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const first = await harness({ stateDir });
    const { executionArn } = first.stack.engine.startExecution({ name: 'before', input: { runId: 'orphan', input: { date: day.date }, config: { approvalTimeoutSeconds: 600 } } });
    const approval = await waitFor(() => first.approvals[0]);
    const firstToken = await first.stack.ledger.getTaskToken(approval);
    await first.stack.close();
    expect((await reopenRun(stateDir, 'orphan')).status).toBe('running');

    const second = await harness({ stateDir });
    expect(await second.stack.recoverOrphans()).toEqual([
      { runId: 'orphan', action: 'recovered', reason: `execution before LOST`, attempt: 1, executionArn: expect.stringMatching(/:orphan-recovery-1$/) },
    ]);
    // The resumed execution waits on the same approval (a new task token, the same approval id).
    await waitFor(async () => ((await second.stack.ledger.getTaskToken(approval)) !== firstToken ? true : undefined));
    expect(second.approvals).toEqual([]);
    expect(await postDecision(second.stack, approval.approvalId, { decision: 'approve', reason: 'checked' })).toMatchObject({ status: 200, body: { delivered: true } });
    const recovered = await second.stack.engine.waitForExecution(second.stack.engine.listExecutions().executions[0]!.executionArn);
    expect(recovered.status).toBe('SUCCEEDED');
    expect(await second.stack.ledger.getRun('orphan')).toMatchObject({ status: 'succeeded', executions: [executionArn, recovered.executionArn] });
    // The plain refund and the approved one, each paid once across both engines.
    expect(second.stack.world.payments.refunds()).toHaveLength(2);
    expect(duplicatePayments(second.stack)).toEqual([]);
    // Nothing is left to recover.
    expect(await second.stack.recoverOrphans()).toEqual([]);
  });

  it('never gives up a run that waits for a person however often its engine goes away (serve stopped and started again)', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-watchdog-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const first = await harness({ stateDir });
    first.stack.engine.startExecution({ name: 'before', input: { runId: 'waiter', input: { date: day.date }, config: { approvalTimeoutSeconds: 600 } } });
    const approval = await waitFor(() => first.approvals[0]);
    let token = await first.stack.ledger.getTaskToken(approval);
    await first.stack.close();
    // More engines than the bound of recoveries without progress (3), each gone while the run waits.
    for (let attempt = 1; attempt <= RECOVERY.maxWithoutProgress + 2; attempt++) {
      const next = await harness({ stateDir });
      expect(await next.stack.recoverOrphans()).toEqual([{ runId: 'waiter', action: 'recovered', reason: expect.stringMatching(/ LOST$/), attempt, executionArn: expect.stringMatching(new RegExp(`:waiter-recovery-${attempt}$`)) }]);
      const previous = token;
      token = await waitFor(async () => {
        const current = await next.stack.ledger.getTaskToken(approval);
        return current !== previous ? current : undefined;
      });
      await next.stack.close();
    }
    const last = await harness({ stateDir });
    await last.stack.recoverOrphans();
    await waitFor(async () => ((await last.stack.ledger.getTaskToken(approval)) !== token ? true : undefined));
    expect(await postDecision(last.stack, approval.approvalId, { decision: 'approve', reason: 'checked' })).toMatchObject({ status: 200, body: { delivered: true } });
    await waitFor(async () => ((await last.stack.ledger.getRun('waiter'))?.status === 'succeeded' ? true : undefined));
    expect(duplicatePayments(last.stack)).toEqual([]);
  });

  it('resumes a run whose execution failed after its retries when its process ended before recovering it', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-failed-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    let simulated = '';
    // The 4th to the 10th model request fail: seven in a row exhaust CallModel's six retries.
    const modelUrl = await flakyModel(() => simulated, (request) => request >= 4 && request <= 10);
    // No status-change recovery in the first process: it ends as `savepoint run` does once the execution fails.
    const first = await harness({ stateDir, modelUrl, day: unattendedDay, recovery: false });
    simulated = first.stack.endpoints.model;
    const failed = await first.run({ runId: 'ended-first', input: { date: unattendedDay.date } });
    expect(failed.status).toBe('FAILED');
    expect(failed.states['CallModel']!.errors).toEqual({ 'Agent.Transient': 7 });
    await first.stack.close();
    expect(await reopenRun(stateDir, 'ended-first')).toMatchObject({ status: 'failed', error: { error: 'Agent.Transient' } });

    const second = await harness({ stateDir, modelUrl, day: unattendedDay });
    simulated = second.stack.endpoints.model;
    const [recovered, ...others] = await second.stack.recoverOrphans();
    expect(others).toEqual([]);
    expect(recovered).toMatchObject({ runId: 'ended-first', action: 'recovered', attempt: 1, reason: expect.stringMatching(/^execution test-\d+ FAILED: Agent.Transient/), executionArn: expect.stringMatching(/:ended-first-recovery-1$/) });
    const resumed = await second.stack.engine.waitForExecution((recovered as { executionArn: string }).executionArn);
    expect(resumed.status).toBe('SUCCEEDED');
    expect(await second.stack.ledger.getRun('ended-first')).toMatchObject({ status: 'succeeded', executions: [failed.executionArn, resumed.executionArn] });
    expect(duplicatePayments(second.stack)).toEqual([]);
    // Nothing is left to recover.
    expect(await second.stack.recoverOrphans()).toEqual([]);
  });

  it('refuses to resume on a changed state machine definition, with the reason, unless forced', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-fingerprint-'));
    cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const first = await harness({ stateDir });
    first.stack.engine.startExecution({ name: 'before', input: { runId: 'changed', input: { date: day.date }, config: { approvalTimeoutSeconds: 600 } } });
    const firstToken = await first.stack.ledger.getTaskToken(await waitFor(() => first.approvals[0]));
    const startedOn = (await first.stack.ledger.getRun('changed'))!.definitionHash;
    await first.stack.close();

    const second = await harness({ stateDir, template: await withLongerModelTimeout() });
    const [recovered] = await second.stack.recoverOrphans();
    expect(recovered).toMatchObject({ action: 'recovered' });
    const refused = await second.stack.engine.waitForExecution((recovered as { executionArn: string }).executionArn);
    expect(refused).toMatchObject({ status: 'FAILED', error: 'Agent.InvalidInput' });
    expect(refused.cause).toMatch(/run changed started on other code: state machine definition \w+ → \w+\. .*pass --force/);
    expect(await second.stack.ledger.getRun('changed')).toMatchObject({ status: 'running', executionArn: expect.stringMatching(/:before$/) });

    // The operator forces it: the run goes on where it stopped, on the new code.
    const { executionArn } = second.stack.engine.startExecution({ name: 'forced', input: { runId: 'changed', input: { date: day.date }, force: true } });
    // The resumed execution's request refreshes the approval's task token (its own item).
    const approval = await waitFor(async () => {
      const [pending] = await second.stack.ledger.listPendingApprovals();
      return pending && (await second.stack.ledger.getTaskToken(pending)) !== firstToken ? pending : undefined;
    });
    expect(approval.approvalId).toBe(first.approvals[0]!.approvalId);
    expect(await postDecision(second.stack, approval.approvalId, { decision: 'approve' })).toMatchObject({ status: 200, body: { delivered: true } });
    expect(await second.stack.engine.waitForExecution(executionArn)).toMatchObject({ status: 'SUCCEEDED' });
    const run = (await second.stack.ledger.getRun('changed'))!;
    expect(run).toMatchObject({ status: 'succeeded', executionArn });
    expect(run.definitionHash).toMatch(/^[0-9a-f]{16}$/);
    expect(run.definitionHash).not.toBe(startedOn);
  });
});

async function withLongerModelTimeout() {
  const template = (await cachedTemplate('refund-reconciler')) as { Resources: Record<string, { Type: string; Properties?: { DefinitionString?: { 'Fn::Join': [string, unknown[]] } } }> };
  const machine = Object.values(template.Resources).find((resource) => resource.Type === 'AWS::StepFunctions::StateMachine')!;
  const parts = machine.Properties!.DefinitionString!['Fn::Join'][1];
  const changed = parts.map((part) => (typeof part === 'string' ? part.replace('"TimeoutSeconds":90', '"TimeoutSeconds":95') : part));
  expect(changed).not.toEqual(parts);
  // A changed synthesis carries the changed definition's identity, derived as infra derives it.
  const hashed = /"hash":"([0-9a-f]{16})"/;
  const blank = (list: unknown[]) => list.map((part) => (typeof part === 'string' ? part.replace(hashed, '"hash":""') : part));
  expect(parts.join('').match(hashed)?.[1]).toBe(definitionIdentity({ 'Fn::Join': ['', blank(parts)] }));
  const identity = definitionIdentity({ 'Fn::Join': ['', blank(changed)] });
  machine.Properties!.DefinitionString!['Fn::Join'][1] = changed.map((part) => (typeof part === 'string' ? part.replace(hashed, `"hash":"${identity}"`) : part));
  return template;
}

async function reopenRun(stateDir: string, runId: string) {
  const { openLedger } = await import('../../cli/state.js');
  const { ledger, close } = await openLedger(stateDir);
  try {
    return (await ledger.getRun(runId))!;
  } finally {
    await close();
  }
}
