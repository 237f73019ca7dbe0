import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { exampleTemplate } from './example-template.js';
import { Steps } from '../../lambdas/shared/steps.js';

type Resource = { Type: string; Properties: Record<string, any> };
let template: Template;
let resources: Record<string, Resource>;

beforeAll(() => {
  template = exampleTemplate();
  resources = template.toJSON().Resources as Record<string, Resource>;
});

const functionOf = (step: string) => Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.SAVEPOINT_STEP === step)!;
const envOf = (step: string) => functionOf(step).Properties.Environment.Variables as Record<string, unknown>;
/** Every IAM statement on the role of the function that runs `step`. */
function statementsOf(step: string): { Action: string | string[]; Resource: unknown }[] {
  const roleId = functionOf(step).Properties.Role['Fn::GetAtt'][0] as string;
  return Object.values(resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && (r.Properties.Roles as { Ref: string }[]).some((role) => role.Ref === roleId))
    .flatMap((r) => r.Properties.PolicyDocument.Statement);
}
const actionsOf = (step: string) => new Set(statementsOf(step).flatMap((s) => [s.Action].flat()));
const resourceIdOf = (type: string) => Object.entries(resources).find(([, r]) => r.Type === type)![0];
const ALL_STEPS = Object.values(Steps);
const keyIdOf = (description: string) => Object.entries(resources).find(([, r]) => r.Type === 'AWS::KMS::Key' && r.Properties.Description === description)![0];
/** Whether the function of `step` may call `action` on the KMS key `keyId`. */
const mayUseKey = (step: string, action: string, keyId: string) =>
  statementsOf(step).some((s) => [s.Action].flat().includes(action) && JSON.stringify(s.Resource).includes(`"${keyId}"`));
const secretIdOf = (description: string) => Object.entries(resources).find(([, r]) => r.Type === 'AWS::SecretsManager::Secret' && r.Properties.Description === description)![0];
/** Whether the function of `step` may read the secret `secretId`. */
const readsSecret = (step: string, secretId: string) =>
  statementsOf(step).some((s) => [s.Action].flat().includes('secretsmanager:GetSecretValue') && JSON.stringify(s.Resource).includes(`"${secretId}"`));

