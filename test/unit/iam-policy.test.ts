/**
 * The twin's IAM evaluator on AWS's documented cases (IAM User Guide, "Policy evaluation logic",
 * "IAM JSON policy elements: Condition operators", "Resource"), and Step Functions' rule for
 * versions and aliases ("Authorization for versions and aliases"). The differential test against
 * a maintained simulator is test/local/iam-oracle.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { IamAuthorizer, MEMO_LIMIT } from '../../local/aws/iam/authorizer.js';
import { evaluatePolicies, matchesArn, policyEvaluator, type AuthorizationRequest, type PolicyDocument } from '../../local/aws/iam/policy.js';
import { sfnAuthorizationRequest } from '../../local/aws/iam/step-functions.js';

const MACHINE = 'arn:aws:states:us-east-1:000000000000:stateMachine:Savepoint-agent';
const TABLE = 'arn:aws:dynamodb:us-east-1:000000000000:table/Ledger';
const policy = (...Statement: PolicyDocument['Statement'][]): PolicyDocument => ({ Version: '2012-10-17', Statement: Statement.flat() as never });
const decide = (policies: PolicyDocument[], request: AuthorizationRequest) => evaluatePolicies(policies, request);

describe('policy evaluation logic', () => {
  it('denies what no statement allows (implicit deny)', () => {
    expect(decide([], { action: 'states:StartExecution', resource: MACHINE })).toBe('ImplicitlyDenied');
  });

  it('lets an explicit Deny in any policy override every Allow', () => {
    const allow = policy({ Effect: 'Allow', Action: '*', Resource: '*' });
    const deny = policy({ Effect: 'Deny', Action: 'states:Stop*', Resource: `${MACHINE.replace(':stateMachine:', ':execution:')}:*` });
    expect(decide([allow, deny], { action: 'states:StopExecution', resource: `${MACHINE.replace(':stateMachine:', ':execution:')}:run-1` })).toBe('ExplicitlyDenied');
    expect(decide([allow, deny], { action: 'states:DescribeExecution', resource: `${MACHINE.replace(':stateMachine:', ':execution:')}:run-1` })).toBe('Allowed');
  });

  it('matches action names case-insensitively, with wildcards, and NotAction as everything else', () => {
    const p = [policy({ Effect: 'Allow', Action: 'States:Describe*', Resource: '*' }, { Effect: 'Allow', NotAction: 'states:*', Resource: '*' })];
    expect(decide(p, { action: 'states:describeexecution', resource: MACHINE })).toBe('Allowed');
    expect(decide(p, { action: 'states:StartExecution', resource: MACHINE })).toBe('ImplicitlyDenied');
    expect(decide(p, { action: 'lambda:InvokeFunction', resource: 'arn:aws:lambda:us-east-1:000000000000:function:f' })).toBe('Allowed');
  });

  it('matches ARNs segment by segment, a trailing * in the resource part across colons, case-sensitively', () => {
    expect(matchesArn('arn:aws:states:*:*:execution:Savepoint-agent:*', 'arn:aws:states:us-east-1:000000000000:execution:Savepoint-agent:run:1')).toBe(true);
    expect(matchesArn('arn:aws:lambda:us-east-1:000000000000:function:Fn:*', 'arn:aws:lambda:us-east-1:000000000000:function:Fn:7')).toBe(true);
    expect(matchesArn('arn:aws:lambda:us-east-1:000000000000:function:Fn', 'arn:aws:lambda:us-east-1:000000000000:function:Fn:7')).toBe(false);
    expect(matchesArn('arn:aws:states:us-east-?:000000000000:stateMachine:Savepoint-agent', MACHINE)).toBe(true);
    expect(matchesArn('arn:aws:states:us-east-1:000000000000:statemachine:Savepoint-agent', MACHINE)).toBe(false);
  });

  it('holds ForAllValues:StringLike on dynamodb:LeadingKeys for every key the request touches (and for none)', () => {
    const p = [policy({ Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:PutItem'], Resource: TABLE, Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RUN#*', 'GLOBAL'] } } })];
    expect(decide(p, { action: 'dynamodb:PutItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': ['RUN#r1'] } })).toBe('Allowed');
    expect(decide(p, { action: 'dynamodb:PutItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': ['RUN#r1', 'TOKEN#t'] } })).toBe('ImplicitlyDenied');
    // "ForAllValues … returns true if there are no context keys in the request" (documented).
    expect(decide(p, { action: 'dynamodb:GetItem', resource: TABLE })).toBe('Allowed');
  });

  it('matches a StringLike value against each listed pattern on its own: wildcards span nothing else, regex characters are literal', () => {
    const on = (operator: string) => [policy({ Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: TABLE, Condition: { [operator]: { 'dynamodb:LeadingKeys': ['RUN#*', 'A.B|C', 'T?K', 'X(1)+$'] } } })];
    const keys = (...leading: string[]) => ({ action: 'dynamodb:GetItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': leading } });
    expect(decide(on('ForAllValues:StringLike'), keys('RUN#r1', 'A.B|C', 'TOK', 'X(1)+$'))).toBe('Allowed');
    for (const refused of ['AxB|C', 'A.B', 'C', 'TK', 'TOOK', 'X1', 'RUN', 'xRUN#r1', 'A.B|C\n']) {
      expect(decide(on('ForAllValues:StringLike'), keys('RUN#r1', refused.replace('\\n', '\n')))).toBe('ImplicitlyDenied');
    }
    expect(decide(on('ForAnyValue:StringNotLike'), keys('RUN#r1', 'TOK'))).toBe('ImplicitlyDenied');
    expect(decide(on('ForAnyValue:StringNotLike'), keys('RUN#r1', 'TOOK'))).toBe('Allowed');
  });

  it('treats a missing key as no match, except for negated operators and IfExists', () => {
    const on = (operator: string) => [policy({ Effect: 'Allow', Action: 'states:StartExecution', Resource: MACHINE, Condition: { [operator]: { 'states:StateMachineQualifier': 'live' } } })];
    const unqualified = { action: 'states:StartExecution', resource: MACHINE };
    expect(decide(on('StringEquals'), unqualified)).toBe('ImplicitlyDenied');
    expect(decide(on('StringNotEquals'), unqualified)).toBe('Allowed');
    expect(decide(on('StringEqualsIfExists'), unqualified)).toBe('Allowed');
    expect(decide(on('StringEquals'), { ...unqualified, context: { 'States:StateMachineQualifier': 'live' } })).toBe('Allowed'); // key names are case-insensitive
    const absent = [policy({ Effect: 'Allow', Action: 'states:StartExecution', Resource: MACHINE, Condition: { Null: { 'states:StateMachineQualifier': 'true' } } })];
    expect(decide(absent, unqualified)).toBe('Allowed');
    expect(decide(absent, { ...unqualified, context: { 'states:StateMachineQualifier': 'live' } })).toBe('ImplicitlyDenied');
  });
});

describe("Step Functions' authorization of versions and aliases", () => {
  const noToken = () => undefined;

  it("authorizes a start on an alias or a version against the state machine's own ARN, with the qualifier as states:StateMachineQualifier", () => {
    expect(sfnAuthorizationRequest('StartExecution', { stateMachineArn: `${MACHINE}:live` }, noToken)).toEqual({ action: 'states:StartExecution', resource: MACHINE, context: { 'states:StateMachineQualifier': 'live' } });
    expect(sfnAuthorizationRequest('StartExecution', { stateMachineArn: `${MACHINE}:3` }, noToken)).toEqual({ action: 'states:StartExecution', resource: MACHINE, context: { 'states:StateMachineQualifier': '3' } });
    expect(sfnAuthorizationRequest('StartExecution', { stateMachineArn: MACHINE }, noToken)).toEqual({ action: 'states:StartExecution', resource: MACHINE });
  });

  it('so a grant on the alias ARN alone allows no start on the alias, and a grant on the machine allows it', () => {
    const request = sfnAuthorizationRequest('StartExecution', { stateMachineArn: `${MACHINE}:live` }, noToken)!;
    expect(decide([policy({ Effect: 'Allow', Action: 'states:StartExecution', Resource: `${MACHINE}:live` })], request)).toBe('ImplicitlyDenied');
    expect(decide([policy({ Effect: 'Allow', Action: 'states:StartExecution', Resource: MACHINE })], request)).toBe('Allowed');
  });

  it('authorizes execution calls on the execution, callbacks on the state machine whose execution holds the token', () => {
    const execution = `${MACHINE.replace(':stateMachine:', ':execution:')}:run-1`;
    expect(sfnAuthorizationRequest('DescribeExecution', { executionArn: execution }, noToken)).toEqual({ action: 'states:DescribeExecution', resource: execution });
    expect(sfnAuthorizationRequest('SendTaskSuccess', { taskToken: 'AQ1', output: '{}' }, (token) => (token === 'AQ1' ? MACHINE : undefined))).toEqual({ action: 'states:SendTaskSuccess', resource: MACHINE });
    // A token nobody holds: the call fails with the service's own error (TaskDoesNotExist), not an authorization.
    expect(sfnAuthorizationRequest('SendTaskSuccess', { taskToken: 'AQ2', output: '{}' }, noToken)).toBeUndefined();
  });
});

describe('the authorizer remembers its decisions within a bound (issue 26, item 9)', () => {
  const roles = (policies: PolicyDocument[]) => ({ roles: new Map([['Fn', { id: 'Fn', arn: 'arn:aws:iam::000000000000:role/Fn', policies }]]), stepRoles: new Map(), ruleTargets: [] });
  const onlyRuns = policy({ Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: TABLE, Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RUN#*'] } } });
  const get = (leadingKey: string): AuthorizationRequest => ({ action: 'dynamodb:GetItem', resource: TABLE, context: { 'dynamodb:LeadingKeys': [leadingKey] } });
  const caller = { role: 'Fn', session: 'fn' };

  const onlyRunsExecutions = policy({ Effect: 'Allow', Action: 'states:DescribeExecution', Resource: 'arn:aws:states:us-east-1:000000000000:execution:Savepoint-agent:*' });
  const describe_ = (run: string): AuthorizationRequest => ({ action: 'states:DescribeExecution', resource: `arn:aws:states:us-east-1:000000000000:execution:Savepoint-agent:${run}` });
  const elsewhere = (run: string): AuthorizationRequest => ({ action: 'states:DescribeExecution', resource: `arn:aws:states:us-east-1:000000000000:execution:Other:${run}` });

  it('keeps at most MEMO_LIMIT matches per action however many runs name their requests, and decides each the same as before', () => {
    const authorizer = new IamAuthorizer(roles([onlyRuns, onlyRunsExecutions]));
    for (let run = 0; run < 10 * MEMO_LIMIT; run++) {
      // Named in a condition key: decided from the one match kept for the table.
      expect(authorizer.decide(caller, get(`RUN#run-${run}`))).toBe('Allowed');
      expect(authorizer.decide(caller, get(`BREAKER#run-${run}`))).toBe('ImplicitlyDenied');
      // Named in the resource: a match kept per execution, the least recently used forgotten.
      expect(authorizer.decide(caller, describe_(`run-${run}`))).toBe('Allowed');
      expect(authorizer.decide(caller, elsewhere(`run-${run}`))).toBe('ImplicitlyDenied');
    }
    expect(authorizer.remembered).toBe(1 + MEMO_LIMIT);
    // Forgotten is not allowed: an old run's request is decided again, the same way.
    expect(authorizer.decide(caller, get('RUN#run-0'))).toBe('Allowed');
    expect(authorizer.decide(caller, get('BREAKER#run-0'))).toBe('ImplicitlyDenied');
    expect(authorizer.decide(caller, describe_('run-0'))).toBe('Allowed');
    expect(authorizer.decide(caller, elsewhere('run-0'))).toBe('ImplicitlyDenied');
    expect(authorizer.decisions()).toEqual({ allowed: 20 * MEMO_LIMIT + 2, denied: 20 * MEMO_LIMIT + 2 });
  });
});

describe('decisions worked out once per role and request shape (issue 38, item 3)', () => {
  const conditional = policy(
    { Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:PutItem'], Resource: TABLE, Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RUN#*'] } } },
    { Effect: 'Deny', Action: 'dynamodb:PutItem', Resource: TABLE, Condition: { StringEquals: { 'aws:PrincipalTag/frozen': 'yes' } } },
  );
  const put = (context: Record<string, string | string[]>): AuthorizationRequest => ({ action: 'dynamodb:PutItem', resource: TABLE, context });

  it('decides a request whose statements have no condition from the match alone, and one whose statements do from its own keys, as evaluatePolicies does', () => {
    const unconditional = policy({ Effect: 'Allow', Action: 'states:StartExecution', Resource: MACHINE }, { Effect: 'Deny', Action: 'states:StartExecution', Resource: `${MACHINE}-frozen` });
    const evaluate = policyEvaluator([unconditional, conditional]);
    for (const request of [
      { action: 'states:StartExecution', resource: MACHINE },
      { action: 'states:StartExecution', resource: MACHINE, context: { 'states:StateMachineQualifier': 'live' } },
      { action: 'states:StartExecution', resource: `${MACHINE}-frozen` },
      { action: 'states:StopExecution', resource: MACHINE },
      put({ 'dynamodb:LeadingKeys': ['RUN#a'] }),
      put({ 'dynamodb:LeadingKeys': ['GLOBAL'] }),
    ]) {
      for (let again = 0; again < 2; again++) expect(evaluate(request), JSON.stringify(request)).toBe(evaluatePolicies([unconditional, conditional], request));
    }
  });

  it('decides requests of one action and resource by their own condition keys, whichever came first', () => {
    const evaluate = policyEvaluator([conditional]);
    // Values that a naive key (values joined by a comma) would confuse, keys that differ only in
    // case, and a second key that turns an Allow into a Deny: each decided as on its own.
    const requests = [
      put({ 'dynamodb:LeadingKeys': ['RUN#a,b'] }),
      put({ 'dynamodb:LeadingKeys': ['RUN#a', 'b'] }),
      put({ 'dynamodb:LeadingKeys': 'RUN#a' }),
      put({ 'dynamodb:LeadingKeys': ['RUN#a'] }),
      put({ 'dynamodb:LeadingKeys': ['RUN#a'], 'aws:PrincipalTag/frozen': 'yes' }),
      put({ 'DynamoDB:LeadingKeys': ['TOKEN#t'] }),
      put({ 'dynamodb:leadingkeys': ['RUN#a'] }),
      put({}),
    ];
    for (const order of [requests, [...requests].reverse(), [...requests, ...requests]]) {
      const fresh = policyEvaluator([conditional]);
      for (const request of order) {
        expect(fresh(request), JSON.stringify(request.context)).toBe(evaluatePolicies([conditional], request));
        expect(evaluate(request), JSON.stringify(request.context)).toBe(evaluatePolicies([conditional], request));
      }
    }
    expect(evaluate(put({ 'dynamodb:LeadingKeys': ['RUN#a', 'b'] }))).toBe('ImplicitlyDenied');
    expect(evaluate(put({ 'dynamodb:LeadingKeys': ['RUN#a'], 'aws:PrincipalTag/frozen': 'yes' }))).toBe('ExplicitlyDenied');
  });

  it('forgets every kept decision when a deploy replaces the policies: a grant taken away refuses the next call', () => {
    const roles = (policies: PolicyDocument[]) => ({ roles: new Map([['Fn', { id: 'Fn', arn: 'arn:aws:iam::000000000000:role/Fn', policies }]]), stepRoles: new Map(), ruleTargets: [] });
    const authorizer = new IamAuthorizer(roles([conditional, policy({ Effect: 'Allow', Action: 'states:StartExecution', Resource: MACHINE })]));
    const caller = { role: 'Fn', session: 'fn' };
    const run = put({ 'dynamodb:LeadingKeys': ['RUN#r1'] });
    const start = { action: 'states:StartExecution', resource: MACHINE };
    expect(authorizer.decide(caller, run)).toBe('Allowed');
    expect(authorizer.decide(caller, start)).toBe('Allowed');
    authorizer.replace(roles([]));
    expect(authorizer.decide(caller, run)).toBe('ImplicitlyDenied');
    expect(authorizer.decide(caller, start)).toBe('ImplicitlyDenied');
  });
});
