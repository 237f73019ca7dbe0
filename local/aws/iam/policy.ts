/**
 * An IAM identity-policy evaluator for the statement shapes a synthesized savepoint app uses,
 * following AWS's documented evaluation logic for a request within one account
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html):
 *
 *   an explicit Deny in any statement that applies  → denied (it overrides every Allow)
 *   else an Allow in any statement that applies     → allowed
 *   else                                            → denied (implicit deny)
 *
 * A statement applies when its Action (or NotAction), its Resource (or NotResource) and every
 * condition of its Condition block match the request. Written here rather than taken from the
 * registry: the maintained simulator (`@cloud-copilot/iam-simulate`) is AGPL-3.0, which a user's
 * company cannot ship, and the MIT alternatives are unmaintained. The simulator is this module's
 * differential test oracle instead (test/iam/oracle.test.ts, a devDependency, never imported here).
 *
 * Resource-based policies (KMS key policies, secrets' policies) are combined with this decision in
 * resource-policies.ts. Not evaluated, because the twin's requests never meet them:
 * permissions boundaries, session policies, SCPs/RCPs, Principal/NotPrincipal (trust policies are
 * not identity policies), and policy variables (`${aws:username}`).
 */

import { RecentMap } from '../../../lambdas/shared/recent-map.js';

export type Effect = 'Allow' | 'Deny';

/** One value or a list of them, as IAM's JSON allows. */
export type OneOrMore<T> = T | readonly T[];

export interface Statement {
  readonly Sid?: string;
  readonly Effect: Effect;
  readonly Action?: OneOrMore<string>;
  readonly NotAction?: OneOrMore<string>;
  readonly Resource?: OneOrMore<string>;
  readonly NotResource?: OneOrMore<string>;
  /** operator → condition key → value(s) */
  readonly Condition?: Readonly<Record<string, Readonly<Record<string, OneOrMore<string | number | boolean>>>>>;
}

export interface PolicyDocument {
  readonly Version?: string;
  readonly Statement: OneOrMore<Statement>;
}

export interface AuthorizationRequest {
  /** `service:Operation`, e.g. `states:StartExecution`. */
  readonly action: string;
  /** The resource's ARN, as the service authorizes it. */
  readonly resource: string;
  /** Condition keys of the request (names case-insensitive); a multivalued key is an array. */
  readonly context?: Readonly<Record<string, string | readonly string[]>>;
}

export type Decision = 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';

/** The decision over all of a principal's identity policies (the union of their statements). */
export function evaluatePolicies(policies: readonly PolicyDocument[], request: AuthorizationRequest): Decision {
  let allowed = false;
  for (const policy of policies) {
    for (const statement of list(policy.Statement)) {
      if (!applies(statement, request)) continue;
      if (statement.Effect === 'Deny') return 'ExplicitlyDenied';
      allowed = true;
    }
  }
  return allowed ? 'Allowed' : 'ImplicitlyDenied';
}

/**
 * The same decisions as `evaluatePolicies`, from policies that do not change, worked out once per
 * request shape instead of once per request. Which statements match an action on a resource is
 * worked out once per (action, resource) and kept; when none of them has a Condition, that is the
 * decision, kept with them: such a request is a lookup. Otherwise the decision also depends on the
 * request's condition keys, and the Condition blocks of those statements (each parsed once, its
 * tests compiled) are tested against them: a key made of the request's condition-key values, to
 * keep those decisions too, cost twice the test itself (0.82 µs a decision against 0.40, measured
 * on the ledger's requests, whose `dynamodb:LeadingKeys` name a run). A deploy replaces the
 * policies, and the authorizer makes a new evaluator then (authorizer.ts `replace`), so nothing
 * kept outlives the policies it came from. `limit` bounds the matches kept per action (resources
 * name executions): the least recently used go first.
 */
export function policyEvaluator(policies: readonly PolicyDocument[], limit = 256): PolicyEvaluator {
  const statements = policies.flatMap((policy) => list(policy.Statement));
  // By action, then resource: the strings are the callers' own (literals, a table's ARN), whose hashes V8 keeps.
  const matching = new Map<string, RecentMap<string, Match>>();
  const evaluate = (request: AuthorizationRequest): Decision => {
    let byResource = matching.get(request.action);
    if (byResource === undefined) matching.set(request.action, (byResource = new RecentMap(limit)));
    const match = byResource.getOrSet(request.resource, () => matchOf(statements.filter((statement) => actionAndResourceMatch(statement, request))));
    return match.decision ?? decideConditions(match.candidates, request.context ?? {});
  };
  return Object.assign(evaluate, { kept: () => [...matching.values()].reduce((sum, byResource) => sum + byResource.size, 0) });
}

/** The statements that match an action on a resource: the decision itself when none has a Condition. */
type Match = { readonly decision: Decision; readonly candidates?: undefined } | { readonly decision?: undefined; readonly candidates: readonly Statement[] };

function matchOf(candidates: readonly Statement[]): Match {
  return candidates.every((statement) => statement.Condition === undefined) ? { decision: decideConditions(candidates, {}) } : { candidates };
}

