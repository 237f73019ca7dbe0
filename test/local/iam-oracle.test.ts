/**
 * The twin's IAM evaluator (local/aws/iam/policy.ts) against a maintained simulator as the oracle:
 * every role of the synthesized example app, each with all its policies, over a generated corpus
 * of requests (the actions, resources and condition values its statements name, and near misses
 * of each), must get the same decision from both. The oracle, @cloud-copilot/iam-simulate, is
 * AGPL-3.0: a devDependency used only by tests (test/support/iam-oracle.ts), never imported by shipped code.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { deploy } from '../../local/aws/iam/deployment.js';
import { evaluatePolicies, policyEvaluator, type AuthorizationRequest, type PolicyDocument, type Statement } from '../../local/aws/iam/policy.js';
import { stackRoles, type Role } from '../../local/aws/iam/roles.js';
import { exampleTemplate } from '../infra/example-template.js';
import { iamOracle, type IamOracle } from '../support/iam-oracle.js';

let roles: Role[];
let oracle: IamOracle;

beforeAll(() => {
  const template = exampleTemplate().toJSON() as CfnTemplateJson;
  const deployment = deploy(template);
  roles = [...stackRoles(template, deployment).roles.values()].filter((role) => role.policies.length > 0);
  // The identity evaluator's oracle: key policies and secrets' policies are combined with it elsewhere
  // (resource-policies.ts), and compared with the oracle on every request of a real day (iam-requests.test.ts).
  oracle = iamOracle(template, deployment, { identityOnly: true });
});

function list<T>(value: T | readonly T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? [...(value as T[])] : [value as T];
}

/** The corpus: what the role's statements name, instantiated and mutated. */
function requests(role: Role): fc.Arbitrary<AuthorizationRequest> {
  const statements = role.policies.flatMap((policy) => list<Statement>(policy.Statement));
  const actions = [...new Set(statements.flatMap((s) => [...list(s.Action), ...list(s.NotAction)]))];
  const resources = [...new Set(statements.flatMap((s) => [...list(s.Resource), ...list(s.NotResource)]))].filter((r) => r !== '*');
  const keyValues = [...new Set(statements.flatMap((s) => Object.values(s.Condition ?? {}).flatMap((keys) => Object.values(keys).flatMap((v) => list(v).map(String)))))];

  const segment = fc.constantFrom('x', 'run-1', 'a:b', 'a/b', '', 'Savepoint-agent', '1', 'live');
  const action = fc.oneof(
    fc.constantFrom(...actions.filter((a) => !a.includes('*'))),
    // Near misses: another operation of the same service, or a different case (action names are case-insensitive).
    fc.tuple(fc.constantFrom(...actions), fc.constantFrom('GetItem', 'Query', 'StartExecution', 'DescribeExecution', 'StopExecution', 'SendTaskSuccess', 'InvokeFunction', 'GetSecretValue', 'VerifyMac', 'SendMessage', 'PutEvents', 'Publish')).map(([a, op]) => `${a.split(':')[0]}:${op}`),
    fc.constantFrom(...actions.filter((a) => !a.includes('*'))).map((a) => a.toLowerCase()),
  );
  const resource = fc.oneof(
    fc.constantFrom(...resources),
    // A wildcard instantiated, and near misses: a qualifier added, a character changed.
    fc.tuple(fc.constantFrom(...resources), segment).map(([r, s]) => r.replace(/\*/g, s)),
    fc.tuple(fc.constantFrom(...resources), fc.constantFrom(':1', ':2', ':live', '/index/pendingApprovals', '/index/other', 'X')).map(([r, s]) => r.replace(/\*$/, '') + s),
    fc.constantFrom(...resources).map((r) => r.replace(/us-east-1/, 'eu-west-1')),
  );
  const leadingKey = fc.oneof(
    fc.constantFrom('RUN#*', ...keyValues).map((v) => v.replace(/\*/g, 'a1')),
    fc.constantFrom('TOKEN#t', 'APPROVAL#1', 'RUN', 'GLOBALX', 'run#1'),
  );
  const context = fc.oneof(
    fc.constant({}),
    fc.array(leadingKey, { minLength: 0, maxLength: 3 }).map((keys) => ({ 'dynamodb:LeadingKeys': keys })),
  );
  // Mostly an action with a resource of the same statement (requests AWS could make), some mixed.
  const paired = fc.constantFrom(...statements.filter((s) => s.Action !== undefined && s.Resource !== undefined)).chain((s) =>
    fc.record({
      action: fc.constantFrom(...list(s.Action).map((a) => a.replace(/\*/g, 'Get'))),
      resource: fc.constantFrom(...list(s.Resource)).chain((r) => (r === '*' ? resource : fc.oneof(fc.constant(r), segment.map((x) => r.replace(/\*/g, x))))),
    }),
  );
  return fc
    .record({ target: fc.oneof({ weight: 3, arbitrary: paired }, { weight: 1, arbitrary: fc.record({ action, resource }) }), context })
    // Only DynamoDB requests carry dynamodb:LeadingKeys.
    .map(({ target, context }) => ({ ...target, context: target.action.toLowerCase().startsWith('dynamodb:') ? context : {} }));
}

