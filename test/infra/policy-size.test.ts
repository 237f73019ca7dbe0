import { Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { onlyReaders } from '../../infra/keys.js';
import { SavepointStack } from '../../infra/stack.js';
import { IAM_ROLE_INLINE_POLICIES_MAX_CHARS, SECRET_RESOURCE_POLICY_MAX_CHARS } from '../../lambdas/shared/limits.js';
import { deploy } from '../../local/aws/iam/deployment.js';
import { stackRoles } from '../../local/aws/iam/roles.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { assertionApp } from './example-template.js';

/**
 * IAM takes at most IAM_ROLE_INLINE_POLICIES_MAX_CHARS characters of inline policies in a role (white
 * space aside), Secrets Manager a resource policy of at most SECRET_RESOURCE_POLICY_MAX_CHARS
 * (lambdas/shared/limits.ts, with the pages that say so). Past them the deploy fails halfway: synth
 * says so first, counting each reference as the longest it may resolve to, and the twin refuses the
 * template it is given, measured on the values it resolves.
 */
const roleArn = (index: number) => `arn:aws:iam::111122223333:role/${'reader'.padEnd(60, 'x')}${index}`;

describe('policy sizes at synth', () => {
  it('fails the synth when a role\'s inline policies pass IAM\'s quota, naming the role', () => {
    const stack = new SavepointStack(assertionApp(), 'Big');
    const agent = stack.addAgent('Agent', { agentName: 'big', entry: EXAMPLE_AGENTS.refundReconciler });
    const callTool = agent.node.findChild('CallToolFunction') as unknown as { addToRolePolicy(statement: PolicyStatement): void };
    // Each statement about 100 characters: enough of them pass the quota.
    for (let index = 0; index < IAM_ROLE_INLINE_POLICIES_MAX_CHARS / 100; index++) callTool.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [`arn:aws:sqs:us-east-1:111122223333:queue-${index}`] }));
    expect(() => (stack.node.root as never as { synth(): unknown }).synth()).toThrow(
      new RegExp(`Big/Agent/CallToolFunctionServiceRole.*Maximum policy size of ${IAM_ROLE_INLINE_POLICIES_MAX_CHARS} bytes exceeded`),
    );
  });

  it('passes an agent\'s roles as they are, each well within the quota', () => {
    const stack = new SavepointStack(assertionApp(), 'Small');
    stack.addAgent('Agent', { agentName: 'small', entry: EXAMPLE_AGENTS.refundReconciler });
    expect(() => (stack.node.root as never as { synth(): unknown }).synth()).not.toThrow();
  });

  it('fails the synth when a secret\'s resource policy passes Secrets Manager\'s length, naming the secret', () => {
    const readers = (count: number) => {
      const stack = new Stack(assertionApp(), 'Secrets');
      const secret = new Secret(stack, 'Key');
      onlyReaders(secret, () => Array.from({ length: count }, (_, index) => roleArn(index)));
      return () => (stack.node.root as never as { synth(): unknown }).synth();
    };
    // An ARN is about 80 characters: a hundred fit, three hundred do not.
    expect(readers(100)).not.toThrow();
    expect(readers(300)).toThrow(new RegExp(`Secrets/Key.*PutResourcePolicy takes at most ${SECRET_RESOURCE_POLICY_MAX_CHARS}`));
  });
});

describe('policy sizes in the twin', () => {
  const template = (policy: unknown, statements: number): CfnTemplateJson =>
    ({
      Resources: {
        Role: {
          Type: 'AWS::IAM::Role',
          Properties: {
            AssumeRolePolicyDocument: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' }, Action: 'sts:AssumeRole' }] },
            Policies: [{ PolicyName: 'p', PolicyDocument: { Version: '2012-10-17', Statement: Array.from({ length: statements }, (_, index) => ({ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: `arn:aws:sqs:us-east-1:000000000000:queue-${index}` })) } }],
          },
        },
        Key: { Type: 'AWS::SecretsManager::Secret', Properties: {} },
        KeyPolicy: { Type: 'AWS::SecretsManager::ResourcePolicy', Properties: { SecretId: { Ref: 'Key' }, ResourcePolicy: policy } },
      },
    }) as CfnTemplateJson;
  const secretPolicy = (readers: number) => ({
    Version: '2012-10-17',
    Statement: [{ Effect: 'Deny', Principal: { AWS: '*' }, Action: 'secretsmanager:GetSecretValue', Resource: '*', Condition: { ArnNotLike: { 'aws:PrincipalArn': Array.from({ length: readers }, (_, index) => roleArn(index)) } } }],
  });
  const roles = (t: CfnTemplateJson) => stackRoles(t, deploy(t));

  it('refuses a role whose inline policies pass IAM\'s quota, as IAM refuses it', () => {
    expect(() => roles(template(secretPolicy(1), 10))).not.toThrow();
    expect(() => roles(template(secretPolicy(1), 200))).toThrow(new RegExp(`LimitExceeded: Maximum policy size of ${IAM_ROLE_INLINE_POLICIES_MAX_CHARS} bytes exceeded for role Role`));
  });

  it('refuses a secret whose resource policy passes Secrets Manager\'s length', () => {
    expect(() => roles(template(secretPolicy(100), 1))).not.toThrow();
    expect(() => roles(template(secretPolicy(300), 1))).toThrow(new RegExp(`resource policy of secret Key is \\d+ characters; PutResourcePolicy takes at most ${SECRET_RESOURCE_POLICY_MAX_CHARS}`));
  });
});