/** The decision over the statements that match the action and resource, their Condition blocks tested against the request's keys (in order, as `evaluatePolicies` does). */
function decideConditions(candidates: readonly Statement[], context: Context): Decision {
  let allowed = false;
  for (const statement of candidates) {
    if (statement.Condition !== undefined && !conditionsMatch(statement.Condition, context)) continue;
    if (statement.Effect === 'Deny') return 'ExplicitlyDenied';
    allowed = true;
  }
  return allowed ? 'Allowed' : 'ImplicitlyDenied';
}

/** A role's decisions (`policyEvaluator`), and how many (action, resource) matches it keeps. */
export type PolicyEvaluator = ((request: AuthorizationRequest) => Decision) & { kept(): number };

function applies(statement: Statement, request: AuthorizationRequest): boolean {
  return actionAndResourceMatch(statement, request) && conditionsMatch(statement.Condition ?? {}, request.context ?? {});
}

function actionAndResourceMatch(statement: Statement, request: AuthorizationRequest): boolean {
  const actionMatches =
    statement.Action !== undefined
      ? list(statement.Action).some((pattern) => matchesAction(pattern, request.action))
      : statement.NotAction !== undefined && !list(statement.NotAction).some((pattern) => matchesAction(pattern, request.action));
  if (!actionMatches) return false;
  const resourceMatches =
    statement.Resource !== undefined
      ? list(statement.Resource).some((pattern) => matchesArn(pattern, request.resource))
      : statement.NotResource !== undefined && !list(statement.NotResource).some((pattern) => matchesArn(pattern, request.resource));
  return resourceMatches;
}

// ---- actions and resources ------------------------------------------------------------------

/** Action names are case-insensitive; `*` and `?` are wildcards. */
function matchesAction(pattern: string, action: string): boolean {
  return glob(pattern.toLowerCase(), action.toLowerCase());
}

/**
 * ARN matching as IAM does it: `*` alone matches everything; otherwise the partition, service,
 * region and account segments match one by one (a wildcard does not cross their colons), and the
 * resource part — everything after the fifth colon — matches as a whole, so a `*` there spans
 * `:` and `/` (`execution:Machine:*` matches every execution of Machine). Case-sensitive.
 */
export function matchesArn(pattern: string, arn: string): boolean {
  if (pattern === '*') return true;
  const p = splitArn(pattern);
  const a = splitArn(arn);
  if (!p || !a) return glob(pattern, arn);
  for (let i = 0; i < 5; i++) if (!glob(p[i]!, a[i]!)) return false;
  return glob(p[5]!, a[5]!);
}

/** `arn:partition:service:region:account:resource` → its six parts (the resource may hold colons). */
function splitArn(arn: string): string[] | undefined {
  const parts = arn.split(':');
  if (parts.length < 6) return undefined;
  return [...parts.slice(0, 5), parts.slice(5).join(':')];
}

/** `*` any run of characters, `?` any one character, everything else literal. */
function glob(pattern: string, text: string): boolean {
  if (!pattern.includes('*') && !pattern.includes('?')) return pattern === text;
  let compiled = globs.get(pattern);
  if (compiled === undefined) {
    if (globs.size >= 10_000) globs.clear();
    globs.set(pattern, (compiled = new RegExp(`^${globSource(pattern)}$`)));
  }
  return compiled.test(text);
}

/** A wildcard pattern as the source of an expression: `*` any run of characters, `?` any one, everything else literal. */
function globSource(pattern: string): string {
  return pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[\\s\\S]*').replace(/\?/g, '[\\s\\S]');
}

/** Each wildcard pattern's expression, compiled once: the patterns are the policies' (and a StringLike's values), few and reused. */
const globs = new Map<string, RegExp>();

// ---- conditions -------------------------------------------------------------------------------

type Context = Readonly<Record<string, string | readonly string[]>>;

/** Every operator, and every key within it, must match (AND); a key's listed values are ORed. */
function conditionsMatch(condition: NonNullable<Statement['Condition']>, context: Context): boolean {
  let tests = conditionTests.get(condition);
  if (tests === undefined) {
    const compiled = Object.entries(condition).flatMap(([operator, keys]) => Object.entries(keys).map(([key, expected]) => ({ key: key.toLowerCase(), test: conditionTest(operator, list(expected).map(String)) })));
    conditionTests.set(condition, (tests = compiled));
  }
  for (const { key, test } of tests) if (!test(valueOf(context, key))) return false;
  return true;
}

/** Each Condition block's tests, parsed once: policies do not change, their requests do. */
const conditionTests = new WeakMap<object, readonly { key: string; test: (actual: string | readonly string[] | undefined) => boolean }[]>();

/** The request's value of a condition key, whose names are case-insensitive (the last of two spellings, as a map of them would keep). */
function valueOf(context: Context, lowered: string): string | readonly string[] | undefined {
  let value: string | readonly string[] | undefined;
  for (const key in context) if (Object.hasOwn(context, key) && lowerCase(key) === lowered) value = context[key];
  return value;
}

