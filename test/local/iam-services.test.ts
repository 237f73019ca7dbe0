/**
 * The twin's IAM on the calls a function makes to Secrets Manager, KMS, EventBridge and SNS, where
 * local code stands in for those services (local/aws/iam/services.ts): each is decided by the same
 * evaluator against the function's role in the template, on the resource its environment names,
 * and a grant taken out of the template is a call refused with AccessDeniedException.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { postDecision, waitFor } from '../support/agent-harness.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';
import { identityPolicies } from '../support/role-policies.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type Statement = { Effect: string; Action: string | string[]; Resource: unknown };
type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };

const template = async () => structuredClone(await cachedTemplate('refund-reconciler')) as Template;
/** The identity policy (inline in its role, or a resource of its own) whose id starts with `prefix` (test/support/role-policies.ts). */
const policyOf = (template: Template, prefix: string) => identityPolicies(template.Resources as never).find((policy) => policy.id.startsWith(prefix))!.document;
const resourceOf = (template: Template, type: string, prefix: string) => Object.entries(template.Resources).find(([id, resource]) => resource.Type === type && id.startsWith(prefix))!;

/** `template` without `action` in the policy whose logical id starts with `policyPrefix`. */
function withoutGrant(template: Template, policyPrefix: string, action: string): Template {
  const document = policyOf(template, policyPrefix) as { Statement: Statement[] };
  const before = JSON.stringify(document);
  document.Statement = document.Statement.flatMap((statement) => {
    const rest = [statement.Action].flat().filter((a) => a !== action);
    return rest.length > 0 ? [{ ...statement, Action: rest }] : [];
  });
  expect(JSON.stringify(document)).not.toBe(before);
  return template;
}

type KeyStatement = { Sid?: string; Effect: string; Principal: { AWS: unknown }; Action: string | string[] };

/** `template` with the role whose logical id starts with `rolePrefix` taken out of the statement `sid` of the key policy of the key whose logical id starts with `keyPrefix`. */
function withoutKeyUser(template: Template, keyPrefix: string, sid: string, rolePrefix: string): Template {
  const [, key] = resourceOf(template, 'AWS::KMS::Key', keyPrefix);
  const document = key.Properties!['KeyPolicy'] as { Statement: KeyStatement[] };
  const before = JSON.stringify(document);
  document.Statement = document.Statement.flatMap((statement) => {
    if (statement.Sid !== sid) return [statement];
    const rest = [statement.Principal.AWS].flat().filter((principal) => !JSON.stringify(principal).includes(`"${rolePrefix}`));
    return rest.length > 0 ? [{ ...statement, Principal: { AWS: rest } }] : [];
  });
  expect(JSON.stringify(document)).not.toBe(before);
  return template;
}

/** `template` with the key policy of the key whose logical id starts with `keyPrefix` replaced by `statements`. */
function withKeyPolicy(template: Template, keyPrefix: string, statements: unknown[]): Template {
  const [, key] = resourceOf(template, 'AWS::KMS::Key', keyPrefix);
  key.Properties!['KeyPolicy'] = { Version: '2012-10-17', Statement: statements };
  return template;
}

/** `template` with `variables` added to the environment of the function whose logical id starts with `functionPrefix`. */
function withVariables(template: Template, functionPrefix: string, variables: Record<string, unknown>): Template {
  const [, fn] = resourceOf(template, 'AWS::Lambda::Function', functionPrefix);
  Object.assign(fn.Properties!['Environment'].Variables, variables);
  return template;
}

/** `template` with `statement` added to the policy whose logical id starts with `policyPrefix`. */
function withStatement(template: Template, policyPrefix: string, statement: Statement): Template {
  (policyOf(template, policyPrefix) as { Statement: Statement[] }).Statement.push(statement);
  return template;
}

async function harness(options: { template?: Template; approve?: boolean; ledger?: 'embedded' | 'dynalite' } = {}): Promise<Harness> {
  const started = await startHarness({
    recovery: false,
    ...(options.ledger && { ledger: options.ledger }),
    ...(options.template && { template: options.template as unknown as CfnTemplateJson }),
    ...(options.approve && { onAsked: (approval: ApprovalRecord, stack: Pick<Harness['stack'], 'endpoints'>) => void postDecision(stack, approval.approvalId, { decision: 'approve', reason: 'checked' }) }),
  });
  cleanups.push(() => started.stack.close());
  return started;
}