describe('approvals in the template', () => {
  it('sends the approval-requested event from RequestApproval only, to the default bus', () => {
    expect(envOf(Steps.RequestApproval)).toMatchObject({ APPROVAL_EVENT_BUS: 'default' });
    const put = statementsOf(Steps.RequestApproval).find((s) => s.Action === 'events:PutEvents')!;
    expect(JSON.stringify(put.Resource)).toContain(':event-bus/default');
    for (const step of ALL_STEPS.filter((s) => s !== Steps.RequestApproval)) expect(actionsOf(step).has('events:PutEvents')).toBe(false);
  });

  it('has an approvers topic that only RequestApproval publishes to, over TLS', () => {
    const topicId = resourceIdOf('AWS::SNS::Topic');
    expect(envOf(Steps.RequestApproval)['APPROVAL_TOPIC_ARN']).toEqual({ Ref: topicId });
    const publishers = ALL_STEPS.filter((step) => actionsOf(step).has('sns:Publish'));
    expect(publishers).toEqual([Steps.RequestApproval]);
    template.hasResourceProperties('AWS::SNS::TopicPolicy', { PolicyDocument: { Statement: [{ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }] } });
  });

  it('keeps the link key in a generated secret read by RequestApproval and the callback only', () => {
    const secretId = secretIdOf('HMAC key of the signed approval links');
    template.hasResourceProperties('AWS::SecretsManager::Secret', { GenerateSecretString: { PasswordLength: 64, ExcludePunctuation: true } });
    const readers = ALL_STEPS.filter((step) => readsSecret(step, secretId));
    expect(readers.sort()).toEqual([Steps.ApprovalCallback, Steps.RequestApproval].sort());
    for (const step of readers) expect(envOf(step)['APPROVAL_LINK_SECRET_ARN']).toEqual({ Ref: secretId });
    expect(envOf(Steps.RequestApproval)).toMatchObject({ APPROVERS: { Ref: 'Approvers' }, APPROVAL_PAGE_URL: expect.anything() });
    expect(JSON.stringify(envOf(Steps.RequestApproval)['APPROVAL_PAGE_URL'])).toContain('/decide');
  });

  it('keeps the ledger seal key in a generated secret read by every function that uses the ledger, and by no other', () => {
    const secretId = secretIdOf('HMAC key the ledger records are sealed with');
    expect(resources[secretId]!.Properties).toMatchObject({ GenerateSecretString: { PasswordLength: 64, ExcludePunctuation: true } });
    const ledgerUsers = ALL_STEPS.filter((step) => envOf(step)['TABLE_NAME'] !== undefined);
    expect(ledgerUsers.length).toBeGreaterThan(5);
    expect(ALL_STEPS.filter((step) => readsSecret(step, secretId)).sort()).toEqual(ledgerUsers.sort());
    for (const step of ledgerUsers) expect(envOf(step)['LEDGER_SEAL_SECRET_ARN']).toEqual({ Ref: secretId });
  });

  it('signs decisions with a KMS HMAC key: the callback may GenerateMac, CallTool and BudgetCheck (extensions) only VerifyMac, nobody else either', () => {
    template.hasResourceProperties('AWS::KMS::Key', { KeySpec: 'HMAC_256', KeyUsage: 'GENERATE_VERIFY_MAC' });
    const decisionKey = keyIdOf('Signs approval decisions (only the approval callback can)');
    expect(ALL_STEPS.filter((step) => mayUseKey(step, 'kms:GenerateMac', decisionKey))).toEqual([Steps.ApprovalCallback]);
    expect(ALL_STEPS.filter((step) => mayUseKey(step, 'kms:VerifyMac', decisionKey)).sort()).toEqual([Steps.ApprovalCallback, Steps.CallTool, Steps.BudgetCheck].sort());
    expect(envOf(Steps.BudgetCheck)['DECISION_KEY_ID']).toEqual(envOf(Steps.ApprovalCallback)['DECISION_KEY_ID']);
    expect(envOf(Steps.ApprovalCallback)).toMatchObject({ DECISION_KEY_ID: expect.anything(), SEPARATION_OF_DUTIES: 'true' });
    expect(envOf(Steps.CallTool)['DECISION_KEY_ID']).toEqual(envOf(Steps.ApprovalCallback)['DECISION_KEY_ID']);
  });

  it('serves the approval page without IAM (the signed link is the credential) and keeps the API behind IAM', () => {
    const methods = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGateway::Method');
    const resourcePaths = Object.fromEntries(Object.entries(resources).filter(([, r]) => r.Type === 'AWS::ApiGateway::Resource').map(([id, r]) => [id, r.Properties.PathPart as string]));
    const routes = methods.map((m) => `${m.Properties.HttpMethod} ${resourcePaths[m.Properties.ResourceId.Ref] ?? '/'} ${m.Properties.AuthorizationType}`).sort();
    expect(routes).toEqual(
      [
        'GET approvals AWS_IAM',
        'GET {approvalId} AWS_IAM',
        'POST {approvalId} AWS_IAM',
        'GET {approvalId} NONE',
        'POST {approvalId} NONE',
        'POST runs AWS_IAM',
      ].sort(),
    );
    const decide = Object.entries(resourcePaths).find(([, path]) => path === 'decide')![0];
    const pageRoutes = methods.filter((m) => resources[m.Properties.ResourceId.Ref]!.Properties.ParentId?.Ref === decide);
    expect(pageRoutes.map((m) => m.Properties.AuthorizationType)).toEqual(['NONE', 'NONE']);
  });

  // Issue 20 item 5 / issue 26: the starter of a run is what IAM proved, signed where only the runs API can sign.
  it('signs who started a run with a KMS HMAC key of its own: the runs API may GenerateMac, StartRun only VerifyMac, nobody else either', () => {
    const starterKey = keyIdOf('Signs who started a run (only the runs API can)');
    expect(resources[starterKey]!.Properties).toMatchObject({ KeySpec: 'HMAC_256', KeyUsage: 'GENERATE_VERIFY_MAC' });
    expect(resources[starterKey]).toMatchObject({ DeletionPolicy: 'Retain' });
    expect(ALL_STEPS.filter((step) => mayUseKey(step, 'kms:GenerateMac', starterKey))).toEqual([Steps.RunsApi]);
    expect(ALL_STEPS.filter((step) => mayUseKey(step, 'kms:VerifyMac', starterKey))).toEqual([Steps.StartRun]);
    expect(envOf(Steps.RunsApi)['STARTER_KEY_ID']).toEqual({ 'Fn::GetAtt': [starterKey, 'Arn'] });
    expect(envOf(Steps.StartRun)['STARTER_KEY_ID']).toEqual({ 'Fn::GetAtt': [starterKey, 'Arn'] });
    // The runs API signs starters and starts runs; of the ledger it only reads a fork's parent run
    // (GetItem, the seal key to verify it), and no decision key.
    expect(envOf(Steps.RunsApi)['TABLE_NAME']).toBeDefined();
    expect([...actionsOf(Steps.RunsApi)].filter((action) => !action.startsWith('xray:') && !action.startsWith('logs:')).sort()).toEqual([
      'dynamodb:GetItem', 'kms:GenerateMac', 'secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue', 'states:StartExecution',
    ]);
  });

  it('lets only the runs API, the schedule and the run\'s own functions (Handoff, recovery, the sweeper) start the state machine', () => {
    const starters = Object.entries(resources)
      .filter(([, r]) => r.Type === 'AWS::IAM::Policy' && (r.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).some((s) => [s.Action].flat().includes('states:StartExecution')))
      .flatMap(([, r]) => (r.Properties.Roles as { Ref: string }[]).map((role) => role.Ref));
    const stepOfRole = (roleId: string) => Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Role?.['Fn::GetAtt']?.[0] === roleId)?.Properties.Environment?.Variables?.SAVEPOINT_STEP ?? roleId;
    expect(starters.map(stepOfRole).map((name: string) => name.replace(/^RefundReconciler/, '').replace(/[0-9A-F]{8}$/, '')).sort()).toEqual(
      [Steps.Handoff, Steps.RecoverRun, Steps.RunsApi, Steps.Sweep, 'ScheduleRole'].sort(),
    );
  });
});
