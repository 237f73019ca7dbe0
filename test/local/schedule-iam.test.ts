/**
 * The nightly schedule's start, as EventBridge makes it: the rule's target role's credentials,
 * StartExecution on the target ARN (the `live` alias), the scheduled event as input. Step
 * Functions authorizes a start on an alias against the state machine's own ARN ("Authorization for
 * versions and aliases", https://docs.aws.amazon.com/step-functions/latest/dg/auth-version-alias.html),
 * so a role granted only the alias ARN — the template before issue 20's item 2 was fixed — is refused.
 */
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { SavepointStack } from '../../infra/stack.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { localAwsConfig } from '../../local/services/aws-config.js';
import { assertionApp } from '../support/assertion-app.js';
import { scheduledEvent, startHarness } from '../support/refund-harness.js';
import { identityPolicies } from '../support/role-policies.js';

function synthesize(): CfnTemplateJson {
  const app = assertionApp();
  const stack = new SavepointStack(app, 'Savepoint');
  stack.addAgent('Agent', { agentName: 'refund-reconciler', entry: 'local-agent.ts', schedule: Schedule.cron({ hour: '2', minute: '0' }) });
  return app.synth().getStackArtifact(stack.artifactId).template as CfnTemplateJson;
}

const template = synthesize();

/** The template with the schedule role's grant as it was before the fix: StartExecution on the alias ARN only. */
function withAliasGrantOnly(original: CfnTemplateJson): CfnTemplateJson {
  const narrowed = structuredClone(original) as { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };
  let replaced = 0;
  for (const { id, document: policyDocument } of identityPolicies(narrowed.Resources as never)) {
    if (!id.startsWith('ControlPlaneScheduleRoleDefaultPolicy')) continue;
    const document = policyDocument as { Statement: { Action: string | string[]; Effect: string; Resource: unknown }[] };
    const starts = document.Statement.filter((statement) => [statement.Action].flat().includes('states:StartExecution'));
    const alias = starts.flatMap((statement) => [statement.Resource].flat()).find((entry) => JSON.stringify(entry).includes(':live'));
    replaced += starts.length;
    document.Statement = [...document.Statement.filter((statement) => !starts.includes(statement)), { Action: 'states:StartExecution', Effect: 'Allow', Resource: alias }];
  }
  expect(replaced).toBeGreaterThan(0);
  return narrowed as CfnTemplateJson;
}

async function scheduleOn(stackTemplate: CfnTemplateJson) {
  const h = await startHarness({ template: stackTemplate, recovery: false });
  const [schedule] = h.stack.iam!.roles.ruleTargets.filter((target) => target.ruleId.startsWith('AgentSchedule'));
  const eventBridge = new SFNClient({ ...localAwsConfig, credentials: h.stack.iam!.roleCredentials(schedule!.roleId), endpoint: h.stack.endpoints.sfn, maxAttempts: 1 });
  cleanups.push(async () => {
    eventBridge.destroy();
    await h.stack.close();
  });
  const start = () => eventBridge.send(new StartExecutionCommand({ stateMachineArn: schedule!.targetArn, name: randomUUID(), input: JSON.stringify(scheduledEvent) }));
  return { h, schedule: schedule!, start };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the schedule's StartExecution, with IAM enforced", () => {
  it('targets the live alias with a role of its own, and starts the nightly run on the alias', async () => {
    const { h, schedule, start } = await scheduleOn(template);
    expect(schedule.targetArn).toBe(`${h.stack.stateMachineArn}:live`);
    const { executionArn } = await start();
    expect(await h.stack.sfn.send(new DescribeExecutionCommand({ executionArn }))).toMatchObject({ stateMachineAliasArn: `${h.stack.stateMachineArn}:live`, stateMachineVersionArn: `${h.stack.stateMachineArn}:1` });
    await h.stack.engine.stopExecution(executionArn!);
  });

  it("is refused with the grant as it was before the fix: the role may start the alias ARN, the start is authorized on the state machine's", async () => {
    const { h, start } = await scheduleOn(withAliasGrantOnly(template));
    await expect(start()).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining(`is not authorized to perform: states:StartExecution on resource: ${h.stack.stateMachineArn} because no identity-based policy allows`),
    });
    expect(h.stack.engine.listExecutions().executions).toHaveLength(0);
  });
});
