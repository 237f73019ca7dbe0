/**
 * The twin enforces the synthesized template's IAM: each function's Step Functions calls are
 * signed with its own role's credentials and decided by that role's policies, the state machine
 * role's invokes likewise, and a refused call fails as AWS fails it. A grant taken out of the
 * template is a call refused.
 */
import { SFNClient, StartExecutionCommand, DescribeExecutionCommand, GetExecutionHistoryCommand } from '@aws-sdk/client-sfn';
import { afterEach, describe, expect, it } from 'vitest';
import { localAwsConfig } from '../../local/services/aws-config.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { waitFor } from '../support/agent-harness.js';
import { expiringApprovals } from '../support/manual-clock.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';
import { identityPolicies } from '../support/role-policies.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(template?: CfnTemplateJson, options: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
  const started = await startHarness({ recovery: false, ...(template && { template }), ...options });
  cleanups.push(() => started.stack.close());
  return started;
}

type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };

/** The template without one grant: `action` in the policy whose logical id starts with `policyPrefix`. */
async function withoutGrant(policyPrefix: string, action: string): Promise<CfnTemplateJson> {
  const template = structuredClone(await cachedTemplate('refund-reconciler')) as Template;
  let removed = 0;
  for (const { id, document: policyDocument } of identityPolicies(template.Resources as never)) {
    if (!id.startsWith(policyPrefix)) continue;
    const document = policyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] };
    document.Statement = document.Statement.flatMap((statement) => {
      const actions = [statement.Action].flat();
      if (!actions.includes(action)) return [statement];
      removed++;
      const rest = actions.filter((a) => a !== action);
      return rest.length > 0 ? [{ ...statement, Action: rest }] : [];
    });
  }
  expect(removed).toBe(1);
  return template as CfnTemplateJson;
}

/** The template without the state machine role's grants to invoke a function (its versions, or all of them), by logical id prefix. */
async function withoutInvokeOf(functionPrefix: string): Promise<CfnTemplateJson> {
  const template = structuredClone(await cachedTemplate('refund-reconciler')) as Template;
  let removed = 0;
  for (const { id, document: policyDocument } of identityPolicies(template.Resources as never)) {
    if (!id.startsWith('AgentStateMachineRole')) continue;
    const document = policyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] };
    document.Statement = document.Statement.flatMap((statement) => {
      if (![statement.Action].flat().includes('lambda:InvokeFunction')) return [statement];
      const kept = [statement.Resource].flat().filter((entry) => !JSON.stringify(entry).includes(functionPrefix));
      removed += [statement.Resource].flat().length - kept.length;
      return kept.length > 0 ? [{ ...statement, Resource: kept }] : [];
    });
  }
  expect(removed).toBeGreaterThan(0);
  return template as CfnTemplateJson;
}

