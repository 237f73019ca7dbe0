/**
 * An upgrade with runs in flight: 0.7.0's deployed definition, then this version's. 0.8.0 dropped
 * the BudgetCheck state (CallModel makes an execution's first decision), but an execution started
 * on 0.7.0's version runs 0.7.0's definition to its end — and each successor it hands off to starts
 * on that same version (lambdas/steps/handoff.ts), whose first state after SeedHistory is
 * BudgetCheck. So the new template must keep the BudgetCheck function, its role's grants and the
 * state machine's permission to invoke its versions (infra/agent-state-machine.ts); a template
 * that dropped any of them would fail such a run on AWS. The twin deploys the new template as
 * CloudFormation would (its policies replace the old, IAM enforced) and keeps each version's own
 * definition: here the run parked on 0.7.0's version hands off after the deploy, and its successors
 * run BudgetCheck on the new template's grants.
 *
 * The fixture is 0.7.0's synthesized template of the refund reconciler (`cachedTemplate` at
 * c0a91b6, gzipped). The twin runs one codebase for every version, so this shows the deploy's
 * functions, roles and grants, not 0.7.0's code.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { executionChain } from '../../lambdas/guards/history.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { postDecision, waitFor } from '../support/agent-harness.js';
import { duplicatePayments, sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

const template070 = JSON.parse(gunzipSync(readFileSync(new URL('./fixtures/refund-reconciler-0.7.0.template.json.gz', import.meta.url))).toString('utf8')) as CfnTemplateJson;

let h: Harness;
afterEach(async () => h?.stack.close());

const statesEntered = (executionArn: string) => h.stack.engine.getExecutionHistory(executionArn).flatMap((event) => (event.stateEnteredEventDetails ? [event.stateEnteredEventDetails.name] : []));

describe("an upgrade from 0.7.0's definition with a run in flight", () => {
  it("finishes the run on 0.7.0's version after the deploy, its hand-offs' successors entering BudgetCheck on the new template's grants", async () => {
    h = await startHarness({ recovery: false, template: template070 });
    // A hand-off at almost every decision once the execution made progress (the bound is conservative: lambdas/guards/history.ts).
    const { executionArn: first } = h.stack.engine.startExecution({ name: 'parked-on-0.7.0', input: { runId: 'upgrade', input: sampleInput, config: { approvalTimeoutSeconds: 3600, historyEventsBeforeHandoff: 100 } } });
    const approval = await waitFor(() => h.approvals[0]);
    expect(statesEntered(first)).toContain('BudgetCheck');

    // This code on 0.7.0's template: StartRun's check that the run id was not pruned (0.18.0) is
    // refused, its role without the grant, and the run is created as 0.7.0 created it.
    expect(h.stack.engine.iamDecisions()).toMatchObject({ denied: 1 });
    // The deploy: this version's template, as CloudFormation replaces the old (policies included).
    expect(h.stack.deploy(refundReconciler, { template: (await cachedTemplate('refund-reconciler')) as CfnTemplateJson })).toBe(2);
    const beforeDeploy = new Set((await h.stack.ledger.getRun('upgrade'))!.executions);
    expect((await postDecision(h.stack, approval.approvalId, { decision: 'approve' })).status).toBe(200);
    for (let decided = 1; ; decided++) {
      const next = await waitFor(async () => ((await h.stack.ledger.getRun('upgrade'))?.status !== 'running' ? 'ended' : h.approvals[decided]));
      if (next === 'ended') break;
      expect((await postDecision(h.stack, next.approvalId, { decision: 'approve' })).status).toBe(200);
    }

    const run = (await h.stack.ledger.getRun('upgrade'))!;
    expect(run).toMatchObject({ status: 'succeeded' });
    // Successors started after the deploy, each on 0.7.0's version, each entering BudgetCheck first.
    const after = executionChain(run).filter((execution) => execution.via === 'handoff' && !beforeDeploy.has(execution.executionArn));
    expect(after.length).toBeGreaterThan(0);
    for (const { executionArn } of after) {
      expect(await h.stack.engine.waitForExecution(executionArn)).toMatchObject({ status: 'SUCCEEDED' });
      expect(h.stack.engine.describeExecution(executionArn).stateMachineVersionArn).toBe(`${h.stack.stateMachineArn}:1`);
      expect(statesEntered(executionArn).slice(0, 5)).toEqual(['StartRun', 'StartOrResume', 'SeedHistory', 'BudgetCheck', 'ContinueOrStop']);
    }
    // Every call since authorized under the new template's policies; each refund paid once.
    expect(h.stack.engine.iamDecisions()).toMatchObject({ denied: 1 });
    expect(h.stack.world.payments.refunds().length).toBeGreaterThan(0);
    expect(duplicatePayments(h.stack)).toEqual([]);

    // A run started now goes on the new version: no BudgetCheck state.
    const { executionArn: fresh } = h.stack.engine.startExecution({ name: 'on-this-version', input: { runId: 'fresh', input: sampleInput, config: { approvalTimeoutSeconds: 1 } } });
    await waitFor(() => (statesEntered(fresh).includes('CallModel') ? true : undefined));
    expect(h.stack.engine.describeExecution(fresh).stateMachineVersionArn).toBe(`${h.stack.stateMachineArn}:2`);
    expect(statesEntered(fresh).slice(0, 3)).toEqual(['StartRun', 'StartOrResume', 'CallModel']);
  }, 120_000);
});
