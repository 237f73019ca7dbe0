import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_AGENTS } from '../../infra/example.js';
import { SavepointStack } from '../../infra/stack.js';
import type { ApprovalSettings } from '../../infra/approvals.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { awsDeps } from '../../lambdas/adapters/aws-deps.js';
import { authorizeApiRequest, integrationInvokable, restApisOf, type ApiCaller, type RestApiModel } from '../../local/aws/iam/api-gateway.js';
import { LOCAL_ACCOUNT } from '../../local/aws/iam/deployment.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { assertionApp } from './example-template.js';

/**
 * Issue 36 finding 4: the approval API had no resource policy, so anyone whose IAM let them call
 * it could decide any approval. Now AWS itself keeps everyone but the deployment's approvers off
 * /approvals (and its starters off /runs), and the twin decides requests as API Gateway does.
 */
const account = LOCAL_ACCOUNT;
const aliceSso = `arn:aws:sts::${account}:assumed-role/AWSReservedSSO_Finance_0a1b2c3d4e5f6a7b/alice@example.com`;
const aliceRole = `arn:aws:iam::${account}:role/aws-reserved/sso.amazonaws.com/eu-west-1/AWSReservedSSO_Finance_0a1b2c3d4e5f6a7b`;
const bob = `arn:aws:iam::${account}:user/bob`;
const ops = `arn:aws:iam::${account}:role/ops/Approver`;
const starter = `arn:aws:iam::${account}:user/starter`;
const settings: ApprovalSettings = {
  approvers: ['alice@example.com'],
  approverPrincipals: { 'alice@example.com': aliceSso, 'bob@example.com': [bob], ops: [ops] },
  starterPrincipals: { starter },
};

function synth(id: string, approvals: ApprovalSettings | undefined): CfnTemplateJson {
  const stack = new SavepointStack(assertionApp(), id);
  stack.addAgent('Agent', { agentName: 'guarded', entry: EXAMPLE_AGENTS.refundReconciler, ...(approvals && { approvals }) });
  return Template.fromStack(stack).toJSON() as CfnTemplateJson;
}
const environmentOf = (template: CfnTemplateJson, step: string) =>
  (Object.values(template.Resources!).find((r) => r.Type === 'AWS::Lambda::Function' && (r.Properties as any).Environment?.Variables?.SAVEPOINT_STEP === step)!.Properties as any).Environment.Variables as Record<string, string>;

let guarded: CfnTemplateJson;
let defaults: CfnTemplateJson;
beforeAll(() => {
  guarded = synth('Guarded', settings);
  defaults = synth('Defaults', undefined);
});

