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
import { environmentBytes } from '../../lambdas/shared/lambda-environment.js';
import { LAMBDA_ENVIRONMENT_MAX_BYTES, STACK_RESOURCE_QUOTA } from '../../lambdas/shared/limits.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { startHarness, type Harness } from '../support/refund-harness.js';
import { runEventsFunctionOf, streamedResponseLimits } from '../../local/aws/api-gateway-streaming.js';

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

  it("times a function whose template sets no Timeout at Lambda's default, 3 s: its run events stream ends there", async () => {
    const template = structuredClone(await cachedTemplate('refund-reconciler')) as CfnTemplateJson & { Resources: Record<string, { Properties: Record<string, unknown> }> };
    const logicalId = runEventsFunctionOf(template)!;
    expect(streamedResponseLimits(template).functionTimeoutMs).toBe(1_000 * (template.Resources[logicalId]!.Properties['Timeout'] as number));
    delete template.Resources[logicalId]!.Properties['Timeout'];
    expect(streamedResponseLimits(template)).toMatchObject({ functionTimeoutMs: 3_000, maxDurationMs: 3_000 });
  });
});

/**
 * A Lambda function's environment variables, 4 KB together as one JSON object (Lambda quotas,
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html; local/aws/lambda-environment-size.ts):
 * CloudFormation's create of such a function fails with Lambda's InvalidParameterValueException;
 * the local stack refuses the template at its start and at a deploy.
 */
describe("a Lambda function's environment: 4 KB", () => {
  /** The agent's template with CallTool's variables padded to measure `bytes` as Lambda counts them. */
  async function callToolEnvironmentOf(bytes: number): Promise<{ template: CfnTemplateJson; logicalId: string }> {
    const template = structuredClone(await cachedTemplate('refund-reconciler')) as CfnTemplateJson & { Resources: Record<string, { Properties: { Environment: { Variables: Record<string, unknown> } } }> };
    const logicalId = extractStateMachine(template).tasks['CallTool']!.functionLogicalId;
    const variables = template.Resources[logicalId]!.Properties.Environment.Variables;
    variables['PADDING'] = '';
    variables['PADDING'] = 'x'.repeat(bytes - environmentBytes(variables));
    expect(environmentBytes(variables)).toBe(bytes);
    return { template, logicalId };
  }

  it('refuses to start a stack whose CallTool function has 4,097 bytes of variables, naming it and the largest', async () => {
    const { template, logicalId } = await callToolEnvironmentOf(LAMBDA_ENVIRONMENT_MAX_BYTES + 1);
    await expect(startHarness({ recovery: false, template })).rejects.toMatchObject({
      name: 'InvalidParameterValueException',
      message: expect.stringMatching(new RegExp(`^Resource ${logicalId} \\(AWS::Lambda::Function\\): Lambda was unable to configure your environment variables .*measure 4097 bytes.*the largest are PADDING`)),
    });
  });

  it('refuses a deploy that would take CallTool over, and the stack keeps its version', async () => {
    const h = await startHarness({ recovery: false });
    cleanups.push(() => h.stack.close());
    const { template } = await callToolEnvironmentOf(LAMBDA_ENVIRONMENT_MAX_BYTES + 1);
    expect(() => h.stack.deploy(refundReconciler, { template, codeVersion: 'v2' })).toThrow(/exceeded the 4KB limit/);
    expect(h.stack.deploy(refundReconciler, { codeVersion: 'v2' })).toBe(2);
  });

  it('starts one with exactly 4,096 bytes', async () => {
    const h = await startHarness({ recovery: false, template: (await callToolEnvironmentOf(LAMBDA_ENVIRONMENT_MAX_BYTES)).template });
    cleanups.push(() => h.stack.close());
    expect(h.stack.stateMachineArn).toContain('stateMachine');
  });
});

/**
 * A REST API method's integration timeout, where API Gateway checks it (local/aws/api-gateway-integration-timeout.ts):
 * 50 ms to 29 s ("Amazon API Gateway quotas"), up to 15 minutes for a streamed response ("When you
 * use response streaming, you can configure the integration timeout up to 15 minutes"). A template
 * outside that range is refused at the stack's start, naming the method; a streamed integration
 * left at the 29 s default is cut there by the twin, as API Gateway would end it.
 */
describe("a REST API method's integration timeout", () => {
  /** The agent's template, the run events method and another method (the runs API's POST) with their integrations. */
  async function methods(): Promise<{ template: CfnTemplateJson; streamed: { id: string; integration: Record<string, unknown> }; buffered: { id: string; integration: Record<string, unknown> } }> {
    const template = structuredClone(await cachedTemplate('refund-reconciler')) as CfnTemplateJson & { Resources: Record<string, { Type: string; Properties: { Integration?: Record<string, unknown> } }> };
    const all = Object.entries(template.Resources).filter(([, resource]) => resource.Type === 'AWS::ApiGateway::Method' && resource.Properties.Integration);
    const pick = (streams: boolean) => {
      const [id, resource] = all.find(([, each]) => (each.Properties.Integration!['ResponseTransferMode'] === 'STREAM') === streams)!;
      return { id, integration: resource.Properties.Integration! };
    };
    return { template, streamed: pick(true), buffered: pick(false) };
  }

  it('refuses a buffered integration of 29,001 ms and a streamed one of 900,001 ms, naming the method', async () => {
    for (const [which, timeout, max] of [['buffered', 29_001, 29_000], ['streamed', 900_001, 900_000]] as const) {
      const found = await methods();
      found[which].integration['TimeoutInMillis'] = timeout;
      await expect(startHarness({ recovery: false, template: found.template }), which).rejects.toMatchObject({
        name: 'ValidationError',
        message: expect.stringContaining(`Resource ${found[which].id} (AWS::ApiGateway::Method): Integration.TimeoutInMillis must be from 50 to ${max} ms`),
      });
    }
  });

  it('cuts the run events stream at a streamed integration\'s timeout: left at the 29 s default, every stream ends there', async () => {
    const found = await methods();
    expect(streamedResponseLimits(found.template).maxDurationMs).toBe(15 * 60_000);
    delete found.streamed.integration['TimeoutInMillis'];
    expect(streamedResponseLimits(found.template).maxDurationMs).toBe(29_000);
  });
});