/** A condition key's name in lower case, worked out once per name (requests name the same few keys). */
function lowerCase(key: string): string {
  let lowered = lowerCased.get(key);
  if (lowered === undefined) {
    if (lowerCased.size >= 1_000) lowerCased.clear();
    lowerCased.set(key, (lowered = key.toLowerCase()));
  }
  return lowered;
}
const lowerCased = new Map<string, string>();

/** One operator's test of one key against its expected values (an unsupported operator throws when it is tested, not before). */
function conditionTest(operatorName: string, expected: string[]): (actual: string | readonly string[] | undefined) => boolean {
  let name = operatorName;
  let set: 'ForAllValues' | 'ForAnyValue' | undefined;
  const qualifier = /^(ForAllValues|ForAnyValue):(.+)$/.exec(name);
  if (qualifier) {
    set = qualifier[1] as 'ForAllValues' | 'ForAnyValue';
    name = qualifier[2]!;
  }
  const ifExists = name.endsWith('IfExists');
  if (ifExists) name = name.slice(0, -'IfExists'.length);
  if (name === 'Null') {
    // Null: true tests that the key is absent, false that it is present.
    return (actual) => {
      const absent = actual === undefined || (Array.isArray(actual) && actual.length === 0);
      return expected.some((value) => (value === 'true') === absent);
    };
  }
  const operator = OPERATORS[name];
  if (!operator) {
    return () => {
      throw new Error(`IAM condition operator ${operatorName} is not supported by the local evaluator`);
    };
  }
  // StringLike's listed values as one expression, matched when one of them matches (a request's
  // `dynamodb:LeadingKeys` are each tested once, not once per partition a role may reach).
  const like = operator.test === stringLike && expected.length > 0 ? new RegExp(`^(?:${expected.map(globSource).join('|')})$`) : undefined;
  // A negated operator negates per value.
  const matchOne = like
    ? (value: string) => like.test(value) !== operator.negated
    : (value: string) => (operator.negated ? !expected.some((e) => operator.test(value, e)) : expected.some((e) => operator.test(value, e)));
  if (set) {
    // ForAllValues holds when every value of the request matches (vacuously when there are none);
    // ForAnyValue when at least one does.
    return (actual) => {
      const values = actual === undefined ? [] : list(actual);
      return set === 'ForAllValues' ? values.every(matchOne) : values.some(matchOne);
    };
  }
  return (actual) => {
    if (actual === undefined) return ifExists || operator.negated;
    // A single-valued operator never matches a multivalued key (use ForAllValues/ForAnyValue for those),
    // negated or not, with IfExists or not: the key is there, and it is not one value.
    if (Array.isArray(actual)) return false;
    return matchOne(actual as string);
  };
}

interface Operator {
  /** The positive test; a negated operator (StringNotEquals, …) is true when no value passes it. */
  test(actual: string, expected: string): boolean;
  negated: boolean;
}

const stringEquals = (a: string, e: string) => a === e;
const stringEqualsIgnoreCase = (a: string, e: string) => a.toLowerCase() === e.toLowerCase();
const stringLike = (a: string, e: string) => glob(e, a);
const numeric = (compare: (a: number, e: number) => boolean) => (a: string, e: string) => {
  const x = Number(a);
  const y = Number(e);
  return !Number.isNaN(x) && !Number.isNaN(y) && compare(x, y);
};

const OPERATORS: Record<string, Operator> = {
  StringEquals: { test: stringEquals, negated: false },
  StringNotEquals: { test: stringEquals, negated: true },
  StringEqualsIgnoreCase: { test: stringEqualsIgnoreCase, negated: false },
  StringNotEqualsIgnoreCase: { test: stringEqualsIgnoreCase, negated: true },
  StringLike: { test: stringLike, negated: false },
  StringNotLike: { test: stringLike, negated: true },
  ArnEquals: { test: matchesArnCondition, negated: false },
  ArnLike: { test: matchesArnCondition, negated: false },
  ArnNotEquals: { test: matchesArnCondition, negated: true },
  ArnNotLike: { test: matchesArnCondition, negated: true },
  Bool: { test: (a, e) => a.toLowerCase() === e.toLowerCase(), negated: false },
  NumericEquals: { test: numeric((a, e) => a === e), negated: false },
  NumericNotEquals: { test: numeric((a, e) => a === e), negated: true },
  NumericLessThan: { test: numeric((a, e) => a < e), negated: false },
  NumericLessThanEquals: { test: numeric((a, e) => a <= e), negated: false },
  NumericGreaterThan: { test: numeric((a, e) => a > e), negated: false },
  NumericGreaterThanEquals: { test: numeric((a, e) => a >= e), negated: false },
};

/** ArnEquals and ArnLike behave the same (both take wildcards), segment by segment. */
function matchesArnCondition(actual: string, expected: string): boolean {
  return splitArn(actual) !== undefined && matchesArn(expected, actual);
}

function list<T>(value: OneOrMore<T>): readonly T[] {
  return Array.isArray(value) ? (value as readonly T[]) : [value as T];
}