const TOPIC = 'arn:aws:sns:us-east-1:000000000000:approvals';
const LINK_SECRET = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:approval-links-local';

describe("the twin's IAM on Secrets Manager, KMS, EventBridge and SNS", () => {
  it('authorizes each such call of an approved sample day as its function role, none refused', async () => {
    const h = await harness({ approve: true });
    const finished = await h.run({ runId: 'services-on', input: sampleInput });
    expect(finished.status).toBe('SUCCEEDED');
    expect(h.approvals.length).toBeGreaterThan(0);
    const byAction = h.stack.iam!.authorizer.decisionsByAction();
    // Every function reads the seal key once; the callback signs each decision, CallTool verifies it; RequestApproval tells the approvers.
    expect(byAction['secretsmanager:GetSecretValue']).toEqual({ allowed: expect.any(Number), denied: 0 });
    expect(byAction['kms:GenerateMac']).toEqual({ allowed: h.approvals.length, denied: 0 });
    expect(byAction['kms:VerifyMac']!.allowed).toBeGreaterThanOrEqual(h.approvals.length);
    expect(byAction['events:PutEvents']).toEqual({ allowed: h.approvals.length, denied: 0 });
    expect(h.stack.engine.iamDecisions()!.denied).toBe(0);
  });

  // Issue 36 finding 6: a link is its approver's credential; any rule on the default bus reads what goes there.
  it('puts the approval-requested event on the default bus with no link: a rule on it with no filter receives none', async () => {
    const h = await harness({ approve: true });
    const finished = await h.run({ runId: 'bus-no-links', input: sampleInput });
    expect(finished.status).toBe('SUCCEEDED');
    const received = h.stack.eventBus.receivedBy('savepoint.approvals');
    expect(received).toHaveLength(h.approvals.length);
    for (const [index, entry] of received.entries()) {
      const detail = JSON.parse(entry.Detail) as Record<string, unknown>;
      expect(detail).toMatchObject({ approvalId: h.approvals[index]!.approvalId, summary: expect.any(String), decideBy: expect.any(String) });
      expect(Object.keys(detail)).not.toContain('links');
      expect(entry.Detail).not.toMatch(/link=|\/decide\//);
    }
    // The links exist, and went to their approvers only (the CLI locally; the topic on AWS).
    const links = await h.stack.approvalLinks(h.approvals[0]!);
    expect(links.length).toBeGreaterThan(0);
    for (const entry of received) for (const link of links) expect(entry.Detail).not.toContain(new URL(link.url).searchParams.get('link')!);
  });

  it.each(['embedded', 'dynalite'] as const)("refuses a function's first ledger call when its role may not read the seal key (%s ledger)", async (ledger) => {
    const h = await harness({ ledger, template: withoutGrant(await template(), 'AgentStartRunFunctionServiceRole', 'secretsmanager:GetSecretValue') });
    const finished = await h.run({ runId: `no-seal-${ledger}`, input: sampleInput });
    expect(finished.status).toBe('FAILED');
    const failed = finished.history.find((event) => event.type === 'TaskFailed')!;
    expect(failed.taskFailedEventDetails).toMatchObject({ error: 'AccessDeniedException' });
    expect(failed.taskFailedEventDetails!.cause).toMatch(/AgentStartRunFunction\w+ is not authorized to perform: secretsmanager:GetSecretValue on resource: arn:aws:secretsmanager:us-east-1:000000000000:secret:LedgerSealKey\w+-local/);
  });

  it("refuses CallTool's check of a decision when the decision key's policy no longer names its role (kms:VerifyMac)", async () => {
    const h = await harness({ approve: true, template: withoutKeyUser(await template(), 'ControlPlaneDecisionKey', 'StepsVerifyDecisions', 'AgentCallToolFunction') });
    const finished = await h.run({ runId: 'no-verify', input: sampleInput });
    expect(finished.status).toBe('FAILED');
    const failed = finished.history.find((event) => event.type === 'TaskFailed' && event.taskFailedEventDetails?.error === 'AccessDeniedException')!;
    expect(failed.taskFailedEventDetails!.cause).toMatch(/AgentCallToolFunction\w+ is not authorized to perform: kms:VerifyMac on resource: arn:aws:kms:us-east-1:000000000000:key\/ControlPlaneDecisionKey\w+ because no resource-based policy allows the kms:VerifyMac action/);
  });

  it('refuses a role the key policy does not name, whatever its identity policy grants: the key policy decides (KMS)', async () => {
    const t = await template();
    const [decisionKeyId] = resourceOf(t, 'AWS::KMS::Key', 'ControlPlaneDecisionKey');
    const keyArn = `arn:aws:kms:us-east-1:000000000000:key/${decisionKeyId}`;
    const granted = withStatement(t, 'AgentCallToolFunctionServiceRole', { Effect: 'Allow', Action: 'kms:GenerateMac', Resource: keyArn });
    const h = await harness({ template: granted });
    expect(() => h.stack.iam!.authorizeAs(Steps.CallTool, { action: 'kms:GenerateMac', resource: keyArn })).toThrow(
      /AgentCallToolFunction\w+\/\w+ is not authorized to perform: kms:GenerateMac on resource: .* because no resource-based policy allows the kms:GenerateMac action/,
    );
    // The account administers the key, and cannot use it: no principal of the account signs through IAM alone.
    expect(() => h.stack.iam!.authorizer.authorize({ administrator: true }, { action: 'kms:GenerateMac', resource: keyArn })).toThrow(/because no resource-based policy allows/);
    expect(() => h.stack.iam!.authorizer.authorize({ administrator: true }, { action: 'kms:PutKeyPolicy', resource: keyArn })).not.toThrow();
  });

  it("refuses a role the key policy names when its own identity policy denies the key's use: an explicit Deny in either refuses (KMS)", async () => {
    const t = await template();
    const [decisionKeyId] = resourceOf(t, 'AWS::KMS::Key', 'ControlPlaneDecisionKey');
    const keyArn = `arn:aws:kms:us-east-1:000000000000:key/${decisionKeyId}`;
    const named = await harness({ template: structuredClone(t) });
    expect(() => named.stack.iam!.authorizeAs(Steps.CallTool, { action: 'kms:VerifyMac', resource: keyArn })).not.toThrow();
    const denied = await harness({ template: withStatement(t, 'AgentCallToolFunctionServiceRole', { Effect: 'Deny', Action: 'kms:VerifyMac', Resource: keyArn }) });
    expect(() => denied.stack.iam!.authorizeAs(Steps.CallTool, { action: 'kms:VerifyMac', resource: keyArn })).toThrow(/ with an explicit deny in an identity-based policy$/);
  });

  it("allows a key's use through IAM only when the key policy delegates to IAM (the account statement) AND the role's identity policy allows it", async () => {
    const delegating = { Effect: 'Allow', Principal: { AWS: 'arn:aws:iam::000000000000:root' }, Action: 'kms:*', Resource: '*' };
    const t = withKeyPolicy(await template(), 'ControlPlaneDecisionKey', [delegating]);
    const [decisionKeyId] = resourceOf(t, 'AWS::KMS::Key', 'ControlPlaneDecisionKey');
    const keyArn = `arn:aws:kms:us-east-1:000000000000:key/${decisionKeyId}`;
    const withoutIdentity = await harness({ template: t });
    expect(() => withoutIdentity.stack.iam!.authorizeAs(Steps.CallTool, { action: 'kms:GenerateMac', resource: keyArn })).toThrow(/because no identity-based policy allows the kms:GenerateMac action/);
    const withIdentity = await harness({ template: withStatement(structuredClone(t), 'AgentCallToolFunctionServiceRole', { Effect: 'Allow', Action: 'kms:GenerateMac', Resource: keyArn }) });
    expect(() => withIdentity.stack.iam!.authorizeAs(Steps.CallTool, { action: 'kms:GenerateMac', resource: keyArn })).not.toThrow();
    // An explicit Deny in the key policy wins over both.
    const denied = withKeyPolicy(structuredClone(t), 'ControlPlaneDecisionKey', [delegating, { Effect: 'Deny', Principal: { AWS: '*' }, Action: 'kms:GenerateMac', Resource: '*' }]);
    const refused = await harness({ template: withStatement(denied, 'AgentCallToolFunctionServiceRole', { Effect: 'Allow', Action: 'kms:GenerateMac', Resource: keyArn }) });
    expect(() => refused.stack.iam!.authorizeAs(Steps.CallTool, { action: 'kms:GenerateMac', resource: keyArn })).toThrow(/with an explicit deny in a resource-based policy/);
    // And one in the role's own policy, in AWS's words ("an identity-based policy").
    const selfDenied = withStatement(withStatement(structuredClone(t), 'AgentCallToolFunctionServiceRole', { Effect: 'Allow', Action: 'kms:GenerateMac', Resource: keyArn }), 'AgentCallToolFunctionServiceRole', { Effect: 'Deny', Action: 'kms:GenerateMac', Resource: keyArn });
    const refusedByItself = await harness({ template: selfDenied });
    expect(() => refusedByItself.stack.iam!.authorizeAs(Steps.CallTool, { action: 'kms:GenerateMac', resource: keyArn })).toThrow(/ with an explicit deny in an identity-based policy$/);
  });

  it("refuses the seal key to a role its identity policy lets read it but the secret's resource policy does not, and to an administrator (Secrets Manager)", async () => {
    const t = await template();
    const [sealId] = resourceOf(t, 'AWS::SecretsManager::Secret', 'LedgerSealKey');
    const sealArn = `arn:aws:secretsmanager:us-east-1:000000000000:secret:${sealId}-local`;
    // PruneVersions uses no ledger: the seal key's resource policy does not name its role.
    const granted = withStatement(t, 'ControlPlanePruneVersionsFunctionServiceRole', { Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: sealArn });
    const h = await harness({ template: granted });
    expect(() => h.stack.iam!.authorizeAs(Steps.PruneVersions, { action: 'secretsmanager:GetSecretValue', resource: sealArn })).toThrow(
      /ControlPlanePruneVersionsFunction\w+\/\w+ is not authorized to perform: secretsmanager:GetSecretValue on resource: .*LedgerSealKey.* with an explicit deny in a resource-based policy/,
    );
    // Its readers still read it: their identity policy allows, the resource policy's Deny spares them.
    expect(() => h.stack.iam!.authorizeAs(Steps.CallModel, { action: 'secretsmanager:GetSecretValue', resource: sealArn })).not.toThrow();
    // An administrator (every identity permission) does not.
    expect(() => h.stack.iam!.authorizer.authorize({ administrator: true }, { action: 'secretsmanager:GetSecretValue', resource: sealArn })).toThrow(/explicit deny in a resource-based policy/);
  });

  it('authorizes the starter key as the runs API (kms:GenerateMac) and StartRun (kms:VerifyMac), and refuses StartRun when the key policy no longer names it', async () => {
    const h = await harness({ approve: true });
    const started = await h.startAs('arn:aws:iam::000000000000:user/alice', { runId: 'starter-on', input: sampleInput });
    expect(started.status).toBe('SUCCEEDED');
    const byAction = h.stack.iam!.authorizer.decisionsByAction();
    // One starter signed by the runs API, besides the callback's decisions.
    expect(byAction['kms:GenerateMac']).toEqual({ allowed: 1 + h.approvals.length, denied: 0 });
    expect(byAction['kms:VerifyMac']!.denied).toBe(0);

    const refused = await harness({ approve: true, template: withoutKeyUser(await template(), 'ControlPlaneStarterKey', 'StartRunVerifiesStarters', 'AgentStartRunFunction') });
    const finished = await refused.startAs('arn:aws:iam::000000000000:user/alice', { runId: 'starter-no-verify', input: sampleInput });
    expect(finished.status).toBe('FAILED');
    const failed = finished.history.find((event) => event.type === 'TaskFailed' && event.taskFailedEventDetails?.error === 'AccessDeniedException')!;
    expect(failed.taskFailedEventDetails!.cause).toMatch(/AgentStartRunFunction\w+ is not authorized to perform: kms:VerifyMac on resource: arn:aws:kms:us-east-1:000000000000:key\/ControlPlaneStarterKey\w+/);
  });

  it('refuses a start the runs API may not sign (the starter key policy no longer names it): nothing is started', async () => {
    const h = await harness({ template: withoutKeyUser(await template(), 'ControlPlaneStarterKey', 'RunsApiSignsStarters', 'ControlPlaneStackApiRunsApiFunction') });
    await expect(h.startAs('arn:aws:iam::000000000000:user/alice', { runId: 'starter-no-sign', input: sampleInput })).rejects.toThrow(/runs API answered 5\d\d/);
    expect(h.stack.engine.listExecutions().executions).toEqual([]);
  });

  it('refuses a decision the approval callback may not sign (the decision key policy no longer names it): the decision is not recorded', async () => {
    const h = await harness({ template: withoutKeyUser(await template(), 'ControlPlaneDecisionKey', 'CallbackSignsDecisions', 'ControlPlaneStackApiApprovalCallbackFunction') });
    const { executionArn } = h.stack.engine.startExecution({ name: 'no-sign', input: { runId: 'no-sign', input: sampleInput } });
    const asked = (await waitFor(() => h.approvals[0])).approvalId;
    const answer = await postDecision(h.stack, asked, { decision: 'approve', reason: 'checked' });
    expect(answer.status).toBeGreaterThanOrEqual(500);
    expect((await h.stack.ledger.findApproval(asked))?.status).toBe('pending');
    expect(h.stack.iam!.authorizer.decisionsByAction()['kms:GenerateMac']).toEqual({ allowed: 0, denied: 1 });
    h.stack.engine.stopExecution(executionArn);
  });

  it('refuses the approval events when RequestApproval loses events:PutEvents: the run goes on, as the notifier failing does not fail it', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const h = await harness({ approve: true, template: withoutGrant(await template(), 'AgentRequestApprovalFunctionServiceRole', 'events:PutEvents') });
    const finished = await h.run({ runId: 'no-events', input: sampleInput });
    expect(finished.status).toBe('SUCCEEDED');
    expect(h.stack.iam!.authorizer.decisionsByAction()['events:PutEvents']).toEqual({ allowed: 0, denied: h.approvals.length });
    expect(errors.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('approval notification failed') && line.includes('AccessDeniedException'))).toHaveLength(h.approvals.length);
  });

  it('publishes to the topic its environment names only with sns:Publish on it', async () => {
    const named = () => template().then((t) => withVariables(t, 'AgentRequestApprovalFunction', { APPROVAL_TOPIC_ARN: TOPIC }));
    const errors = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const refused = await harness({ approve: true, template: await named() });
    expect((await refused.run({ runId: 'no-publish', input: sampleInput })).status).toBe('SUCCEEDED');
    expect(refused.stack.iam!.authorizer.decisionsByAction()['sns:Publish']).toEqual({ allowed: 0, denied: refused.approvals.length });
    expect(errors.mock.calls.some(([line]) => String(line).includes('sns:Publish'))).toBe(true);
    // As SNS answers it (error code AuthorizationError, the SDK's AuthorizationErrorException), not as IAM's other services do.
    const refusals = errors.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('sns:Publish'));
    expect(refusals.every((line) => line.includes('AuthorizationErrorException') && !line.includes('AccessDeniedException')), refusals[0]).toBe(true);

    const granted = await harness({ approve: true, template: withStatement(await named(), 'AgentRequestApprovalFunctionServiceRole', { Effect: 'Allow', Action: 'sns:Publish', Resource: TOPIC }) });
    expect((await granted.run({ runId: 'publish', input: sampleInput })).status).toBe('SUCCEEDED');
    expect(granted.stack.iam!.authorizer.decisionsByAction()['sns:Publish']).toEqual({ allowed: granted.approvals.length, denied: 0 });
  });

  it('signs links with the secret its environment names only with secretsmanager:GetSecretValue on it', async () => {
    const named = await template().then((t) => withVariables(t, 'AgentRequestApprovalFunction', { APPROVAL_LINK_SECRET_ARN: LINK_SECRET }));
    const h = await harness({ template: named });
    const finished = await h.run({ runId: 'no-link-key', input: sampleInput });
    expect(finished.status).toBe('FAILED');
    const failed = finished.history.find((event) => event.type === 'TaskFailed' && event.taskFailedEventDetails?.error === 'AccessDeniedException')!;
    expect(failed.taskFailedEventDetails!.cause).toContain(`AgentRequestApprovalFunction`);
    expect(failed.taskFailedEventDetails!.cause).toContain(`not authorized to perform: secretsmanager:GetSecretValue on resource: ${LINK_SECRET}`);
  });
});
