import { Match, Template } from 'aws-cdk-lib/assertions';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertionApp, exampleTemplate } from './example-template.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { identityPolicies, roleStatements } from '../support/role-policies.js';

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
  return roleStatements(resources, roleId);
}
const actionsOf = (step: string) => new Set(statementsOf(step).flatMap((s) => [s.Action].flat()));
const resourceIdOf = (type: string) => Object.entries(resources).find(([, r]) => r.Type === type)![0];
// The steps the example deploys a function for (it has no `batches`, so no batch item function: test/infra/batches.test.ts has that one).
const ALL_STEPS = Object.values(Steps).filter((step) => step !== Steps.BatchItem);
const keyIdOf = (description: string) => Object.entries(resources).find(([, r]) => r.Type === 'AWS::KMS::Key' && r.Properties.Description === description)![0];
type KeyStatement = { Sid?: string; Effect: string; Principal: { AWS?: unknown; Service?: unknown }; Action: string | string[]; Condition?: unknown };
const keyStatements = (keyId: string) => resources[keyId]!.Properties.KeyPolicy.Statement as KeyStatement[];
/** Whether the key policy of `keyId` lets the role of the function of `step` call `action` (the key policy decides: infra/keys.ts). */
const mayUseKey = (step: string, action: string, keyId: string) => {
  const roleId = functionOf(step).Properties.Role['Fn::GetAtt'][0] as string;
  return keyStatements(keyId).some((s) => s.Effect === 'Allow' && [s.Action].flat().includes(action) && JSON.stringify(s.Principal.AWS ?? null).includes(`"${roleId}"`));
};
/** Whether the function of `step` is granted `action` on the key in its own (identity) policy. */
const grantedKey = (step: string, keyId: string) => statementsOf(step).some((s) => [s.Action].flat().some((a) => a.startsWith('kms:')) && JSON.stringify(s.Resource).includes(`"${keyId}"`));
const ROOT = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':root']] };
/** The role ARN of the function of `step`, as a policy names it. */
const roleArnOf = (step: string) => ({ 'Fn::GetAtt': [functionOf(step).Properties.Role['Fn::GetAtt'][0], 'Arn'] });
/** The principals the resource policy of secret `secretId` spares from its Deny of GetSecretValue. */
function secretReaders(secretId: string): unknown[] {
  const policy = Object.values(resources).find((r) => r.Type === 'AWS::SecretsManager::ResourcePolicy' && r.Properties.SecretId?.Ref === secretId)!;
  const statements = policy.Properties.ResourcePolicy.Statement as { Effect: string; Principal: unknown; Action: string; Condition: { ArnNotLike: { 'aws:PrincipalArn': unknown[] } } }[];
  expect(statements).toHaveLength(1);
  expect(statements[0]).toMatchObject({ Effect: 'Deny', Principal: { AWS: '*' }, Action: 'secretsmanager:GetSecretValue' });
  return statements[0]!.Condition.ArnNotLike['aws:PrincipalArn'];
}
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

  it('signs decisions with a KMS HMAC key: the callback may GenerateMac, CallTool, BudgetCheck and CallModel (extensions) only VerifyMac, nobody else either', () => {
    template.hasResourceProperties('AWS::KMS::Key', { KeySpec: 'HMAC_256', KeyUsage: 'GENERATE_VERIFY_MAC' });
    const decisionKey = keyIdOf('Signs approval decisions (only the approval callback can)');
    expect(ALL_STEPS.filter((step) => mayUseKey(step, 'kms:GenerateMac', decisionKey))).toEqual([Steps.ApprovalCallback]);
    expect(ALL_STEPS.filter((step) => mayUseKey(step, 'kms:VerifyMac', decisionKey)).sort()).toEqual([Steps.ApprovalCallback, Steps.CallTool, Steps.BudgetCheck, Steps.CallModel].sort());
    expect(envOf(Steps.BudgetCheck)['DECISION_KEY_ID']).toEqual(envOf(Steps.ApprovalCallback)['DECISION_KEY_ID']);
    expect(envOf(Steps.CallModel)['DECISION_KEY_ID']).toEqual(envOf(Steps.ApprovalCallback)['DECISION_KEY_ID']);
    // The policy is the agent's settings in the stack's API functions (separation of duties on: the default, not written).
    expect(envOf(Steps.ApprovalCallback)).toMatchObject({ DECISION_KEY_ID: expect.anything() });
    expect(envOf(Steps.ApprovalCallback)['SEPARATION_OF_DUTIES']).toBeUndefined();
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
        'GET runs AWS_IAM',
        'GET {runId} AWS_IAM',
        'POST cancel AWS_IAM',
        'GET events AWS_IAM',
        'POST batches AWS_IAM',
        'GET {batchId} AWS_IAM',
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
      'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue', 'states:StartExecution', 'states:StopExecution',
    ]);
  });

  it('lets only the runs API, the schedule and the run\'s own functions (Handoff, recovery, the sweeper) start the state machine', () => {
    const starters = identityPolicies(resources)
      .filter((policy) => (policy.document.Statement as { Action: string | string[] }[]).some((s) => [s.Action].flat().includes('states:StartExecution')))
      .flatMap((policy) => policy.roles);
    const stepOfRole = (roleId: string) => Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Role?.['Fn::GetAtt']?.[0] === roleId)?.Properties.Environment?.Variables?.SAVEPOINT_STEP ?? roleId;
    expect(starters.map(stepOfRole).map((name: string) => name.replace(/^(RefundReconciler|ControlPlane)/, '').replace(/[0-9A-F]{8}$/, '')).sort()).toEqual(
      [Steps.Handoff, Steps.RecoverRun, Steps.RunsApi, Steps.Sweep, 'ScheduleRole'].sort(),
    );
  });

  // Issue 36 finding 5: the keys' own policies name their users; the account administers and cannot sign.
  it('gives every KMS key a key policy in which the account only administers (no kms:*, no cryptographic operation) and each use names its principals', () => {
    const keys = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::KMS::Key');
    expect(keys.length).toBe(4); // decision, starter, approvals topic, alarm topic
    for (const [id] of keys) {
      const statements = keyStatements(id);
      const root = statements.filter((s) => JSON.stringify(s.Principal).includes(':root'));
      expect(root, id).toEqual([expect.objectContaining({ Sid: 'AccountAdministers', Principal: { AWS: ROOT } })]);
      const rootActions = [root[0]!.Action].flat();
      for (const action of rootActions) expect(action, `${id}: ${action}`).toMatch(/^kms:(CreateAlias|DeleteAlias|UpdateAlias|Describe\*|List\*|Get\*|Put\*|Update\*|Enable\*|Disable\*|RevokeGrant|RetireGrant|TagResource|UntagResource|ScheduleKeyDeletion|CancelKeyDeletion)$/);
      for (const statement of statements) expect([statement.Action].flat(), id).not.toContain('kms:*');
    }
    // The MAC keys' uses are in their key policies, not in the functions' own policies.
    for (const description of ['Signs approval decisions (only the approval callback can)', 'Signs who started a run (only the runs API can)']) {
      const key = keyIdOf(description);
      expect(ALL_STEPS.filter((step) => grantedKey(step, key))).toEqual([]);
    }
  });

  it('encrypts the approvals topic with a customer-managed key that SNS and RequestApproval (through SNS only) may use', () => {
    const [topicId, topic] = Object.entries(resources).find(([, r]) => r.Type === 'AWS::SNS::Topic' && r.Properties.DisplayName === 'savepoint approvals')!;
    const keyId = topic.Properties.KmsMasterKeyId['Fn::GetAtt'][0] as string;
    expect(resources[keyId]!.Properties).toMatchObject({ EnableKeyRotation: true });
    const uses = keyStatements(keyId).filter((s) => s.Sid !== 'AccountAdministers');
    expect(uses).toEqual([
      expect.objectContaining({ Principal: { AWS: roleArnOf(Steps.RequestApproval) }, Action: ['kms:GenerateDataKey*', 'kms:Decrypt'], Condition: { StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['sns.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } } } }),
      expect.objectContaining({ Principal: { Service: 'sns.amazonaws.com' }, Action: ['kms:GenerateDataKey*', 'kms:Decrypt'] }),
    ]);
    expect(envOf(Steps.RequestApproval)['APPROVAL_TOPIC_ARN']).toEqual({ Ref: topicId });
  });

  it("denies the link key and the seal key to every principal but the functions that use them (the secrets' resource policies)", () => {
    const linkKey = secretIdOf('HMAC key of the signed approval links');
    expect(secretReaders(linkKey).sort(byJson)).toEqual([Steps.RequestApproval, Steps.ApprovalCallback].map(roleArnOf).sort(byJson));
    // The seal key is read by every agent's functions: one ARN pattern, the path of the stack's
    // step functions' roles, keeps its policy one size whatever the number of agents (20,480
    // characters at most: an ARN per role filled it at about 17 agents).
    const sealKey = secretIdOf('HMAC key the ledger records are sealed with');
    expect(secretReaders(sealKey)).toEqual([{ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::', { Ref: 'AWS::AccountId' }, ':role/savepoint/Savepoint/Ledger/*']] }]);
    const ledgerUsers = ALL_STEPS.filter((step) => envOf(step)['TABLE_NAME'] !== undefined);
    // Exactly the ledger's users are under that path.
    const underPath = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::IAM::Role' && r.Properties.Path === '/savepoint/Savepoint/Ledger/').map(([id]) => id);
    expect(underPath.sort()).toEqual(ledgerUsers.map((step) => roleArnOf(step)['Fn::GetAtt'][0] as string).sort());
    // Past the Deny, each role's own policy decides: only the ledger's users are granted the key.
    const sealArn = JSON.stringify({ Ref: sealKey });
    const granted = ALL_STEPS.filter((step) => functionOf(step) && statementsOf(step).some((statement) => [statement.Action].flat().includes('secretsmanager:GetSecretValue') && JSON.stringify(statement.Resource) === sealArn));
    expect(granted.sort()).toEqual([...ledgerUsers].sort());
  });
});

const byJson = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b));

// Issue 36 finding 6: links reach their approver only: on the encrypted topic, each approver's subscription filtered to their own.
describe('approvers named at synth', () => {
  it('get an e-mail subscription each, filtered on the approver attribute to their own messages; the topic comes with the links', () => {
    const stack = new SavepointStack(assertionApp(), 'Named');
    stack.addAgent('Agent', { agentName: 'named', entry: EXAMPLE_AGENTS.refundReconciler, approvals: { approvers: ['ada@example.com', 'bob@example.com'] } });
    const template = Template.fromStack(stack);
    const subscriptions = Object.values(template.findResources('AWS::SNS::Subscription')).map((r) => r.Properties as { Protocol: string; Endpoint: string; FilterPolicy: unknown });
    expect(subscriptions.sort((a, b) => a.Endpoint.localeCompare(b.Endpoint))).toEqual([
      expect.objectContaining({ Protocol: 'email', Endpoint: 'ada@example.com', FilterPolicy: { approver: ['ada@example.com'] } }),
      expect.objectContaining({ Protocol: 'email', Endpoint: 'bob@example.com', FilterPolicy: { approver: ['bob@example.com'] } }),
    ]);
    template.hasResourceProperties('AWS::SNS::Topic', { DisplayName: 'savepoint approvals', KmsMasterKeyId: Match.anyValue() });
  });

  it('fails the synth when the topic is turned off with approvers: their links would reach nobody', () => {
    const stack = new SavepointStack(assertionApp(), 'NoTopic');
    expect(() => stack.addAgent('Agent', { agentName: 'no-topic', entry: EXAMPLE_AGENTS.refundReconciler, approvals: { approvers: ['ada@example.com'], topic: false } })).toThrow(/approvals\.topic: false leaves the approvers' links no way to reach them/);
  });

  it("fails the synth on an approvals setting it cannot take, naming the agent's construct id, the prop and the value", () => {
    const stack = new SavepointStack(assertionApp(), 'BadApprovals');
    const add = (id: string, approvals: object) => () => stack.addAgent(id, { agentName: id.toLowerCase(), entry: EXAMPLE_AGENTS.refundReconciler, approvals });
    // This failed with "approver.trim is not a function", naming nothing.
    expect(add('Numbered', { approvers: ['ada@example.com', 5] })).toThrow('DurableAgent Numbered: approvals.approvers[1]: expected an address (an e-mail address, a chat handle), got 5');
    expect(add('Single', { approvers: 5 })).toThrow('DurableAgent Single: approvals.approvers: expected a list of addresses or one comma-separated string, got 5');
    // The others named the prop, not the agent.
    expect(add('Second', { secondApproverAboveMinor: -1 })).toThrow('DurableAgent Second: approvals.secondApproverAboveMinor must be a whole amount in minor units ≥ 0, got -1');
    expect(add('Topic', { approvers: ['ada@example.com'], topic: false })).toThrow(/^DurableAgent Topic: approvals\.topic: false leaves/);
    expect(add('Key', { decisionKeyVersion: 0 })).toThrow('DurableAgent Key: approvals.decisionKeyVersion must be a whole number ≥ 1, got 0');
    expect(add('Previous', { previousDecisionKeys: ['alias/old'] })).toThrow('DurableAgent Previous: approvals.previousDecisionKeys: expected a KMS key ARN, got "alias/old"');
    expect(add('People', { approverPrincipals: { ada: [] } })).toThrow('DurableAgent People: approvals.approverPrincipals.ada: name at least one principal');
  });
});

// Issue 36 item 7: KMS rotates no HMAC key; rotating the decision key is a new key, the old one still verifying its decisions.
describe('rotating the decision key', () => {
  it('makes a new key for a new decisionKeyVersion and tells every verifier the previous keys', () => {
    const previous = 'arn:aws:kms:us-east-1:123456789012:key/aaaaaaaa-0000-0000-0000-000000000001';
    const stack = new SavepointStack(assertionApp(), 'Rotated');
    stack.addAgent('Agent', { agentName: 'rotated', entry: EXAMPLE_AGENTS.refundReconciler, approvals: { decisionKeyVersion: 2, previousDecisionKeys: [previous] } });
    const resources = Template.fromStack(stack).toJSON().Resources as Record<string, Resource>;
    const keyIds = Object.entries(resources).filter(([, r]) => r.Type === 'AWS::KMS::Key' && r.Properties.Description?.startsWith('Signs approval decisions')).map(([id]) => id);
    expect(keyIds).toEqual([expect.stringMatching(/^ControlPlaneDecisionKeyV2/)]);
    const variables = (step: string) => Object.values(resources).find((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.SAVEPOINT_STEP === step)!.Properties.Environment.Variables;
    for (const step of [Steps.CallTool, Steps.BudgetCheck]) expect(variables(step), step).toMatchObject({ DECISION_PREVIOUS_KEY_IDS: previous, DECISION_KEY_ID: { 'Fn::GetAtt': [keyIds[0], 'Arn'] } });
    // The stack's callback signs with it, and verifies the previous keys of this agent's decisions (its settings: lambdas/adapters/stack-api.ts).
    expect(variables(Steps.ApprovalCallback)).toMatchObject({ DECISION_KEY_ID: { 'Fn::GetAtt': [keyIds[0], 'Arn'] } });
    expect(JSON.stringify(variables(Steps.ApprovalCallback)['AGENT_SETTINGS'])).toContain(previous);
    expect(() => new SavepointStack(assertionApp(), 'Bad').addAgent('Agent', { agentName: 'bad', entry: EXAMPLE_AGENTS.refundReconciler, approvals: { previousDecisionKeys: ['alias/old'] } })).toThrow(/approvals\.previousDecisionKeys: expected a KMS key ARN, got "alias\/old"/);
  });
});
