import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AccountRootPrincipal, ArnPrincipal, Role } from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { macKey } from '../../infra/keys.js';
import { assertionApp } from './example-template.js';

/** Issue 36 finding 5: a key's policy is the one infra/keys.ts writes, whatever grants are made on the key later. */
describe('macKey', () => {
  it('keeps its policy as written: a grant made on the key elsewhere adds no principal to it', () => {
    const stack = new Stack(assertionApp(), 'Keys');
    const role = new Role(stack, 'User', { assumedBy: new AccountRootPrincipal() });
    const key = macKey(stack, 'Key', 'signs', [{ sid: 'UserSigns', principals: [role], actions: ['kms:GenerateMac'] }]);
    key.grant(new ArnPrincipal('arn:aws:iam::111111111111:role/elsewhere'), 'kms:GenerateMac');
    key.grantVerifyMac(new AccountRootPrincipal());
    const [resource] = Object.values(Template.fromStack(stack).findResources('AWS::KMS::Key')) as { Properties: { KeyPolicy: { Statement: { Sid: string; Principal: unknown; Action: unknown }[] } } }[];
    const statements = resource!.Properties.KeyPolicy.Statement;
    expect(statements.map((statement) => statement.Sid)).toEqual(['AccountAdministers', 'UserSigns']);
    expect(JSON.stringify(statements)).not.toContain('elsewhere');
    expect(JSON.stringify(statements)).not.toContain('kms:VerifyMac');
  });
});
