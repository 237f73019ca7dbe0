/**
 * CloudFormation's 500-resources-per-stack quota, where CloudFormation checks it: at a create or an
 * update, before anything is deployed ("Resources: Maximum number of resources that you can declare
 * in your CloudFormation template: 500",
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html). Over
 * it, CloudFormation answers ValidationError "Template format error: Number of resources, N, is
 * greater than maximum allowed, 500"; the local stack refuses the same template the same way, at
 * its start and at a deploy.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { extractStateMachine, type CfnTemplateJson } from '../../local/template/asl.js';
import { STACK_RESOURCE_QUOTA } from '../../lambdas/shared/limits.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { startHarness, type Harness } from '../support/refund-harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The agent's template with topics added until it declares `resources` resources. */
async function templateWith(resources: number): Promise<CfnTemplateJson> {
  const template = structuredClone(await cachedTemplate('refund-reconciler')) as CfnTemplateJson & { Resources: Record<string, unknown> };
  const own = Object.keys(template.Resources).length;
  expect(own).toBeLessThan(resources);
  for (let index = own; index < resources; index++) template.Resources[`PaddingTopic${index}`] = { Type: 'AWS::SNS::Topic' };
  return template;
}

describe('500 resources per stack', () => {
  it('starts a stack of exactly 500 resources', async () => {
    const h: Harness = await startHarness({ recovery: false, template: await templateWith(STACK_RESOURCE_QUOTA) });
    cleanups.push(() => h.stack.close());
    expect(h.stack.stateMachineArn).toContain('stateMachine');
  });

  it('refuses to start a stack of 501, as CloudFormation refuses to create it', async () => {
    await expect(startHarness({ recovery: false, template: await templateWith(STACK_RESOURCE_QUOTA + 1) })).rejects.toMatchObject({
      name: 'ValidationError',
      message: 'Template format error: Number of resources, 501, is greater than maximum allowed, 500',
    });
  });

  it('refuses a deploy that would take the stack to 501, and the stack keeps its version', async () => {
    const h = await startHarness({ recovery: false });
    cleanups.push(() => h.stack.close());
    const next = await templateWith(STACK_RESOURCE_QUOTA + 1);
    expect(() => h.stack.deploy(refundReconciler, { template: next, codeVersion: 'v2' })).toThrow('Template format error: Number of resources, 501, is greater than maximum allowed, 500');
    // Nothing was published: the next deploy that fits is version 2.
    expect(h.stack.deploy(refundReconciler, { codeVersion: 'v2' })).toBe(2);
  });
});

/**
 * A Lambda function's Timeout, where CloudFormation checks it (Lambda's CreateFunction and
 * UpdateFunctionConfiguration: "The amount of time (in seconds) that Lambda allows a function to
 * run before stopping it. The default is 3 seconds. The maximum allowed value is 900 seconds",
 * https://docs.aws.amazon.com/lambda/latest/api/API_CreateFunction.html): a template handed to the
 * local stack with a longer one is refused at its start, as the stack would fail to deploy.
 */
describe("a Lambda function's Timeout: 1 to 900 seconds", () => {
  /** The agent's template with CallTool's function timed out after `seconds`. */
  async function callToolTimedOutAfter(seconds: number): Promise<{ template: CfnTemplateJson; logicalId: string }> {
    const template = structuredClone(await cachedTemplate('refund-reconciler')) as CfnTemplateJson & { Resources: Record<string, { Properties: Record<string, unknown> }> };
    const logicalId = extractStateMachine(template).tasks['CallTool']!.functionLogicalId;
    template.Resources[logicalId]!.Properties['Timeout'] = seconds;
    return { template, logicalId };
  }

  it('refuses to start a stack whose CallTool function runs 901 s, naming it', async () => {
    const { template, logicalId } = await callToolTimedOutAfter(901);
    await expect(startHarness({ recovery: false, template })).rejects.toMatchObject({
      name: 'ValidationError',
      message: `Resource ${logicalId} (AWS::Lambda::Function): Timeout must be a whole number of seconds from 1 to 900, got 901`,
    });
  });

  it('starts one whose CallTool function runs the longest Lambda allows, 900 s', async () => {
    const h = await startHarness({ recovery: false, template: (await callToolTimedOutAfter(900)).template });
    cleanups.push(() => h.stack.close());
    expect(h.stack.stateMachineArn).toContain('stateMachine');
  });
});
