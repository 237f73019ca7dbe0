/**
 * Recovery and the kill by StopExecution, once per stack (issue 34, a shared control plane): two
 * agents of one app, each run in the twin on the template CloudFormation would deploy for it (the
 * parent's shared resources and the agent's own: bench/deploy.ts agentView). Their executions' ends
 * reach the stack's one RecoveryRule and one ExecutionAbortedRule — the same resources in both
 * views, matched by their patterns as EventBridge matches them (local/aws/event-bus.ts) — and the
 * one function behind each, which loads no agent's code: a failed run of each agent is resumed, and
 * a stopped one of each, whose input leaves the run id to the agent's rule, is marked killed.
 */
import { SFNClient, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { agentView } from '../../bench/deploy.js';
import { fleetOnce } from '../support/fleet-once.js';
import { statusChangeRules } from '../../local/aws/event-bus.js';
import { localAwsConfig } from '../../local/services/aws-config.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { waitFor } from '../support/agent-harness.js';
import { flakyModel as outage } from '../support/flaky-model.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let views: CfnTemplateJson[];
beforeAll(async () => {
  const fleet = await fleetOnce(2, false);
  views = [agentView(fleet, 'Agent0') as CfnTemplateJson, agentView(fleet, 'Agent1') as CfnTemplateJson];
}, 120_000);

const agentNamed = (index: number) => ({ ...refundReconciler, name: `agent-${index}` });
const unattendedDay = makeSampleDay(7, { plain: 2, already_refunded: 0, mismatch: 1, large: 0 });
const noBreaker = { failures: 1_000, windowMs: 1_000, openMs: 1, probeLeaseMs: 1 };

/** A model endpoint that answers 503 while `down()` says so, closed after each test. */
const flakyModel = (target: () => string, down: (request: number) => boolean) => outage(target, down, (close) => cleanups.push(close));

describe("two agents of a stack, their executions' ends through the stack's one rule of each kind", () => {
  it('holds one recovery rule and one stop rule for both agents, each to the one shared function, matched by the prefix of their state machines', () => {
    const [zero, one] = views.map((view) => statusChangeRules(view).filter((rule) => rule.steps.some((step) => step === Steps.RecoverRun || step === Steps.ExecutionStopped)));
    expect(zero!.map((rule) => rule.id)).toHaveLength(2);
    expect(one!.map((rule) => rule.id)).toEqual(zero!.map((rule) => rule.id));
    expect(zero!.map((rule) => rule.steps).sort()).toEqual([[Steps.ExecutionStopped], [Steps.RecoverRun]]);
    expect(JSON.stringify(zero!.map((rule) => rule.pattern))).toContain('{"prefix":"arn:aws:states:us-east-1:000000000000:stateMachine:Fleet-"}');
  });

  it.each([0, 1])('resumes a failed run of agent %i with a new execution of the same run id', async (index) => {
    let simulated = '';
    // The 4th to the 10th model request fail: seven in a row exhaust CallModel's six retries.
    const modelUrl = await flakyModel(() => simulated, (request) => request >= 4 && request <= 10);
    const h: Harness = await startHarness({ template: views[index]!, agent: agentNamed(index) as never, modelUrl, day: unattendedDay, breaker: noBreaker });
    cleanups.push(() => h.stack.close());
    simulated = h.stack.endpoints.model;
    const first = await h.run({ runId: `outage-${index}`, input: { date: unattendedDay.date } });
    expect(first.status).toBe('FAILED');
    const recovery = await waitFor(() => h.stack.engine.listExecutions().executions.find((execution) => execution.name === `outage-${index}-recovery-1`));
    expect(await h.stack.engine.waitForExecution(recovery.executionArn)).toMatchObject({ status: 'SUCCEEDED' });
    expect(await h.stack.ledger.getRun(`outage-${index}`)).toMatchObject({ agent: `agent-${index}`, status: 'succeeded', executions: [first.executionArn, recovery.executionArn] });
    // Every call authorized as the roles of that template: the shared RecoverRun's included.
    expect(h.stack.engine.iamDecisions()).toMatchObject({ denied: 0 });
  }, 120_000);

  it.each([0, 1])('kills a stopped run of agent %i whose input does not name it (StartRun noted it under the execution)', async (index) => {
    const h: Harness = await startHarness({ template: views[index]!, agent: agentNamed(index) as never });
    cleanups.push(() => h.stack.close());
    const finished = h.run({ input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } }, `unnamed-${index}`);
    const approval = await waitFor(() => h.approvals[0]);
    const run = (await h.stack.ledger.getRun(approval.runId))!;
    expect(await h.stack.ledger.runOfExecution(run.executionArn)).toBe(approval.runId);
    const sfn = new SFNClient({ ...localAwsConfig, endpoint: h.stack.endpoints.sfn });
    try {
      await sfn.send(new StopExecutionCommand({ executionArn: run.executionArn, error: 'Ops.Stop', cause: 'by hand' }));
    } finally {
      sfn.destroy();
    }
    expect((await finished).status).toBe('ABORTED');
    const killed = await waitFor(async () => {
      const now = await h.stack.ledger.getRun(approval.runId);
      return now?.status !== 'running' && now;
    });
    expect(killed).toMatchObject({ agent: `agent-${index}`, status: 'killed', stopReason: expect.stringContaining('killed by StopExecution') });
    expect(h.stack.engine.iamDecisions()).toMatchObject({ denied: 0 });
  }, 120_000);
});
