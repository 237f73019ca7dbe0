/**
 * A code-changing deploy, locally, as CloudFormation does it: the v2 template replaces the roles'
 * policies at once, its Lambda versions are new (the next numbers), v1's are kept (CDK retains
 * them), and the alias moves to the new state machine version. With IAM enforced, a run parked on
 * an approval under v1 must still finish on v1 after the deploy: its Tasks invoke v1's Lambda
 * versions, with the state machine role's policy of v2.
 *
 * The second test puts back the grant the template had before issue 20's item 1 was fixed (the
 * role may invoke only the current deploy's version ARNs): the twin refuses the v1 run then, as AWS
 * would have, which is the fault no local test could see before.
 */
import { StartExecutionCommand } from '@aws-sdk/client-sfn';
import { afterEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { SavepointStack } from '../../infra/stack.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { postDecision, waitFor } from '../support/agent-harness.js';
import { assertionApp } from '../support/assertion-app.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';
import { identityPolicies } from '../support/role-policies.js';

/** The stack as `cdk deploy` ships it with this code version (the version resources change with it). */
function synthesize(codeVersion: string): CfnTemplateJson {
  const app = assertionApp();
  const stack = new SavepointStack(app, 'Savepoint', { codeVersion });
  stack.addAgent('Agent', { agentName: 'refund-reconciler', entry: 'local-agent.ts' });
  return app.synth().getStackArtifact(stack.artifactId).template as CfnTemplateJson;
}

const v1 = synthesize('v1');
const v2 = synthesize('v2');

/**
 * v2 with the state machine role's invoke grant as it was before issue 20's item 1: each Task's
 * own version only (`Ref` of v2's version resources), nothing for v1's.
 */
function withCurrentVersionsOnly(template: CfnTemplateJson): CfnTemplateJson {
  const narrowed = structuredClone(template) as { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };
  const versions = Object.keys(narrowed.Resources).filter((id) => narrowed.Resources[id]!.Type === 'AWS::Lambda::Version');
  let replaced = 0;
  for (const { id, document: policyDocument } of identityPolicies(narrowed.Resources as never)) {
    if (!id.startsWith('AgentStateMachineRole')) continue;
    const document = policyDocument as { Statement: { Action: string | string[] }[] };
    const others = document.Statement.filter((statement) => ![statement.Action].flat().includes('lambda:InvokeFunction'));
    replaced += document.Statement.length - others.length;
    document.Statement = [...others, ...versions.map((version) => ({ Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: { Ref: version } }))];
  }
  expect(replaced).toBeGreaterThan(0);
  return narrowed as CfnTemplateJson;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Starts a run on v1, parks it on its approval, deploys v2, approves: how the v1 execution ends. */
async function parkDeployApprove(next: CfnTemplateJson = v2): Promise<{ h: Harness; executionArn: string; invokedAfterDeploy: string[] }> {
  const h = await startHarness({ template: v1, codeVersion: 'v1', recovery: false });
  cleanups.push(() => h.stack.close());
  expect(Object.keys(v1.Resources ?? {}).filter((id) => id.includes('CurrentVersion'))).not.toEqual(Object.keys(next.Resources ?? {}).filter((id) => id.includes('CurrentVersion')));
  const { executionArn } = h.stack.engine.startExecution({ name: 'parked-on-v1', input: { runId: 'parked', input: sampleInput, config: { approvalTimeoutSeconds: 3600 } } });
  const approval = await waitFor(() => h.approvals[0]);
  await waitFor(() => h.stack.engine.getExecutionHistory(executionArn).some((event) => event.type === 'TaskSubmitted'));
  const eventsBefore = h.stack.engine.eventCount(executionArn);

  expect(h.stack.deploy(refundReconciler, { template: next, codeVersion: 'v2' })).toBe(2);
  expect((await postDecision(h.stack, approval.approvalId, { decision: 'approve' })).status).toBe(200);
  await approveTheRest(h, executionArn, 1);
  const invokedAfterDeploy = h.stack.engine
    .getExecutionHistory(executionArn)
    .slice(eventsBefore)
    .flatMap((event) => (event.taskScheduledEventDetails ? [JSON.parse(event.taskScheduledEventDetails.parameters).FunctionName as string] : []));
  return { h, executionArn, invokedAfterDeploy };
}

/** Approves each later approval of the run as it comes, until the execution ends. */
async function approveTheRest(h: Harness, executionArn: string, approved: number): Promise<void> {
  for (;;) {
    const next = await waitFor(() => (h.stack.engine.describeExecution(executionArn).status !== 'RUNNING' ? 'ended' : h.approvals[approved]));
    if (next === 'ended') return;
    approved++;
    expect((await postDecision(h.stack, next.approvalId, { decision: 'approve' })).status).toBe(200);
  }
}

describe('deploying v2 under a run parked on v1, with IAM enforced', () => {
  it('the v1 run, approved after the deploy, finishes on v1, invoking v1’s Lambda versions, and nothing is refused', async () => {
    const { h, executionArn, invokedAfterDeploy } = await parkDeployApprove();
    expect(h.stack.engine.describeExecution(executionArn)).toMatchObject({ status: 'SUCCEEDED', stateMachineVersionArn: `${h.stack.stateMachineArn}:1` });
    expect(invokedAfterDeploy.length).toBeGreaterThan(0);
    for (const arn of invokedAfterDeploy) expect(arn).toMatch(/:function:\w+:1$/);
    expect(h.stack.engine.iamDecisions()).toMatchObject({ denied: 0 });
    // A new run starts on the alias, now on v2, and invokes v2's versions.
    const { executionArn: freshArn } = await h.stack.sfn.send(new StartExecutionCommand({ stateMachineArn: `${h.stack.stateMachineArn}:live`, name: 'fresh', input: JSON.stringify({ runId: 'fresh', input: sampleInput, config: { approvalTimeoutSeconds: 3600 } }) }));
    await approveTheRest(h, freshArn!, h.approvals.length);
    const fresh = h.stack.engine.describeExecution(freshArn!);
    expect(fresh).toMatchObject({ status: 'SUCCEEDED', stateMachineVersionArn: `${h.stack.stateMachineArn}:2` });
    const invoked = h.stack.engine.getExecutionHistory(freshArn!).flatMap((event) => (event.taskScheduledEventDetails ? [JSON.parse(event.taskScheduledEventDetails.parameters).FunctionName as string] : []));
    for (const arn of invoked) expect(arn).toMatch(/:function:\w+:2$/);
  });

  it('with the grant as it was before the fix (current versions only), the v1 run is refused its own Lambda versions after the deploy (issue 20, item 1)', async () => {
    const { h, executionArn, invokedAfterDeploy } = await parkDeployApprove(withCurrentVersionsOnly(v2));
    const ended = h.stack.engine.describeExecution(executionArn);
    expect(ended.status).toBe('FAILED');
    expect(invokedAfterDeploy[0]).toMatch(/:function:\w+:1$/);
    const refused = h.stack.engine.getExecutionHistory(executionArn).find((event) => event.taskFailedEventDetails?.error === 'Lambda.AWSLambdaException')!;
    expect(refused.taskFailedEventDetails!.cause).toMatch(/is not authorized to perform: lambda:InvokeFunction on resource: arn:aws:lambda:us-east-1:000000000000:function:\w+:1 because no identity-based policy allows/);
    expect(h.stack.engine.iamDecisions()!.denied).toBeGreaterThan(0);
  });
});