describe('the IAM evaluator, against iam-simulate as the oracle', () => {
  it('covers every role of the synthesized app that has policies', () => {
    expect(roles.length).toBeGreaterThanOrEqual(14);
    // The statement shapes that matter are there: conditions on dynamodb:LeadingKeys, wildcards, version ARNs.
    const text = JSON.stringify(roles.map((role) => role.policies));
    expect(text).toContain('ForAllValues:StringLike');
    expect(text).toContain(':execution:');
    expect(text).toMatch(/function:[A-Za-z0-9]+:1"/);
  });

  it('decides every generated request as the oracle does', async () => {
    let compared = 0;
    const outcomes = new Set<string>();
    for (const role of roles) {
      // The authorizer's evaluator, one per role as it keeps them: its kept matches are reused across the role's requests.
      const evaluate = policyEvaluator(role.policies);
      await fc.assert(
        fc.asyncProperty(requests(role), async (request) => {
          const expected = await oracle(role.policies, request);
          if (expected === undefined) return;
          compared++;
          outcomes.add(expected);
          expect({ role: role.id, request, decision: evaluatePolicies(role.policies, request) }).toEqual({ role: role.id, request, decision: expected });
          expect({ role: role.id, request, decision: evaluate(request) }).toEqual({ role: role.id, request, decision: expected });
        }),
        { numRuns: 150, seed: 20 },
      );
    }
    // Not a vacuous comparison: most requests are ones AWS could make, and both outcomes occur.
    expect(compared).toBeGreaterThan(roles.length * 50);
    expect([...outcomes].sort()).toEqual(['Allowed', 'ImplicitlyDenied']);
  });

  it('decides as the oracle does on the same policies with statements turned Deny, NotAction, NotResource or other operators', async () => {
    // The template has no Deny and no Not* element; these variants exercise the rest of the evaluation logic.
    const variant = (statement: Statement, kind: number): Statement => {
      const { Action, Resource, Condition, ...rest } = statement;
      switch (kind) {
        case 0:
          return { ...statement, Effect: 'Deny' };
        case 1:
          return Action === undefined ? statement : { ...rest, NotAction: Action, ...(Resource !== undefined && { Resource }), ...(Condition && { Condition }) };
        case 2:
          return Resource === undefined ? statement : { ...rest, NotResource: Resource, ...(Action !== undefined && { Action }), ...(Condition && { Condition }) };
        default: {
          if (!Condition) return statement;
          const operator = ['ForAnyValue:StringLike', 'ForAllValues:StringEquals', 'ForAllValues:StringNotLike', 'StringLikeIfExists'][kind - 3]!;
          return { ...statement, Condition: Object.fromEntries(Object.values(Condition).map((keys) => [operator, keys])) };
        }
      }
    };
    let compared = 0;
    const outcomes = new Set<string>();
    for (const role of roles) {
      const statements = role.policies.flatMap((policy) => list<Statement>(policy.Statement));
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 6 }), { minLength: statements.length, maxLength: statements.length }), requests(role), async (kinds, request) => {
          const policies: PolicyDocument[] = [{ Version: '2012-10-17', Statement: statements.map((statement, i) => variant(statement, kinds[i]!)) }];
          const expected = await oracle(policies, request);
          if (expected === undefined) return;
          compared++;
          outcomes.add(expected);
          expect({ role: role.id, policies, request, decision: evaluatePolicies(policies, request) }).toEqual({ role: role.id, policies, request, decision: expected });
          expect({ role: role.id, policies, request, decision: policyEvaluator(policies)(request) }).toEqual({ role: role.id, policies, request, decision: expected });
        }),
        { numRuns: 60, seed: 21 },
      );
    }
    expect(compared).toBeGreaterThan(roles.length * 20);
    expect([...outcomes].sort()).toEqual(['Allowed', 'ExplicitlyDenied', 'ImplicitlyDenied']);
  });
});