describe('the approval API in the template', () => {
  it('has a resource policy: the page open, /approvals only to the approvers, /runs only to the starters', () => {
    const [api] = Object.values(guarded.Resources!).filter((r) => r.Type === 'AWS::ApiGateway::RestApi');
    const statements = (api!.Properties as any).Policy.Statement as any[];
    const bySid = Object.fromEntries(statements.map((s) => [s.Sid, s]));
    expect(bySid['ApprovalPageIsOpen']).toMatchObject({ Effect: 'Allow', Principal: '*', Resource: ['execute-api:/*/GET/decide/*', 'execute-api:/*/POST/decide/*'] });
    const approverArns = [bob, `arn:aws:iam::${account}:role/aws-reserved/sso.amazonaws.com/*/AWSReservedSSO_Finance_0a1b2c3d4e5f6a7b`, `arn:aws:iam::${account}:role/aws-reserved/sso.amazonaws.com/AWSReservedSSO_Finance_0a1b2c3d4e5f6a7b`, ops].sort();
    expect(bySid['OnlyApprovers']).toMatchObject({ Effect: 'Deny', Principal: { AWS: '*' }, Resource: ['execute-api:/*/*/approvals', 'execute-api:/*/*/approvals/*'], Condition: { ArnNotLike: { 'aws:PrincipalArn': approverArns } } });
    expect(bySid['Approvers']).toMatchObject({ Effect: 'Allow', Condition: { ArnLike: { 'aws:PrincipalArn': approverArns } } });
    expect(bySid['OnlyStarters']).toMatchObject({ Effect: 'Deny', Resource: ['execute-api:/*/POST/runs', 'execute-api:/*/POST/runs/*/cancel', 'execute-api:/*/POST/batches'], Condition: { ArnNotLike: { 'aws:PrincipalArn': [starter] } } });
  });

  it('without approverPrincipals, denies /approvals to everyone (links only) and leaves /runs to IAM', () => {
    const [api] = Object.values(defaults.Resources!).filter((r) => r.Type === 'AWS::ApiGateway::RestApi');
    const statements = (api!.Properties as any).Policy.Statement as any[];
    expect(statements.find((s) => s.Sid === 'OnlyApprovers')).toEqual(expect.objectContaining({ Effect: 'Deny' }));
    expect(statements.find((s) => s.Sid === 'OnlyApprovers').Condition).toBeUndefined();
    expect(statements.some((s) => JSON.stringify(s.Resource).includes('runs'))).toBe(false);
    // The agent's settings name no approver principal: nobody decides by IAM (lambdas/adapters/stack-api.ts policyOf).
    expect(JSON.parse(environmentOf(defaults, Steps.ApprovalCallback)['AGENT_SETTINGS']!)).toEqual({ guarded: {} });
  });

  it('tells the callback and the runs API who is who, and no other function', () => {
    const directory = { 'alice@example.com': [aliceSso], 'bob@example.com': [bob], ops: [ops] };
    // The stack's API functions, as the agent's settings (infra/stack-api.ts).
    for (const step of [Steps.ApprovalCallback, Steps.RunsApi]) {
      expect(JSON.parse(environmentOf(guarded, step)['AGENT_SETTINGS']!).guarded, step).toMatchObject({ approverPrincipals: directory, starterPrincipals: { starter: [starter] } });
    }
    for (const step of [Steps.CallTool, Steps.StartRun, Steps.RequestApproval]) expect(environmentOf(guarded, step), step).not.toHaveProperty('APPROVER_PRINCIPALS');
    // …which the callback reads at cold start as its policy (nobody, when unset).
    const policy = (env: Record<string, string>) => awsDeps(env).approvals!.policy;
    expect(policy({ APPROVER_PRINCIPALS: JSON.stringify(directory), UNKNOWN_STARTER: 'any-approver' })).toMatchObject({ approverPrincipals: directory, unknownStarter: 'any-approver' });
    expect(policy({})).toMatchObject({ approverPrincipals: {} });
    expect(() => awsDeps({ APPROVER_PRINCIPALS: '{"a":"b"}' })).toThrow(/^invalid Lambda environment: APPROVER_PRINCIPALS\.a: /);
  });

  it.each<[string, ApprovalSettings, RegExp]>([
    ['a session of a role whose caller names it', { approverPrincipals: { alice: 'arn:aws:sts::111122223333:assumed-role/Shared/alice' } }, /^DurableAgent Agent: approvals\.approverPrincipals\.alice: .*only on IAM Identity Center's roles/],
    ['a group', { approverPrincipals: { team: ['arn:aws:iam::111122223333:group/approvers'] } }, /^DurableAgent Agent: approvals\.approverPrincipals\.team: expected an IAM user or role ARN/],
    ['a person with no principal', { starterPrincipals: { nobody: [] } }, /^DurableAgent Agent: approvals\.starterPrincipals\.nobody: name at least one principal/],
  ])('fails the synth on %s, naming the setting and the person', (_case, approvals, message) => {
    const stack = new SavepointStack(assertionApp(), 'Bad');
    expect(() => stack.addAgent('Agent', { agentName: 'bad', entry: EXAMPLE_AGENTS.refundReconciler, approvals })).toThrow(message);
  });
});

describe('the twin decides a request as API Gateway does (resource policy + IAM authentication)', () => {
  let api: RestApiModel;
  beforeAll(() => {
    api = restApisOf(guarded)[0]!;
  });
  const as = (principalArn: string, identityDecision: ApiCaller['identityDecision'] = 'Allowed', inAccount = account): ApiCaller => ({ principalArn, account: inAccount, identityDecision });
  const decide = (method: string, path: string, caller?: ApiCaller) => authorizeApiRequest(api, { method, path, ...(caller && { caller }) });

  it('reads the methods and their authorization from the template', () => {
    expect(Object.fromEntries(api.methods)).toMatchObject({ 'POST /approvals/{approvalId}': 'AWS_IAM', 'GET /approvals': 'AWS_IAM', 'POST /runs': 'AWS_IAM', 'POST /decide/{approvalId}': 'NONE', 'GET /decide/{approvalId}': 'NONE' });
  });

  it('lets the approvers decide, and refuses anyone else whose own IAM allows it, with an explicit deny', () => {
    expect(decide('POST', '/approvals/apv_0123456789', as(bob))).toEqual({ allowed: true });
    expect(decide('POST', '/approvals/apv_0123456789', as(aliceRole))).toEqual({ allowed: true });
    expect(decide('GET', '/approvals', as(`arn:aws:iam::${account}:role/ops/Approver`))).toEqual({ allowed: true });
    const admin = `arn:aws:iam::${account}:role/Admin`;
    expect(decide('POST', '/approvals/apv_0123456789', as(admin))).toEqual({
      allowed: false,
      status: 403,
      message: `User: ${admin} is not authorized to perform: execute-api:Invoke on resource: arn:aws:execute-api:us-east-1:${account}:${api.logicalId}/v1/POST/approvals/apv_0123456789 with an explicit deny`,
    });
    // The same role under another path is another role.
    expect(decide('POST', '/approvals/apv_0123456789', as(`arn:aws:iam::${account}:role/Approver`))).toMatchObject({ allowed: false });
  });

  it('without approverPrincipals lets nobody decide, an admin whose own IAM allows everything included (what synth warns of: infra/approvals.ts nobodyDecidesWarning)', () => {
    const open = restApisOf(defaults)[0]!;
    for (const caller of [as(`arn:aws:iam::${account}:role/Admin`), as(bob)]) {
      expect(authorizeApiRequest(open, { method: 'POST', path: '/approvals/apv_0123456789', caller })).toMatchObject({ allowed: false, status: 403, message: expect.stringMatching(/with an explicit deny$/) });
    }
  });

  it('in the API\'s account either policy may allow; from another account both must', () => {
    expect(decide('POST', '/approvals/apv_0123456789', as(bob, 'ImplicitlyDenied'))).toEqual({ allowed: true }); // Table A: the resource policy allows
    expect(decide('POST', '/approvals/apv_0123456789', as(bob, 'ExplicitlyDenied'))).toMatchObject({ allowed: false, message: /with an explicit deny$/ });
    const elsewhere = `arn:aws:iam::999999999999:user/bob`;
    expect(decide('POST', '/approvals/apv_0123456789', as(elsewhere, 'Allowed', '999999999999'))).toMatchObject({ allowed: false, message: /with an explicit deny$/ });
    // Starters from the API's account whose IAM allows /runs; nobody unlisted.
    expect(decide('POST', '/runs', as(starter))).toEqual({ allowed: true });
    expect(decide('POST', '/runs', as(bob))).toMatchObject({ allowed: false, message: /with an explicit deny$/ });
  });

  it('from another account, admits an approver only when both the resource policy and their own IAM allow', () => {
    const carol = 'arn:aws:iam::999999999999:user/carol';
    const shared = restApisOf(synth('Shared', { approverPrincipals: { carol: [carol] } }))[0]!;
    const carolAs = (identity: ApiCaller['identityDecision']) => authorizeApiRequest(shared, { method: 'POST', path: '/approvals/apv_0123456789', caller: as(carol, identity, '999999999999') });
    expect(carolAs('Allowed')).toEqual({ allowed: true });
    // Table B: the resource policy's Allow alone is not enough from another account.
    expect(carolAs('ImplicitlyDenied')).toMatchObject({ allowed: false, status: 403, message: expect.not.stringMatching(/explicit deny/) });
    // In the API's account it would be (Table A).
    expect(decide('POST', '/approvals/apv_0123456789', as(bob, 'ImplicitlyDenied'))).toEqual({ allowed: true });
  });

  it('opens a route with no authentication only on an explicit Allow of the resource policy', () => {
    const statements = [api.policy!.Statement].flat().filter((statement) => statement.Sid !== 'ApprovalPageIsOpen');
    const closed: RestApiModel = { ...api, policy: { Statement: statements } };
    expect(authorizeApiRequest(closed, { method: 'GET', path: '/decide/apv_0123456789' })).toMatchObject({ allowed: false, status: 403 });
    expect(decide('GET', '/decide/apv_0123456789')).toEqual({ allowed: true });
  });

  it('serves the page to anyone (the link is its credential), and nothing signed to an unsigned request', () => {
    expect(decide('GET', '/decide/apv_0123456789')).toEqual({ allowed: true });
    expect(decide('POST', '/decide/apv_0123456789')).toEqual({ allowed: true });
    expect(decide('POST', '/approvals/apv_0123456789')).toEqual({ allowed: false, status: 403, message: 'Missing Authentication Token' });
    expect(decide('DELETE', '/decide/apv_0123456789')).toMatchObject({ allowed: false, status: 403 });
  });

  it('without a resource policy (before this change) anyone whose IAM allows it decides: the finding', () => {
    const open: RestApiModel = { ...api, policy: undefined } as RestApiModel;
    expect(authorizeApiRequest(open, { method: 'POST', path: '/approvals/apv_0123456789', caller: as(`arn:aws:iam::${account}:role/Admin`) })).toEqual({ allowed: true });
  });
});

describe("the twin lets API Gateway invoke a method's function only as its Lambda permissions allow", () => {
  /** The template with each API Gateway permission of the runs function's SourceArn replaced by `sourceArn` (execute-api:… after the API's id). */
  const scoped = (template: CfnTemplateJson, tail: string): RestApiModel => {
    const resources = structuredClone(template.Resources!);
    for (const resource of Object.values(resources)) {
      const properties = resource.Properties as any;
      if (resource.Type !== 'AWS::Lambda::Permission' || properties.Principal !== 'apigateway.amazonaws.com' || !JSON.stringify(properties.FunctionName).includes('RunsApiFunction')) continue;
      const [, parts] = properties.SourceArn['Fn::Join'] as [string, unknown[]];
      properties.SourceArn = { 'Fn::Join': ['', [...parts.slice(0, -1), tail]] };
    }
    return restApisOf({ ...template, Resources: resources })[0]!;
  };

  it('reads each method\'s function and its permissions from the template: the deployed ones allow every method of the API', () => {
    const api = restApisOf(defaults)[0]!;
    expect([...api.integrations!.keys()]).toEqual(expect.arrayContaining(['POST /runs', 'GET /runs/{runId}', 'POST /approvals/{approvalId}', 'GET /runs/{runId}/events']));
    for (const [route] of api.integrations!) {
      const [method, path] = route.split(' ') as [string, string];
      expect(integrationInvokable(api, method, path.replace(/\{[^}]+\}/g, 'x')), route).toBe(true);
    }
  });

  it('matches the SourceArn against the method\'s execute-api ARN (<api>/<stage>/<METHOD>/<path>): another method, stage or path is refused', () => {
    const getsOnly = scoped(defaults, '/*/GET/*');
    expect(integrationInvokable(getsOnly, 'GET', '/runs/r1')).toBe(true);
    expect(integrationInvokable(getsOnly, 'POST', '/runs')).toBe(false);
    // The approval callback keeps its own permission.
    expect(integrationInvokable(getsOnly, 'POST', '/approvals/a1')).toBe(true);
    const otherStage = scoped(defaults, '/test-invoke-stage/*/*');
    expect(integrationInvokable(otherStage, 'POST', '/runs')).toBe(false);
    expect(integrationInvokable(scoped(defaults, `/${otherStage.stage}/POST/runs`), 'POST', '/runs')).toBe(true);
    expect(integrationInvokable(scoped(defaults, `/${otherStage.stage}/POST/runs`), 'POST', '/runs/r1/cancel')).toBe(false);
  });
});
