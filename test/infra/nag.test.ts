import { App, CfnResource, Stack, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_AGENTS, exampleStack } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * An app that synthesizes as `cdk synth` does, CDK's built-in CloudFormation validation included,
 * with its findings as errors (by default they are only warnings).
 */
function app(): App {
  const outdir = mkdtempSync(join(tmpdir(), 'savepoint-nag-'));
  outdirs.push(outdir);
  return new App({ outdir, context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:validateAgainstDefaultRules': true } });
}

/** Every finding of both packs that nothing acknowledges, as `rule  path` lines (readable when the test fails). */
function unacknowledged(scope: App): string[] {
  return [new AwsSolutionsChecks(), new ServerlessChecks()].flatMap((pack) =>
    pack.validateScope(scope).violations.flatMap((violation) => violation.violatingResources.map((resource) => `${violation.ruleName}  ${resource.constructPath}`)),
  );
}

/** Every acknowledgment recorded in the tree: rule id → reason, with where. */
function acknowledgments(scope: IConstruct): { path: string; id: string; reason: string }[] {
  return scope.node
    .findAll()
    .flatMap((node) =>
      node.node.metadata
        .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
        .flatMap((entry) => Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({ path: node.node.path, id: id.replace(/^annotation::/i, ''), reason }))),
    );
}

/**
 * The example app and its acknowledgments (a list read off its construct tree): built once for the
 * file (its construction is a third of a second of CPU). The acknowledgments are read before any
 * test runs; the first test then synthesizes the app, the one test that does anything with it.
 */
let example: App;
let exampleAcks: { path: string; id: string; reason: string }[];
beforeAll(() => {
  example = app();
  exampleStack(example);
  exampleAcks = acknowledgments(example);
});
const exampleAcknowledgments = () => structuredClone(exampleAcks);

// Whole-app synthesis with both packs is CPU-bound: on a 2-core machine at load 14 the first test took 94 s, past the 60 s default.
describe('cdk-nag (AwsSolutions and Serverless packs)', { timeout: 240_000 }, () => {
  it('finds nothing unacknowledged in the example app, and its synthesis passes the validation plugins and CloudFormation validation', () => {
    expect(unacknowledged(example)).toEqual([]);
    Validations.of(example).addPlugins(new AwsSolutionsChecks(example), new ServerlessChecks(example));
    expect(() => example.synth()).not.toThrow();
  });

  it('fails a synthesis whose template CloudFormation validation refuses (the check above can fail)', () => {
    const broken = app();
    new CfnResource(new Stack(broken, 'Broken'), 'Queue', { type: 'AWS::SQS::Queue', properties: { VisibilityTimeout: 'soon' } });
    expect(() => broken.synth()).toThrow(/VisibilityTimeout: 'soon' is not of type 'integer'/);
  });

  it('finds nothing unacknowledged in an app of two agents, one without a schedule or an approval API', () => {
    const two = app();
    const stack = new SavepointStack(two, 'Two');
    stack.addAgent('Refunds', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler });
    stack.addAgent('Triage', { agentName: 'support-triage', entry: EXAMPLE_AGENTS.supportTriage, approvalApi: false });
    expect(unacknowledged(two)).toEqual([]);
  });

  it('finds nothing unacknowledged in an app of agents in nested stacks, and its synthesis passes CloudFormation validation', () => {
    const nested = app();
    const stack = new SavepointStack(nested, 'Nested', { agentsInNestedStacks: true });
    stack.addAgent('Refunds', { agentName: 'refund-reconciler', entry: EXAMPLE_AGENTS.refundReconciler });
    stack.addAgent('Triage', { agentName: 'support-triage', entry: EXAMPLE_AGENTS.supportTriage });
    expect(unacknowledged(nested)).toEqual([]);
    expect(() => nested.synth()).not.toThrow();
  });

  it('acknowledges each finding on the construct it concerns, with a reason a reviewer can check', () => {
    const acks = exampleAcknowledgments();
    expect(acks.length).toBeGreaterThan(0);
    for (const { path, id, reason } of acks) {
      expect(reason.length, `${id} on ${path}`).toBeGreaterThanOrEqual(60);
      // Never the whole stack or app: each acknowledgment sits on an agent or below it.
      expect(path.split('/').length, `${id} on ${path}`).toBeGreaterThanOrEqual(2);
    }
    // Encryption, TLS, point-in-time recovery, key rotation and runtimes are fixed, never acknowledged.
    expect(acks.filter(({ id }) => /SQS2|SQS4|SNS2|SNS3|DDB3|KMS5|-L1/.test(id))).toEqual([]);
  });

  it('acknowledges only these kinds of findings (a new kind is a decision for review)', () => {
    const kinds = [...new Set(exampleAcknowledgments().map(({ id }) => id.replace(/\[.*\]$/, '')))];
    expect(kinds.sort()).toEqual(
      [
        'AwsSolutions-APIG2',
        'AwsSolutions-APIG3',
        // The approval page's routes: authorized by the signed link, not by IAM or Cognito.
        'AwsSolutions-APIG4',
        'AwsSolutions-COG4',
        'AwsSolutions-IAM4',
        'AwsSolutions-IAM5',
        // The approval link key: rotating it would void the links approvers hold.
        'AwsSolutions-SMG4',
        'AwsSolutions-SQS3',
        'Serverless-LambdaDLQ',
        // The roles' statements are inline (infra/inline-policy-role.ts), where this rule reads them: each wildcard is an IAM5 above.
        'Serverless-LambdaStarPermissions',
        'Serverless-SQSRedrivePolicy',
      ].sort(),
    );
  });
});
