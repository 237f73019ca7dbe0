import { AnyPrincipal, Effect, PolicyDocument, PolicyStatement, StarPrincipal } from 'aws-cdk-lib/aws-iam';
import type { PrincipalDirectory } from '../lambdas/approvals/people.js';

/**
 * The approval API's resource policy: AWS itself keeps everyone but the deployment's people off
 * its signed routes, before the callback runs. How API Gateway decides with IAM authentication and
 * a resource policy ("How API Gateway resource policies affect authorization workflow",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-authorization-flow.html):
 *
 *   any explicit Deny (resource policy or the caller's IAM)             → denied
 *   caller in the API's account: the IAM policy OR the resource policy allows → allowed (Table A)
 *   caller in another account:   the IAM policy AND the resource policy allow → allowed (Table B)
 *   a route without authentication (the page): only an explicit Allow of the resource policy
 *
 * So a route is limited by a Deny for every principal not listed (an Allow alone would add callers,
 * never remove one), and allowed to the listed ones (what a caller in another account needs):
 *
 *   /approvals, /approvals/{id}   approverPrincipals          (none listed: denied to everyone)
 *   POST /runs, POST /runs/{id}/cancel, POST /batches   starterPrincipals, if listed (else the account's IAM decides)
 *   GET /runs, GET /runs/{id}     the account's IAM decides
 *   /decide/{id}                  anyone: the signed link is the credential, checked by the callback
 *
 * The condition key is `aws:PrincipalArn`, the caller's IAM ARN: a user's own, a role's for each of
 * its sessions. It cannot name a session, so an Identity Center session pattern lets in its role
 * here, and the callback holds the session to the person (lambdas/approvals/people.ts).
 */
export function approvalApiPolicy(people: { approverPrincipals: PrincipalDirectory; starterPrincipals?: PrincipalDirectory }): PolicyDocument {
  const statements = [
    new PolicyStatement({
      sid: 'ApprovalPageIsOpen',
      effect: Effect.ALLOW,
      principals: [new StarPrincipal()],
      actions: ['execute-api:Invoke'],
      resources: ['execute-api:/*/GET/decide/*', 'execute-api:/*/POST/decide/*'],
    }),
    ...only('Approvers', ['execute-api:/*/*/approvals', 'execute-api:/*/*/approvals/*'], people.approverPrincipals),
    ...(people.starterPrincipals ? only('Starters', ['execute-api:/*/POST/runs', 'execute-api:/*/POST/runs/*/cancel', 'execute-api:/*/POST/batches'], people.starterPrincipals) : []),
  ];
  return new PolicyDocument({ statements });
}

/** Allow the directory's principals on `resources`, deny everyone else. */
function only(who: string, resources: string[], directory: PrincipalDirectory): PolicyStatement[] {
  const arns = [...new Set(Object.values(directory).flatMap((patterns) => patterns.flatMap(principalArnsOf)))].sort();
  const invoke = { actions: ['execute-api:Invoke'], principals: [new AnyPrincipal()], resources };
  if (arns.length === 0) return [new PolicyStatement({ sid: `Only${who}`, effect: Effect.DENY, ...invoke })];
  return [
    new PolicyStatement({ sid: `${who}`, effect: Effect.ALLOW, ...invoke, conditions: { ArnLike: { 'aws:PrincipalArn': arns } } }),
    new PolicyStatement({ sid: `Only${who}`, effect: Effect.DENY, ...invoke, conditions: { ArnNotLike: { 'aws:PrincipalArn': arns } } }),
  ];
}

/**
 * The `aws:PrincipalArn` values a principal pattern stands for: a user or role ARN itself; for an
 * Identity Center session, its role, which IAM Identity Center creates under the path
 * `/aws-reserved/sso.amazonaws.com/` (and, in some accounts, a region below it).
 */
export function principalArnsOf(pattern: string): string[] {
  const session = /^arn:(aws[\w-]*):sts::(\d{12}):assumed-role\/([^/]+)\/.+$/.exec(pattern);
  if (!session) return [pattern];
  const [, partition, account, role] = session;
  const base = `arn:${partition}:iam::${account}:role/aws-reserved/sso.amazonaws.com`;
  return [`${base}/${role}`, `${base}/*/${role}`];
}
