import { beforeAll, describe, expect, it } from 'vitest';
import { Template } from 'aws-cdk-lib/assertions';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { assertionApp, exampleTemplate } from './example-template.js';

/**
 * Issue 20, item 8. The approval page (`/decide/{approvalId}`) is open to anyone with a link; the
 * rest of the approval API is IAM-signed. API Gateway applies per-stage throttling per method, and
 * method-level settings (`MethodSettings`, by resource path and HTTP method) override the stage's
 * for a method ("Throttle requests to your REST APIs for better throughput in API Gateway":
 * "Per-API, per-stage throttling limits are applied at the API method level for a stage. You can
 * configure the same settings for all methods, or configure different throttle settings for each
 * method", https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-request-throttling.html).
 * So the page's methods carry limits of their own, the signed routes keep the stage's, and a WAF
 * web ACL (rate-based rules per source IP, which a stage throttle cannot do) can be attached.
 */
type Setting = { ResourcePath: string; HttpMethod: string; ThrottlingRateLimit?: number; ThrottlingBurstLimit?: number };

let stage: { Properties: { MethodSettings: Setting[] } };

beforeAll(() => {
  stage = Object.values(exampleTemplate().findResources('AWS::ApiGateway::Stage'))[0] as typeof stage;
});

const settingOf = (path: string, method: string) => stage.Properties.MethodSettings.find((s) => s.ResourcePath === path && s.HttpMethod === method);

describe('the approval API throttle', () => {
  it('gives each method of the public page a throttle of its own, lower than the signed routes\'', () => {
    const all = settingOf('/*', '*')!;
    expect(all).toMatchObject({ ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 });
    for (const method of ['GET', 'POST']) {
      // API Gateway's MethodSettings path: "/" is written "~1".
      const page = settingOf('/~1decide~1{approvalId}', method);
      expect(page, method).toBeDefined();
      expect(page!.ThrottlingRateLimit!, method).toBeLessThan(all.ThrottlingRateLimit!);
      expect(page!.ThrottlingBurstLimit!, method).toBeLessThan(all.ThrottlingBurstLimit!);
    }
    // The signed routes keep the stage's limits: no setting of their own.
    expect(stage.Properties.MethodSettings.filter((s) => s.ResourcePath.startsWith('/~1approvals'))).toEqual([]);
  });

  it('attaches a WAF web ACL to the stage when one is given, and none by default', () => {
    expect(Object.keys(exampleTemplate().findResources('AWS::WAFv2::WebACLAssociation'))).toEqual([]);
    const stack = new SavepointStack(assertionApp(), 'Waf');
    const webAclArn = 'arn:aws:wafv2:us-east-1:123456789012:regional/webacl/approvals/0000';
    stack.addAgent('Refunds', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler, approvalPage: { webAclArn } });
    const template = Template.fromStack(stack);
    const [association] = Object.values(template.findResources('AWS::WAFv2::WebACLAssociation'));
    expect(association!.Properties.WebACLArn).toBe(webAclArn);
    expect(JSON.stringify(association!.Properties.ResourceArn)).toMatch(/\/restapis\/.*\/stages\//);
  });

  it('fails at synth when the page throttle is not a positive rate and burst', () => {
    const stack = new SavepointStack(assertionApp(), 'Bad');
    expect(() => stack.addAgent('Refunds', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler, approvalPage: { throttle: { rateLimit: 0, burstLimit: 5 } } })).toThrow(/approvalPage\.throttle\.rateLimit must be a positive number, got 0/);
  });

  it("fails at synth on a page throttle or web ACL the stage would refuse at deploy, naming the agent's construct id, the field and the value", () => {
    const add = (approvalPage: object) => () => new SavepointStack(assertionApp(), 'Bad').addAgent('Refunds', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler, approvalPage });
    // These synthesized: a ThrottlingRateLimit of null (Infinity in JSON), a ThrottlingBurstLimit of 2.5 (an Integer), a WebACLArn of "approvals-acl".
    expect(add({ throttle: { rateLimit: Infinity, burstLimit: 10 } })).toThrow('DurableAgent Refunds: approvalPage.throttle.rateLimit must be a positive number, got Infinity');
    expect(add({ throttle: { rateLimit: 5, burstLimit: 2.5 } })).toThrow('DurableAgent Refunds: approvalPage.throttle.burstLimit must be a whole number of requests, got 2.5');
    expect(add({ webAclArn: 'approvals-acl' })).toThrow(/^DurableAgent Refunds: approvalPage\.webAclArn: expected a regional WAFv2 web ACL's ARN .*, got "approvals-acl"$/);
    // A CloudFront web ACL (global) cannot be associated with a regional API's stage.
    expect(add({ webAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/approvals/0000' })).toThrow(/approvalPage\.webAclArn: expected a regional WAFv2 web ACL's ARN/);
  });
});
