/**
 * Versions and aliases at the local Step Functions endpoint, as AWS reports them:
 * - a start on an alias ARN runs the version the alias routes to, and the execution is associated
 *   with both ("How Step Functions associates executions with a version or alias",
 *   https://docs.aws.amazon.com/step-functions/latest/dg/execution-alias-version-associate.html);
 * - DescribeExecution returns the version or alias ARN the execution was started with
 *   (https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html), and
 *   so does ExecutionStarted (API_ExecutionStartedEventDetails: stateMachineAliasArn, stateMachineVersionArn);
 * - the "Step Functions Execution Status Change" event's detail "provides the same information as
 *   the DescribeExecution API" (https://docs.aws.amazon.com/step-functions/latest/dg/cw-events.html):
 *   its stateMachineArn is the state machine's own ARN (executions live under it, whatever they were
 *   started on), so the recovery, aborted and alarm rules, which match detail.stateMachineArn on the
 *   unqualified ARN, see executions started on the alias.
 */
import { DescribeExecutionCommand, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { resolveTemplateValue, type CfnTemplateJson } from '../../local/template/asl.js';
import { executionStatusChange } from '../../local/services/status-events.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { waitFor } from '../support/agent-harness.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';
import { checkEventPattern, matchesEventPattern } from '../../local/aws/event-bus.js';

let h: Harness;
let template: CfnTemplateJson;
beforeAll(async () => {
  h = await startHarness({ recovery: false });
  template = (await cachedTemplate('refund-reconciler')) as CfnTemplateJson;
});
afterAll(() => h.stack.close());

const startOn = (harness: Harness) => (stateMachineArn: string, name: string) =>
  harness.stack.sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify({ runId: name, input: sampleInput, config: { approvalTimeoutSeconds: 3600 } }) }));
const start = (stateMachineArn: string, name: string) => startOn(h)(stateMachineArn, name);

describe('versions and aliases at the local endpoint', () => {
  it('starts on the alias: the execution runs the version the alias routes to and is associated with both', async () => {
    const live = `${h.stack.stateMachineArn}:live`;
    const { executionArn } = await start(live, 'on-live');
    // Executions are named under the state machine itself.
    expect(executionArn).toBe(`${h.stack.stateMachineArn.replace(':stateMachine:', ':execution:')}:on-live`);
    expect(await h.stack.sfn.send(new DescribeExecutionCommand({ executionArn }))).toMatchObject({
      stateMachineArn: h.stack.stateMachineArn,
      stateMachineAliasArn: live,
      stateMachineVersionArn: `${h.stack.stateMachineArn}:1`,
    });
    const [started] = h.stack.engine.getExecutionHistory(executionArn!);
    expect(started!.executionStartedEventDetails).toMatchObject({ stateMachineAliasArn: live, stateMachineVersionArn: `${h.stack.stateMachineArn}:1` });
    // Task events carry the pinned Lambda version ARN each Task invokes.
    const scheduled = await waitFor(() => h.stack.engine.getExecutionHistory(executionArn!).find((event) => event.type === 'TaskScheduled'));
    expect(JSON.parse(scheduled.taskScheduledEventDetails!.parameters).FunctionName).toMatch(/^arn:aws:lambda:us-east-1:000000000000:function:AgentStartRunFunction\w+:1$/);
    await h.stack.engine.stopExecution(executionArn!);
  });

  it('after a deploy the alias routes to the new version; an execution keeps the version it started on; a version ARN starts on that version', async () => {
    // A stack of its own: the deploy moves the alias, which the other tests read at version 1.
    const deployed = await startHarness({ recovery: false });
    try {
      const { stateMachineArn } = deployed.stack;
      const start = startOn(deployed);
      const { executionArn: before } = await start(`${stateMachineArn}:live`, 'before-deploy');
      expect(deployed.stack.deploy(refundReconciler)).toBe(2);
      const { executionArn: after } = await start(`${stateMachineArn}:live`, 'after-deploy');
      const { executionArn: pinned } = await start(`${stateMachineArn}:1`, 'on-version-1');
      const describe = (executionArn: string | undefined) => deployed.stack.sfn.send(new DescribeExecutionCommand({ executionArn }));
      expect(await describe(before)).toMatchObject({ stateMachineVersionArn: `${stateMachineArn}:1`, stateMachineAliasArn: `${stateMachineArn}:live` });
      expect(await describe(after)).toMatchObject({ stateMachineVersionArn: `${stateMachineArn}:2`, stateMachineAliasArn: `${stateMachineArn}:live` });
      const onVersion = await describe(pinned);
      expect(onVersion).toMatchObject({ stateMachineVersionArn: `${stateMachineArn}:1` });
      expect(onVersion.stateMachineAliasArn).toBeUndefined(); // a version start is associated with no alias
      for (const arn of [before, after, pinned]) await deployed.stack.engine.stopExecution(arn!);
    } finally {
      await deployed.stack.close();
    }
  });

  it('refuses an alias the state machine does not have', async () => {
    await expect(start(`${h.stack.stateMachineArn}:staging`, 'on-staging')).rejects.toMatchObject({ name: 'StateMachineDoesNotExist' });
  });

  it("emits the status change event with the state machine's own ARN, which the template's rules match, and the version and alias ARNs", async () => {
    const { executionArn } = await start(`${h.stack.stateMachineArn}:live`, 'stopped-on-live');
    await h.stack.engine.stopExecution(executionArn!);
    const event = executionStatusChange(h.stack.engine, h.stack.engine.describeExecution(executionArn!), new Date());
    expect(event.detail).toMatchObject({
      stateMachineArn: h.stack.stateMachineArn,
      stateMachineAliasArn: `${h.stack.stateMachineArn}:live`,
      stateMachineVersionArn: expect.stringMatching(/:\d+$/),
      status: 'ABORTED',
    });
    // Every rule on this event in the template (aborted, recovery: the stack's, matching its state
    // machines by ARN prefix) matches the ARN the detail carries, as EventBridge matches it.
    const rules = Object.entries(template.Resources ?? {}).filter(([, r]) => r.Type === 'AWS::Events::Rule' && JSON.stringify(r.Properties?.['EventPattern'] ?? '').includes('Execution Status Change'));
    expect(rules.length).toBeGreaterThanOrEqual(2);
    for (const [id, rule] of rules) {
      const pattern = checkEventPattern(resolveTemplateValue(rule.Properties!['EventPattern'], template, { where: id }), id);
      // The same execution's event with a status the rule hears (recovery hears FAILED and TIMED_OUT).
      const status = (pattern['detail'] as { status: string[] }).status[0];
      expect(matchesEventPattern(pattern, { ...event, detail: { ...event.detail, status } }), id).toBe(true);
    }
  });
});