describe("the twin's IAM", () => {
  it('is on by default: a whole run is authorized call by call, none refused', async () => {
    // On the manual clock: the run's two approvals expire at their deadline with no real wait.
    const h = await harness(undefined, expiringApprovals());
    const finished = await h.run({ runId: 'iam-on', input: sampleInput, config: { approvalTimeoutSeconds: 1 } });
    expect(finished.status).toBe('SUCCEEDED');
    const decisions = h.stack.engine.iamDecisions()!;
    // Every Task's invoke and every decision's batched read at least.
    expect(decisions.allowed).toBeGreaterThan(2 * finished.states['CallModel']!.invocations);
    expect(decisions.denied).toBe(0);
  });

  it("refuses the state machine's invoke of a function its role may no longer invoke: Lambda.AWSLambdaException, 403", async () => {
    const h = await harness(await withoutInvokeOf('AgentStartRunFunction'));
    const finished = await h.run({ runId: 'no-invoke', input: sampleInput });
    expect(finished.status).toBe('FAILED');
    const failed = finished.history.find((event) => event.type === 'TaskFailed')!;
    expect(failed.taskFailedEventDetails).toMatchObject({ error: 'Lambda.AWSLambdaException' });
    expect(failed.taskFailedEventDetails!.cause).toMatch(
      /^User: arn:aws:sts::000000000000:assumed-role\/AgentStateMachineRole\w+\/\w+ is not authorized to perform: lambda:InvokeFunction on resource: arn:aws:lambda:us-east-1:000000000000:function:AgentStartRunFunction\w+:1 because no identity-based policy allows the lambda:InvokeFunction action \(Service: AWSLambda; Status Code: 403; Error Code: AccessDeniedException/,
    );
    // The definition retries Lambda.AWSLambdaException as AWS's LambdaInvoke default does; each try is refused.
    expect(finished.states['StartRun']!.errors['Lambda.AWSLambdaException']).toBeGreaterThan(1);
    expect(h.stack.engine.iamDecisions()!.denied).toBe(finished.states['StartRun']!.errors['Lambda.AWSLambdaException']);
  });

  it("refuses a function's Step Functions call its role is not granted: AccessDeniedException reaches the step", async () => {
    // Handoff starts the successor (a low handoff threshold makes it hand off early). StartRun's
    // DescribeStateMachineForExecution, the call this test first removed, is gone (issue 20 item 4).
    const h = await harness(await withoutGrant('AgentHandoffFunctionServiceRole', 'states:StartExecution'));
    const finished = await h.run({ runId: 'no-start', input: sampleInput, config: { historyEventsBeforeHandoff: 50 } });
    expect(finished.status).toBe('FAILED');
    const failed = finished.history.find((event) => event.type === 'TaskFailed')!;
    expect(failed.taskFailedEventDetails).toMatchObject({ error: 'AccessDeniedException' });
    expect(failed.taskFailedEventDetails!.cause).toContain('assumed-role/AgentHandoffFunctionServiceRole');
    expect(failed.taskFailedEventDetails!.cause).toContain('is not authorized to perform: states:StartExecution on resource: arn:aws:states:us-east-1:000000000000:stateMachine:Savepoint-refund-reconciler');
  });

  it("knows each caller by its access key: a role's key may do only what its policies allow, the operator everything", async () => {
    const h = await harness();
    const iam = h.stack.iam!;
    const client = (credentials: { accessKeyId: string; secretAccessKey: string }) => {
      const made = new SFNClient({ ...localAwsConfig, credentials, endpoint: h.stack.endpoints.sfn, maxAttempts: 1 });
      cleanups.push(async () => made.destroy());
      return made;
    };
    const start = (name: string) => new StartExecutionCommand({ stateMachineArn: h.stack.stateMachineArn, name, input: JSON.stringify({ runId: name, input: sampleInput }) });

    // The expiry sweep's role has no states:StartExecution.
    await expect(client(iam.credentialsOf(Steps.ExpireApprovals)!).send(start('by-expiry'))).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringMatching(/assumed-role\/ControlPlaneExpireApprovalsFunctionServiceRole\w+\/ControlPlaneExpireApprovalsFunction\w+ is not authorized to perform: states:StartExecution on resource: arn:aws:states:us-east-1:000000000000:stateMachine:Savepoint-refund-reconciler because no identity-based policy allows/),
    });
    // The handoff's role has it, on the state machine's own ARN.
    const { executionArn } = await client(iam.credentialsOf(Steps.Handoff)!).send(start('by-handoff'));
    // The operator (the CLI's key, or any key that is no role's) is the account's administrator.
    expect(await h.stack.sfn.send(new DescribeExecutionCommand({ executionArn: executionArn! }))).toMatchObject({ status: expect.any(String) });
    await h.stack.engine.stopExecution(executionArn!);
    expect(h.stack.engine.iamDecisions()).toMatchObject({ denied: 1 });
  });

  it('refuses BudgetCheck a GetExecutionHistory: its grant is gone, the history bound is made from what the steps record (issue 34)', async () => {
    const h = await harness();
    const client = new SFNClient({ ...localAwsConfig, credentials: h.stack.iam!.credentialsOf(Steps.BudgetCheck)!, endpoint: h.stack.endpoints.sfn, maxAttempts: 1 });
    cleanups.push(async () => client.destroy());
    const executionArn = h.stack.stateMachineArn.replace(':stateMachine:', ':execution:').replace(/:live$/, '') + ':any-run';
    await expect(client.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1, reverseOrder: true }))).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringMatching(/assumed-role\/AgentBudgetCheckFunctionServiceRole\w+\/AgentBudgetCheckFunction\w+ is not authorized to perform: states:GetExecutionHistory on resource: arn:aws:states:us-east-1:000000000000:execution:Savepoint-refund-reconciler:any-run/),
    });
  });

  it("refuses the approval callback's SendTaskSuccess when its role loses the grant, so the decision is not delivered", async () => {
    const h = await harness(await withoutGrant('ControlPlaneStackApiApprovalCallbackFunctionServiceRole', 'states:SendTaskSuccess'));
    void h.run({ runId: 'no-callback', input: sampleInput, config: { approvalTimeoutSeconds: 3600 } });
    const approval = await waitFor(() => h.approvals[0]);
    const response = await fetch(`${h.stack.endpoints.approvals}/${approval.approvalId}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve' }) });
    expect(response.status).toBeGreaterThanOrEqual(500);
    expect(h.stack.engine.iamDecisions()!.denied).toBeGreaterThanOrEqual(1);
  });

  it('starts a run through the runs API as its own role, and refuses the start when that role loses states:StartExecution', async () => {
    const runs = (h: Harness, runId: string) =>
      fetch(h.stack.endpoints.runs, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ runId, input: sampleInput, config: { approvalTimeoutSeconds: 3600 } }) });
    const granted = await harness();
    expect((await runs(granted, 'by-runs-api')).status).toBe(202);
    expect(granted.stack.engine.iamDecisions()).toMatchObject({ denied: 0 });
    const refused = await harness(await withoutGrant('ControlPlaneStackApiRunsApiFunctionServiceRole', 'states:StartExecution'));
    expect((await runs(refused, 'no-runs-api')).status).toBeGreaterThanOrEqual(500);
    expect(refused.stack.engine.iamDecisions()!.denied).toBe(1);
    expect(await refused.stack.ledger.getRun('no-runs-api')).toBeUndefined();
  });

  it("prunes versions as the pruner's role, and is refused the delete when that role loses states:DeleteStateMachineVersion", async () => {
    const prune = async (h: Harness) => {
      for (const codeVersion of ['v2', 'v3']) h.stack.deploy(h.stack.agent, { codeVersion });
      return h.stack.pruneVersions({ keep: 1, graceMs: 0 });
    };
    const granted = await harness();
    expect((await prune(granted)).deleted).toEqual([`${granted.stack.stateMachineArn}:1`, `${granted.stack.stateMachineArn}:2`]);
    expect(granted.stack.engine.iamDecisions()).toMatchObject({ denied: 0 });
    const refused = await harness(await withoutGrant('ControlPlanePruneVersionsFunctionServiceRole', 'states:DeleteStateMachineVersion'));
    await expect(prune(refused)).rejects.toMatchObject({ name: 'AccessDeniedException', message: expect.stringMatching(/ControlPlanePruneVersionsFunction\w+ is not authorized to perform: states:DeleteStateMachineVersion on resource: arn:aws:states:us-east-1:000000000000:stateMachine:Savepoint-refund-reconciler/) });
  });
});
