/**
 * The twin's IAM: each call a local function (or the state machine, or a rule's target) makes is
 * decided against its own role's policies from the synthesized template, and a denial fails as
 * AWS fails it. Every decision is counted, so that a caller can show that enforcement was on and
 * what it refused (`IamAuthorizer.decisions()`).
 */
import { LOCAL_ACCOUNT } from './deployment.js';
import { policyEvaluator, type AuthorizationRequest, type Decision, type PolicyEvaluator } from './policy.js';
import { combine, type Principal, type Verdict } from './resource-policies.js';
import type { StackRoles } from './roles.js';

export interface IamDecisions {
  allowed: number;
  denied: number;
}

/** What AWS answers a refused call: error code AccessDeniedException, HTTP 403. */
export class AccessDeniedError extends Error {
  readonly statusCode = 403;
  constructor(message: string) {
    super(message);
    this.name = 'AccessDeniedException';
  }
}

/**
 * Who makes a call: a role of the template, with the session name AWS gives it (a Lambda
 * function's own name; a random one for Step Functions and EventBridge), or the account's
 * administrator — the person at the CLI, who on AWS would hold AdministratorAccess.
 */
export type Caller = { readonly role: string; readonly session: string } | { readonly administrator: true };

/**
 * What each role's evaluator keeps, per action: the statements that match the action on its
 * MEMO_LIMIT most recently used resources (policy.ts `policyEvaluator`). A run's requests name it
 * in their condition keys (`dynamodb:LeadingKeys` `RUN#<id>`), which nothing keeps, and some in
 * their resource (its execution's ARN), which is kept: a finished run's resources leave once
 * MEMO_LIMIT newer ones have taken their place, instead of staying.
 */
export const MEMO_LIMIT = 256;

export class IamAuthorizer {
  #roles: StackRoles;
  readonly #counts: IamDecisions = { allowed: 0, denied: 0 };
  readonly #byAction = new Map<string, IamDecisions>();
  readonly #listeners = new Set<(caller: Caller, request: AuthorizationRequest, decision: Decision) => void>();
  /**
   * Each role's policies, ready to decide: which statements match an action on a resource worked
   * out once, the conditions evaluated on every request (a decision is a pure function of the
   * policies and the request). Made again on a deploy, whose policies replace the old.
   */
  #evaluators = new Map<string, PolicyEvaluator>();

  constructor(roles: StackRoles) {
    this.#roles = roles;
  }

  get roles(): StackRoles {
    return this.#roles;
  }

  /** A deploy: the new template's roles and policies replace the old ones, for every caller at once. */
  replace(roles: StackRoles): void {
    this.#roles = roles;
    this.#evaluators = new Map();
  }

  /** The decision, counted. */
  decide(caller: Caller, request: AuthorizationRequest): Decision {
    return this.#verdict(caller, request).decision;
  }

  /**
   * The caller's identity policies' decision, combined with the resource's own policy when it has
   * one (a KMS key policy, a secret's resource policy: resource-policies.ts), counted.
   */
  #verdict(caller: Caller, request: AuthorizationRequest): Verdict {
    const identity = 'administrator' in caller ? 'Allowed' : this.#evaluate(caller.role, request);
    const policy = this.#roles.resourcePolicies?.get(request.resource);
    const verdict: Verdict = policy ? combine(policy, identity, this.#principal(caller), request) : { decision: identity, by: 'identity' };
    const decision = verdict.decision;
    let counts = this.#byAction.get(request.action);
    if (!counts) this.#byAction.set(request.action, (counts = { allowed: 0, denied: 0 }));
    const outcome = decision === 'Allowed' ? 'allowed' : 'denied';
    this.#counts[outcome]++;
    counts[outcome]++;
    for (const listener of this.#listeners) listener(caller, request, decision);
    return verdict;
  }

  /** Who calls, as a resource policy names principals: a role (and its session), or the administrator (a user of the account). */
  #principal(caller: Caller): Principal {
    if ('administrator' in caller) return { arn: `arn:aws:iam::${LOCAL_ACCOUNT}:user/administrator` };
    const role = this.#roles.roles.get(caller.role);
    return { arn: role?.arn ?? caller.role, sessionArn: `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${role?.id ?? caller.role}/${caller.session}` };
  }

  #evaluate(role: string, request: AuthorizationRequest): Decision {
    let evaluate = this.#evaluators.get(role);
    if (evaluate === undefined) this.#evaluators.set(role, (evaluate = policyEvaluator(this.#roles.roles.get(role)?.policies ?? [], MEMO_LIMIT)));
    return evaluate(request);
  }

  /** Throws AccessDeniedException, worded as AWS words it, unless the caller's policies allow the request. */
  authorize(caller: Caller, request: AuthorizationRequest): void {
    const verdict = this.#verdict(caller, request);
    if (verdict.decision !== 'Allowed') throw new AccessDeniedError(deniedMessage(this.#roles, caller, request, verdict));
  }

  /** Tells `listener` of every decision from now on (what a test checks the requests themselves with); returns the unsubscribe. */
  onDecision(listener: (caller: Caller, request: AuthorizationRequest, decision: Decision) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** How many (action, resource) matches are kept, over every role (at most MEMO_LIMIT per role and action, whatever the number of runs). */
  get remembered(): number {
    let kept = 0;
    for (const evaluate of this.#evaluators.values()) kept += evaluate.kept();
    return kept;
  }

  /** How many calls were allowed and denied since this authorizer was made. */
  decisions(): IamDecisions {
    return { ...this.#counts };
  }

  /** The same, by action (`dynamodb:GetItem`, `kms:VerifyMac`, …), sorted by action. */
  decisionsByAction(): Record<string, IamDecisions> {
    return Object.fromEntries([...this.#byAction].sort(([a], [b]) => a.localeCompare(b)).map(([action, counts]) => [action, { ...counts }]));
  }
}

/**
 * "User: arn:aws:sts::…:assumed-role/ROLE/SESSION is not authorized to perform: ACTION on resource:
 * ARN because no identity-based policy allows the ACTION action" (or "with an explicit deny in an
 * identity-based policy"), as AWS reports it.
 */
function deniedMessage(roles: StackRoles, caller: Caller, request: AuthorizationRequest, verdict: Verdict): string {
  const who = 'role' in caller ? `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${roles.roles.get(caller.role)?.id ?? caller.role}/${caller.session}` : 'administrator';
  const kind = verdict.by === 'resource' ? 'resource-based' : 'identity-based';
  const why = verdict.decision === 'ExplicitlyDenied' ? `with an explicit deny in ${kind === 'identity-based' ? 'an' : 'a'} ${kind} policy` : `because no ${kind} policy allows the ${request.action} action`;
  return `User: ${who} is not authorized to perform: ${request.action} on resource: ${request.resource} ${why}`;
}
